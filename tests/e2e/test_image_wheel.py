"""What the image installs, without a container daemon: the wheel built from the image's build
context alone (the files `.dockerignore` lets through, by Docker's own matching rules), installed
in a fresh virtual environment, serves the web table's page and a search from `kashgar serve`.
The venv sees this machine's packages for the dependencies (they are what the tests run with);
the package itself comes from the wheel, which the test checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from docker.utils.build import exclude_paths

from lab.serving import free_port, wait_until

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _context(into: Path) -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [x.strip() for x in lines if x.strip() and not x.lstrip().startswith("#")]
    for rel in exclude_paths(str(ROOT), patterns, dockerfile="deploy/Dockerfile"):
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, into / rel)
        elif src.is_symlink():
            (into / rel).parent.mkdir(parents=True, exist_ok=True)
            (into / rel).symlink_to(os.readlink(src))


def test_the_wheel_built_from_the_image_context_serves_in_a_fresh_venv(tmp_path: Path) -> None:
    context, wheels, venv = tmp_path / "context", tmp_path / "wheels", tmp_path / "venv"
    context.mkdir()
    _context(context)
    assert not list(context.rglob("*.so"))  # built here, from the sources alone
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(context)], check=True, timeout=600)
    (wheel,) = wheels.glob("kashgar_ai-*.whl")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   timeout=300)
    where = subprocess.run([str(py), "-c", "import service, engine_ext; print(service.__file__); "
                            "print(engine_ext.compiled_available())"], cwd=tmp_path, capture_output=True,
                           text=True, check=True).stdout.split()
    assert where[0].startswith(str(venv)) and where[1] == "True", where  # the wheel's, compiled
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("KASHGAR_")}
    env.update(KASHGAR_LOG_LEVEL="WARNING", KASHGAR_DATA_DIR=str(tmp_path / "data"))
    proc = subprocess.Popen([str(venv / "bin" / "kashgar"), "serve", "--port", str(port)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _get(url + "/healthz")[0] == 200, 60, interval=0.2, what="kashgar serve from the wheel")
        status, page = _get(url + "/")
        assert status == 200 and "table.js" in page
        status, game = _post(url + "/games", {"players": 2, "seed": 3, "observer": 0})
        assert status == 200
        status, answer = _post(url + "/suggest", {"state": game["state"], "level": "novice", "seed": 1})
        assert status == 200 and answer["decision_text"] and answer["compiled"] is True, answer
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except OSError:
        return 0, ""


def _post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.status, json.loads(resp.read())
