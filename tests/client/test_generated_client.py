"""A client generated from the service's own OpenAPI document by openapi-python-client (the usual
Python generator) imports and plays a whole game through `/games`, `/legal`, `/apply` and
`/suggest` on a real server: the document is one a generated client can play from (its
cross-field rules are where generators merge them, inside `allOf`).

The client is installed, with what its generated metadata asks for (httpx, attrs, and theirs),
into a virtual environment of its own, made here without pip and without this project or the
test environment's packages on its path, and the game is played by that environment's Python: what
works is what a user who generates the client gets. The wheels are made from the distributions
installed here (all pure Python), so nothing is downloaded."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
import urllib.request
import zipfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

BIN = Path(sys.executable).parent
GENERATOR = shutil.which("openapi-python-client") or str(BIN / "openapi-python-client")
CONFIG = "project_name_override: kashgar-generated\npackage_name_override: kashgar_generated\n"

# Played by the generated client's own environment: argv[1] is the server. Prints what it found.
GAME = r'''
import importlib, importlib.util, json, sys

import httpx

from kashgar_generated import Client
from kashgar_generated.api.rules import apply, legal, new_game
from kashgar_generated.api.search import suggest
from kashgar_generated.models import (ApplyRequest, ApplyResponse, GameResponse, LegalRequest, LegalResponse,
                                      NewGameRequest, SuggestRequest, SuggestResponse)

client = Client(base_url=sys.argv[1], timeout=60)
game = new_game.sync(client=client, body=NewGameRequest(players=2, seed=11))
assert isinstance(game, GameResponse) and not game.is_terminal, game
state, decisions = game.state, 0
while True:
    now = legal.sync(client=client, body=LegalRequest(state=state))
    assert isinstance(now, LegalResponse), now
    if now.is_terminal:
        break
    answer = suggest.sync(client=client, body=SuggestRequest(state=state, level="novice", seed=decisions))
    assert isinstance(answer, SuggestResponse), answer
    assert answer.decision_text in {d.text for d in now.legal}, answer.decision_text
    applied = apply.sync(client=client, body=ApplyRequest(state=state, decision=answer.decision_text))
    assert isinstance(applied, ApplyResponse), applied
    state, decisions = applied.state, decisions + 1
    assert decisions < 1000
print(json.dumps({"decisions": decisions, "final": state.to_dict(), "prefix": sys.prefix,
                  "base_prefix": sys.base_prefix, "httpx": httpx.__file__,
                  "found": {name: importlib.util.find_spec(name) is not None
                            for name in ("service", "kashgar_client", "engine_ext", "pytest", "flask")}}))
'''


def _wheel(folder: Path, name: str, version: str, dist_info: str, files: Iterable[tuple[str, bytes]]) -> Path:
    """A pure-Python wheel of `files` (archive name, content), its RECORD written."""
    path = folder / f"{canonicalize_name(name).replace('-', '_')}-{version}-py3-none-any.whl"
    record = []
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in files:
            zf.writestr(arcname, data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            record.append(f"{arcname},sha256={digest},{len(data)}")
        zf.writestr(f"{dist_info}/RECORD", "\n".join([*record, f"{dist_info}/RECORD,,"]) + "\n")
    return path


def _installed_wheel(folder: Path, dist: metadata.Distribution) -> Path:
    """A wheel of a distribution installed here, from the files its RECORD lists (no scripts:
    pip writes them again from entry_points.txt)."""
    files = [f for f in dist.files or [] if not str(f).startswith("..") and "__pycache__" not in f.parts
             and not (f.parent.name.endswith(".dist-info") and f.name in ("RECORD", "INSTALLER", "REQUESTED",
                                                                          "direct_url.json"))]
    dist_info = next(f.parts[0] for f in files if f.parts[0].endswith(".dist-info"))
    return _wheel(folder, dist.metadata["Name"], dist.version, dist_info,
                  ((f.as_posix(), Path(str(dist.locate_file(f))).read_bytes()) for f in files))


def _dependency_wheels(folder: Path, requirements: list[str]) -> list[str]:
    """Wheels of the installed distributions that `requirements` need, theirs too; their names."""
    todo, done = [Requirement(r) for r in requirements], {}
    while todo:
        req = todo.pop()
        key = canonicalize_name(req.name)
        if key in done or (req.marker is not None and not req.marker.evaluate({"extra": ""})):
            continue
        dist = metadata.distribution(req.name)
        assert dist.version in req.specifier, f"{req} wanted, {dist.version} installed"
        done[key] = _installed_wheel(folder, dist)
        todo += [Requirement(r) for r in dist.requires or []]
    return sorted(done)


def _client_wheel(folder: Path, project: Path) -> tuple[str, list[str]]:
    """The generated client as a wheel, with the metadata its pyproject.toml gives (its name,
    version, dependencies): (its name, its dependencies)."""
    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version, needs = meta["name"], meta["version"], list(meta.get("dependencies", []))
    dist_info = f"{canonicalize_name(name).replace('-', '_')}-{version}.dist-info"
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
             f"Requires-Python: {meta.get('requires-python', '>=3')}", *[f"Requires-Dist: {r}" for r in needs]]
    package = project / "kashgar_generated"
    files = [(p.relative_to(project).as_posix(), p.read_bytes()) for p in sorted(package.rglob("*"))
             if p.is_file() and "__pycache__" not in p.parts]
    files += [(f"{dist_info}/METADATA", ("\n".join(lines) + "\n").encode()),
              (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: kashgar-tests\nRoot-Is-Purelib: true\n"
                                     b"Tag: py3-none-any\n")]
    _wheel(folder, name, version, dist_info, files)
    return name, needs


def test_a_generated_client_plays_a_whole_game_in_a_venv_of_its_own(service_url: str, tmp_path: Path) -> None:
    with urllib.request.urlopen(service_url + "/openapi.json", timeout=30) as resp:
        (tmp_path / "openapi.json").write_bytes(resp.read())
    (tmp_path / "config.yaml").write_text(CONFIG, encoding="utf-8")
    project = tmp_path / "kashgar-generated"
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}  # its ruff, found
    proc = subprocess.run([GENERATOR, "generate", "--path", str(tmp_path / "openapi.json"), "--output-path",
                           str(project), "--meta", "pdm", "--config", str(tmp_path / "config.yaml")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr  # no schema dropped

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    name, needs = _client_wheel(wheels, project)
    assert {canonicalize_name(Requirement(r).name) for r in needs} >= {"httpx", "attrs"}, needs
    _dependency_wheels(wheels, needs)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    alone = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    # this environment's pip installs into that one (`--python`), from the wheels alone
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-index",
                           "--find-links", str(wheels), "--no-cache-dir", "--disable-pip-version-check", name],
                          capture_output=True, text=True, timeout=300, env=alone)
    assert proc.returncode == 0, proc.stdout + proc.stderr

    (tmp_path / "game.py").write_text(GAME, encoding="utf-8")
    proc = subprocess.run([str(python), "game.py", service_url], capture_output=True, text=True, timeout=600,
                          cwd=tmp_path, env=alone)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    played = json.loads(proc.stdout.strip().splitlines()[-1])
    # its own environment: neither this project nor the test environment's packages on its path
    assert Path(played["prefix"]) == venv and Path(played["httpx"]).is_relative_to(venv), played
    assert not any(played["found"].values()), played["found"]
    final = played["final"]
    assert final["game_over"] is True and played["decisions"] > 20
