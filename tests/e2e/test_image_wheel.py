"""What the image installs, without a container daemon: the wheel built from the image's build
context alone (the files `.dockerignore` lets through, by Docker's own matching rules), installed
with its run-time dependencies at the image's pins (`pip install -c deploy/requirements.lock`, as
deploy/Dockerfile does) in a fresh virtual environment that sees nothing else: no test tools, no
lab extra. That is also the base install a person gets, so its commands are tried here as a
person runs them: `kashgar serve` serves the table and a search, and `kashgar review` shows its
progress on a terminal (a pseudo-terminal) and on a pipe.

The venv is made with the running interpreter, inside a venv or not, so the test passes both ways."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import struct
import subprocess
import sys
import termios
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from docker.utils.build import exclude_paths

from engine_ext import record as records
from lab.serving import free_port, wait_until
from tests.builders import random_record

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


def _env(tmp: Path) -> dict[str, str]:
    """The environment of a person's shell: none of the test run's KASHGAR_ settings or venv."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KASHGAR_", "PYTHON")) and k != "VIRTUAL_ENV"}
    env.update(KASHGAR_LOG_LEVEL="WARNING", KASHGAR_DATA_DIR=str(tmp / "data"))
    return env


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("image")
    context, wheels, venv = tmp / "context", tmp / "wheels", tmp / "venv"
    context.mkdir()
    _context(context)
    assert not list(context.rglob("*.so"))  # built here, from the sources alone
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(wheels), str(context)], check=True, timeout=600)
    (wheel,) = wheels.glob("kashgar_ai-*.whl")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", "-c",
                    str(ROOT / "deploy" / "requirements.lock"), str(wheel)], check=True, timeout=600)
    where = subprocess.run([str(py), "-c", "import service, engine_ext; print(service.__file__); "
                            "print(engine_ext.compiled_available())"], cwd=tmp, capture_output=True,
                           text=True, check=True).stdout.split()
    assert where[0].startswith(str(venv)) and where[1] == "True", where  # the wheel's, compiled
    return venv


def test_the_venv_holds_the_base_install_alone(venv: Path) -> None:
    """No test tool or extra leaked in: what follows runs on what `pip install` of the package gives."""
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
                            capture_output=True, text=True, check=True).stdout
    names = {d["name"].lower() for d in json.loads(listed)}
    assert {"kashgar-ai", "flask", "gunicorn", "tqdm"} <= names
    assert not names & {"pytest", "numpy", "scipy", "hypothesis", "playwright"}, names


def test_the_wheel_built_from_the_image_context_serves_in_a_fresh_venv(venv: Path, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen([str(venv / "bin" / "kashgar"), "serve", "--port", str(port)], cwd=tmp_path,
                            env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


@pytest.fixture(scope="module")
def record_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole 2-player game's record, played by the random bot (any record will do: the review
    searches each decision from its seat's view)."""
    path = tmp_path_factory.mktemp("record") / "game.json"
    records.save(random_record(44, 40, rng_seed=4), path)
    return path


def _on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[int, str]:
    """Run a command with stdin, stdout and stderr on a pseudo-terminal, as a shell would: its
    exit status and all it wrote."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # 30 rows, 100 columns
    proc = subprocess.Popen(argv, cwd=cwd, env={**env, "TERM": "xterm"}, stdin=follower,
                            stdout=follower, stderr=follower, close_fds=True)
    os.close(follower)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the follower closed: the command is done
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
        return proc.wait(max(1.0, deadline - time.monotonic())), out.decode(errors="replace")
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)


def test_review_shows_a_bar_and_a_table_on_a_terminal(venv: Path, record_file: Path, tmp_path: Path) -> None:
    status, out = _on_a_terminal([str(venv / "bin" / "kashgar"), "review", str(record_file), "--level", "novice"],
                                 tmp_path, _env(tmp_path), timeout=300)
    assert status == 0, out
    assert "Traceback" not in out and "Error" not in out, out
    assert re.search(r"review: +100%\|.*\| *\d+/\d+ \[", out), out  # tqdm's bar, to its end
    assert "Review at novice:" in out and "accuracy" in out, out


def test_review_on_a_pipe_writes_plain_progress_lines(venv: Path, record_file: Path, tmp_path: Path) -> None:
    proc = subprocess.run([str(venv / "bin" / "kashgar"), "review", str(record_file), "--level", "novice"],
                          cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Review at novice:")
    lines = [x for x in proc.stderr.splitlines() if x.startswith("review: ")]
    assert lines and "\r" not in proc.stderr, proc.stderr
    assert lines[-1].split()[1] == lines[-1].split()[3], lines  # the last line counts every decision


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

