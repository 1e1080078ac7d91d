"""`kashgar serve` and `kashgar worker` refuse bad options and environment up front, one line and
exit status 2, instead of a traceback from every process they start (or, for 0 web workers, a
server that listens and never answers); gunicorn's own config refuses 0 workers the same way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import refused


@pytest.fixture(autouse=True)
def service_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No KASHGAR_* setting of the machine running the tests; whatever a command sets in
    os.environ is undone after the test."""
    for name in [n for n in os.environ if n.startswith("KASHGAR_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KASHGAR_REDIS_URL", "")  # unset for Settings; restored (removed) afterwards
    monkeypatch.setenv("KASHGAR_QUEUE_NAME", "")


@pytest.mark.parametrize(("argv", "names"), [
    (["serve", "--workers", "0"], "argument --workers: want a whole number >= 1"),  # a server that never answers
    (["serve", "--timeout", "0"], "argument --timeout"),
    (["serve", "--port", "70000"], "argument --port: want a port 1..65535"),  # OverflowError before
    (["serve", "--port", "0"], "argument --port"),
    (["serve", "--redis-url", "foo://x"], "argument --redis-url: want a redis://, rediss:// or unix:// URL"),
    (["serve", "--redis-url", "redis://host:abc/0"], "argument --redis-url: Port could not be cast"),
])
def test_serve_refuses_bad_options(argv: list[str], names: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert names in refused([*argv, "--dry-run"], capsys)
    assert os.environ["KASHGAR_REDIS_URL"] == ""  # nothing set for a server that does not start


@pytest.mark.parametrize(("variable", "value", "names"), [
    ("KASHGAR_WEB_WORKERS", "0", "KASHGAR_WEB_WORKERS: want a whole number >= 1, not '0'"),
    ("KASHGAR_WEB_WORKERS", "many", "KASHGAR_WEB_WORKERS"),
    ("KASHGAR_HEARTBEAT_TIMEOUT", "abc", "KASHGAR_HEARTBEAT_TIMEOUT='abc': could not convert"),
    ("KASHGAR_SYNC_TIMEOUT_MS", "2s", "KASHGAR_SYNC_TIMEOUT_MS='2s'"),
    ("KASHGAR_REDIS_URL", "http://user:secret@host", "KASHGAR_REDIS_URL: want a redis://"),
    ("KASHGAR_HEALTH_BIND", "8001", "KASHGAR_HEALTH_BIND='8001': want HOST:PORT"),
    ("KASHGAR_HEALTH_BIND", "0.0.0.0:0", "KASHGAR_HEALTH_BIND='0.0.0.0:0': want HOST:PORT"),
    ("KASHGAR_HEALTH_BIND", "0.0.0.0:70000", "KASHGAR_HEALTH_BIND"),
    ("KASHGAR_HEALTH_BIND", "[::]:8001", "an IPv4 address or a host name"),
    ("KASHGAR_API_KEYS_FILE", "/no/such/keys.toml", "KASHGAR_API_KEYS_FILE='/no/such/keys.toml'"),
    ("KASHGAR_ASYNC_CLIENT_SECONDS", "-1", "KASHGAR_ASYNC_CLIENT_SECONDS=-1.0: want a number >= 0"),
])
def test_serve_refuses_a_bad_environment(variable: str, value: str, names: str, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(variable, value)
    line = refused(["serve", "--dry-run"], capsys)
    assert names in line and "secret" not in line  # a URL's password is not repeated


def test_serve_still_runs_with_good_settings(capsys: pytest.CaptureFixture[str]) -> None:
    from kashgar_cli.main import main

    assert main(["serve", "--dry-run", "--port", "65535", "--workers", "2", "--timeout", "60",
                 "--redis-url", "rediss://:pw@host:6380/1"]) == 0
    assert "--bind 127.0.0.1:65535 --workers 2 --timeout 60" in capsys.readouterr().out
    assert os.environ["KASHGAR_REDIS_URL"] == "rediss://:pw@host:6380/1"


@pytest.mark.parametrize(("argv", "names"), [
    (["worker", "--url", "foo://x"], "argument --url: want a redis://, rediss:// or unix:// URL, not foo://..."),
    (["worker", "--url", "localhost:6379"], "argument --url: want a redis://"),
    (["worker", "--url", "redis://127.0.0.1:1/0?socket_timeout=x"], "argument --url: Invalid value"),
    (["worker", "--url", "redis://127.0.0.1:1", "--reconnect-timeout", "-5"], "argument --reconnect-timeout"),
    (["worker", "--url", "redis://127.0.0.1:1", "--reconnect-timeout", "nan"], "argument --reconnect-timeout"),
])
def test_worker_refuses_bad_options(argv: list[str], names: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert names in refused([*argv, "--burst"], capsys)
    assert os.environ["KASHGAR_REDIS_URL"] == ""


@pytest.mark.parametrize(("variable", "value", "names"), [
    ("KASHGAR_HEARTBEAT_TIMEOUT", "abc", "KASHGAR_HEARTBEAT_TIMEOUT='abc'"),
    ("KASHGAR_REDIS_URL", "foo://x", "KASHGAR_REDIS_URL: want a redis://"),
])
def test_worker_refuses_a_bad_environment(variable: str, value: str, names: str, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(variable, value)
    argv = ["worker", "--burst"] if variable == "KASHGAR_REDIS_URL" else ["worker", "--url", "redis://x", "--burst"]
    assert names in refused(argv, capsys)


def test_worker_without_redis_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert "set --url or KASHGAR_REDIS_URL" in refused(["worker", "--burst"], capsys)


@pytest.mark.parametrize("value", ["0", "-2", "four"])
def test_gunicorn_config_refuses_fewer_than_one_worker(value: str, tmp_path: Path) -> None:
    """`gunicorn -c python:service.gunicorn_conf` (what `kashgar serve` and deploy/ run) with
    KASHGAR_WEB_WORKERS=0 listened and never answered; now it stops at once with one line, and
    leaves no job database or metrics directory behind."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KASHGAR_", "PROMETHEUS_"))}
    env.update(KASHGAR_WEB_WORKERS=value, TMPDIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_conf",
                           "--bind", "127.0.0.1:0"], capture_output=True, text=True, timeout=30, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"service/gunicorn_conf.py: KASHGAR_WEB_WORKERS={value!r}: want a whole number of web worker "
        "processes >= 1 (unset: one per core)"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("value", "address"), [("", None), ("  ", None), ("0.0.0.0:8001", ("0.0.0.0", 8001)),
                                                ("localhost:65535", ("localhost", 65535))])
def test_the_health_bind_is_read_as_an_address(value: str, address: tuple[str, int] | None) -> None:
    from service.config import health_bind

    assert health_bind({"KASHGAR_HEALTH_BIND": value}) == address


def test_gunicorn_config_refuses_a_bad_health_bind(tmp_path: Path) -> None:
    """The documented `gunicorn -c` runs need the same one line as `kashgar serve` (not a traceback
    once the master is up), and leave nothing behind."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KASHGAR_", "PROMETHEUS_"))}
    env.update(KASHGAR_HEALTH_BIND="nowhere", TMPDIR=str(tmp_path))
    proc = subprocess.run([sys.executable, "-m", "gunicorn", "-c", "python:service.gunicorn_conf",
                           "--bind", "127.0.0.1:0"], capture_output=True, text=True, timeout=30, env=env,
                          cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "service/gunicorn_conf.py: KASHGAR_HEALTH_BIND='nowhere': want HOST:PORT (say 0.0.0.0:8001), with an "
        "IPv4 address or a host name and a port from 1 to 65535"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_a_wrong_card_file_is_one_line_naming_its_line(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import resources

    text = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
    bad = tmp_path / "cards.toml"
    bad.write_text(text.replace('english = "Nobles"', 'english = "Nobles"\ncolour = "red"'))
    line = text[:text.index('english = "Nobles"')].count("\n") + 2
    extra = ["--dry-run"] if command == "serve" else ["--url", "redis://127.0.0.1:1/0", "--burst"]
    said = refused([command, "--cards", str(bad), *extra], capsys)
    assert f"argument --cards: {bad.resolve()}: line {line}: card 'adelige', field 'colour'" in said
    monkeypatch.setenv("KASHGAR_CARDS", str(bad))
    assert f"KASHGAR_CARDS: {bad.resolve()}: line {line}:" in refused([command, *extra], capsys)


def test_serve_passes_its_card_file_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import resources

    from kashgar_cli.main import main

    good = tmp_path / "cards.toml"
    good.write_text(resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8"))
    assert main(["serve", "--cards", str(good), "--dry-run"]) == 0
    assert os.environ["KASHGAR_CARDS"] == str(good.resolve())  # what gunicorn's processes inherit
