"""The health listener of gunicorn's master (KASHGAR_HEALTH_BIND), against the real gunicorn of
`kashgar serve` with one web worker: probes are answered at once while that worker searches, on
the health port and on the API port alike (a search lets other threads of its process run)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine_ext
from lab.serving import Gunicorn, descendants, free_port, http_json, wait_until
from service import health_listener
from service.health_listener import DEADLINE_S, MAX_CLIENTS, Checker, HealthListener
from tests.engine_helpers import require_compiled

pytestmark = pytest.mark.e2e

BUSY_S = 3.0  # how long a synchronous search holds the only web worker


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    port = free_port()
    env = {"KASHGAR_HEALTH_BIND": f"127.0.0.1:{port}", "KASHGAR_SYNC_MAX_MS": str(int(BUSY_S * 1000))}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path_factory.mktemp("health"))) as g:
        g.health_url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
        # ready once the checks (every second) have seen the worker
        wait_until(lambda: health(g, "/readyz")[0] == 200, 30, interval=0.2, what="the master's /readyz")
        yield g


def health(web: Gunicorn, path: str, timeout: float = 5.0) -> tuple[int, object]:
    return http_json("GET", web.health_url + path, timeout=timeout)  # type: ignore[attr-defined]


def test_the_master_answers_liveness_and_readiness(web: Gunicorn) -> None:
    require_compiled()
    status, body = health(web, "/healthz")
    assert status == 200 and body["status"] == "ok" and body["web_workers"] == 1, body  # type: ignore[index]
    status, body = health(web, "/readyz")
    assert status == 200, body
    assert body["ready"] is True and body["backend"] == "embedded", body  # type: ignore[index]
    checks = body["checks"]  # type: ignore[index]
    assert {k: checks[k] for k in ("engine", "queue", "web_workers")} == {
        "engine": "ok (compiled)", "queue": "ok", "web_workers": "1 of 1"}, body
    assert 0 <= float(checks["age_s"]) < 5  # the checks run every second on a thread of their own


def test_probes_are_answered_while_the_only_worker_searches(web: Gunicorn) -> None:
    """A synchronous search runs in the only web worker: the health port, and the API port's
    probes and metrics, answer meanwhile within a second, and the search still ends on time."""
    status, game = http_json("POST", web.url + "/games", {"players": 2, "seed": 3, "observer": 0})
    assert status == 200, game
    out: dict[str, object] = {}

    def ask() -> None:
        out["answer"] = http_json("POST", web.url + "/suggest", {
            "state": game["state"], "time_ms": int(BUSY_S * 1000), "mode": "sync"}, timeout=60)
        out["at"] = time.monotonic()

    search = threading.Thread(target=ask)
    search.start()
    sent = time.monotonic()
    time.sleep(0.5)  # the worker has taken it
    took = {}
    for name, call in (("health port", lambda: health(web, "/readyz", timeout=BUSY_S / 2)),
                       ("/readyz", lambda: http_json("GET", web.url + "/readyz", timeout=BUSY_S / 2)),
                       ("/healthz", lambda: http_json("GET", web.url + "/healthz", timeout=BUSY_S / 2))):
        t0 = time.monotonic()
        status, body = call()
        took[name] = time.monotonic() - t0
        assert status == 200, (name, body)
    search.join(60)
    assert out["answer"][0] == 200, out  # type: ignore[index]
    assert max(took.values()) < 1.0, took
    assert time.monotonic() - sent < BUSY_S + 5  # the probes did not hold the search up
    assert out["at"] - sent >= BUSY_S - 0.5, took  # type: ignore[operator]  # they came while it ran


def _listening_inode(port: int) -> str:
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # LISTEN
            return fields[9]
    raise AssertionError(f"nothing listens on port {port}")


def _holds_socket(pid: int, inode: str) -> bool:
    fds = Path(f"/proc/{pid}/fd")
    return any(os.readlink(fd) == f"socket:[{inode}]" for fd in fds.iterdir() if fd.is_symlink())


def test_only_the_master_holds_the_health_socket(web: Gunicorn) -> None:
    """A worker forked with the listener's socket would keep the port accepting connections after
    the master died (a liveness probe that passes for a dead server): each closes its copy."""
    assert web.proc is not None
    port = int(web.health_url.rsplit(":", 1)[1])  # type: ignore[attr-defined]
    inode = _listening_inode(port)
    master = web.proc.pid
    workers = descendants(master)
    assert workers
    assert _holds_socket(master, inode)
    assert not any(_holds_socket(pid, inode) for pid in workers)


def test_other_paths_and_methods_are_json_errors(web: Gunicorn) -> None:
    status, body = health(web, "/suggest")
    assert status == 404 and body["error"] == "not_found" and "/readyz" in body["message"], body  # type: ignore[index]
    status, body = http_json("POST", web.health_url + "/readyz", {}, timeout=5)  # type: ignore[attr-defined]
    assert status == 405 and body["error"] == "method_not_allowed", body  # type: ignore[index]


def test_readiness_is_503_when_the_queue_is_unreachable(tmp_path: Path) -> None:
    """Redis configured but not there: the master says not ready, naming the queue, as the API does."""
    port = free_port()
    env = {"KASHGAR_HEALTH_BIND": f"127.0.0.1:{port}", "KASHGAR_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
           "KASHGAR_REDIS_TIMEOUT": "0.5"}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path)):
        def seen_worker() -> tuple[int, object] | None:
            got = http_json("GET", f"http://127.0.0.1:{port}/readyz", timeout=10)
            return got if got[1]["checks"]["web_workers"] == "1 of 1" else None  # type: ignore[index]

        status, body = wait_until(seen_worker, 30, interval=0.2, what="the checks to see the worker")
    assert status == 503, body
    assert body["ready"] is False and body["error"] == "not_ready" and body["backend"] == "redis", body
    assert body["checks"]["queue"].startswith("error:") and body["checks"]["web_workers"] == "1 of 1", body


def test_a_health_port_in_use_stops_the_server_with_one_line(tmp_path: Path) -> None:
    """... and leaves no job database or metrics directory behind (its `SystemExit` comes before
    gunicorn's own clean-up would run)."""
    made = tmp_path / "tmp"
    made.mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {"KASHGAR_HEALTH_BIND": f"127.0.0.1:{port}", "TMPDIR": str(made)}
        with pytest.raises(RuntimeError, match="gunicorn exited") as err:
            Gunicorn(env=env, workers=1, log_dir=str(tmp_path)).start()
    assert f"KASHGAR_HEALTH_BIND=127.0.0.1:{port}: cannot listen there" in str(err.value)
    assert "Traceback" not in str(err.value)
    assert list(made.iterdir()) == []


def test_the_health_port_needs_the_app_preloaded(tmp_path: Path) -> None:
    """Without preload_app the master would load the app for its checks, and the workers would
    inherit that copy (a HUP would no longer reload the code): refused, one line."""
    made = tmp_path / "tmp"
    made.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KASHGAR_", "PROMETHEUS_"))}
    env.update(KASHGAR_HEALTH_BIND=f"127.0.0.1:{free_port()}", TMPDIR=str(made))
    conf = tmp_path / "no_preload.py"
    conf.write_text("from service.gunicorn_conf import *  # noqa: F403\npreload_app = False\n")
    proc = subprocess.run([sys.executable, "-m", "gunicorn", "-c", str(conf), "--bind", f"127.0.0.1:{free_port()}"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 1, proc.stderr
    assert "KASHGAR_HEALTH_BIND needs preload_app" in proc.stderr and "Traceback" not in proc.stderr
    assert list(made.iterdir()) == []


def test_a_failing_check_is_a_503_not_a_dropped_connection() -> None:
    """The listener on its own: an answer that raises is a 503 naming the error."""

    def answer(path: str) -> tuple[int, dict[str, object]] | None:
        raise RuntimeError("boom")

    listener = HealthListener(("127.0.0.1", 0), answer).start()
    try:
        status, body = http_json("GET", f"http://127.0.0.1:{listener.server_address[1]}/readyz", timeout=5)
    finally:
        listener.stop()
    assert status == 503 and body["error"] == "not_ready" and body["checks"]["listener"] == "error: boom", body


def _stall(port: int, count: int) -> list[socket.socket]:
    stalled = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(count)]
    for s in stalled:
        s.sendall(b"GET /readyz HTTP/1.1\r\n")  # the head never ends
    return stalled


def test_stalled_clients_hold_a_bounded_number_of_threads() -> None:
    """Every connection had a thread: clients sending a header line now and then held any number
    of threads. Now a connection beyond `max_clients` is closed unanswered."""
    listener = HealthListener(("127.0.0.1", 0), lambda path: (200, {"ok": True}), max_clients=4,
                              deadline_s=60).start()
    port = listener.server_address[1]
    stalled = _stall(port, 4)
    try:
        wait_until(lambda: listener._slots._value == 0, 30, what="the stalled clients to be taken")  # type: ignore[attr-defined]
        with socket.create_connection(("127.0.0.1", port), timeout=30) as extra:
            extra.sendall(b"GET /readyz HTTP/1.1\r\n\r\n")
            assert extra.recv(100) == b""  # full: closed unanswered
    finally:
        for s in stalled:
            s.close()
        listener.stop()
    assert MAX_CLIENTS == 16  # the listener gunicorn's master runs


def _trickle_until_closed(s: socket.socket, limit_s: float) -> float:
    """Send a header line every 0.3 s until the server closes the connection; the seconds it took."""
    t0 = time.monotonic()
    s.settimeout(0.3)
    while time.monotonic() - t0 < limit_s:
        try:
            s.sendall(b"X-A: 1\r\n")
            if s.recv(100) == b"":
                return time.monotonic() - t0
        except TimeoutError:
            continue
        except OSError:
            return time.monotonic() - t0
    return float("inf")


def test_a_stalled_request_is_cut_off_at_the_deadline() -> None:
    """Each read had 5 s, so a client sending a header line every few seconds held its thread as
    long as it liked; now the whole request has `deadline_s` (DEADLINE_S in the master)."""
    listener = HealthListener(("127.0.0.1", 0), lambda path: (200, {"ok": True}), deadline_s=1.0).start()
    port = listener.server_address[1]
    stalled = _stall(port, 2)
    try:
        for s in stalled:
            assert _trickle_until_closed(s, 10.0) < 5.0  # a header line every 0.3 s: no read waits long
        status, _ = http_json("GET", f"http://127.0.0.1:{port}/readyz", timeout=10)
        assert status == 200  # and the listener answers the next
        wait_until(lambda: listener._slots._value == MAX_CLIENTS, 30, what="the slots freed")  # type: ignore[attr-defined]
    finally:
        for s in stalled:
            s.close()
        listener.stop()
    assert DEADLINE_S <= 5


def test_the_checker_answers_its_last_result_and_a_stale_one_is_not_ready(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def check() -> tuple[bool, dict[str, object]]:
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("redis went")
        return True, {"ready": True, "checks": {"queue": "ok"}}

    checker = Checker(check, every=3600)  # one check when made, none after unless asked
    ok, body = checker.last()
    assert ok and body["checks"]["queue"] == "ok" and float(body["checks"]["age_s"]) < 5  # type: ignore[index]
    checker.run_once()
    ok, body = checker.last()
    assert not ok and body["error"] == "not_ready" and body["checks"]["checks"] == "error: redis went", body  # type: ignore[index]
    monkeypatch.setattr(health_listener, "STALE_S", -1.0)  # a check that hangs leaves the last result to age
    checker._result = (time.monotonic(), True, {"ready": True, "checks": {}})
    ok, body = checker.last()
    assert not ok and "have not finished" in body["checks"]["stale"]  # type: ignore[index]


def test_a_fork_waits_for_a_running_check() -> None:
    """The master forks web workers; a worker forked while the checks' thread was inside SQLite or
    Redis code would inherit their locks taken and hang on its first use of them."""
    inside, go = threading.Event(), threading.Event()
    order: list[str] = []

    def check() -> tuple[bool, dict[str, object]]:
        if order:  # the first check runs when the checker is made
            inside.set()
            go.wait(30)
            order.append("check done")
        order.append("checked")
        return True, {"checks": {}}

    checker = Checker(check, every=3600)
    runner = threading.Thread(target=checker.run_once)
    runner.start()
    assert inside.wait(30)

    def fork() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        order.append("forked")

    forker = threading.Thread(target=fork)
    forker.start()
    time.sleep(0.3)  # the fork has had time to happen, were it not held back
    go.set()
    runner.join(30)
    forker.join(30)
    assert order[-2:] == ["check done", "forked"] or order[-3:] == ["check done", "checked", "forked"], order


@pytest.mark.parametrize("launcher", ["deploy", "serve"])
def test_a_usr2_upgrade_keeps_the_embedded_jobs_and_the_health_port(tmp_path: Path, launcher: str) -> None:
    """A binary upgrade (USR2, then QUIT to the old master), under `gunicorn -c deploy/gunicorn.conf.py`
    and under `kashgar serve`: the old master removed the temporary job database when it exited,
    under the new master that had inherited it (its jobs were gone), the new master could not bind
    the health port the old one held, and under `kashgar serve` (then `python -m gunicorn`) no new
    master started at all. Now the new master takes both over, and removes the directories when it
    stops in turn."""
    made = tmp_path / "tmp"
    made.mkdir()
    port, health_port = free_port(), free_port()
    pidfile = tmp_path / "gunicorn.pid"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KASHGAR_", "PROMETHEUS_"))}
    env.update(TMPDIR=str(made), KASHGAR_BIND=f"127.0.0.1:{port}", KASHGAR_HEALTH_BIND=f"127.0.0.1:{health_port}",
               KASHGAR_WEB_WORKERS="1", KASHGAR_LOG_LEVEL="WARNING", GUNICORN_CMD_ARGS=f"--pid {pidfile}")
    gunicorn = shutil.which("gunicorn")
    assert gunicorn, "gunicorn's console script"
    argv = ([gunicorn, "-c", "deploy/gunicorn.conf.py"] if launcher == "deploy"
            else [sys.executable, "-m", "kashgar_cli.main", "serve"])
    root = Path(__file__).resolve().parents[2]
    log = open(tmp_path / "gunicorn.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(argv, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url, health_url = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{health_port}"

    def master(path: Path = pidfile) -> int:
        text = path.read_text().strip() if path.exists() else ""
        return int(text) if text else 0

    try:
        wait_until(lambda: http_json("GET", health_url + "/readyz", timeout=5)[0] == 200, 60, what="ready")
        state = json.loads(json.dumps(engine_ext.new_game(players=2, seed=5).to_json(observer=0)))
        status, body = http_json("POST", url + "/suggest", {"state": state, "iterations": 200, "mode": "async"})
        assert status == 202, body
        job = body["status_url"]
        wait_until(lambda: http_json("GET", url + job)[1]["status"] == "finished", 60, what="the job")
        old = master()
        os.kill(old, signal.SIGUSR2)
        # the new master writes its pid beside the old one's (gunicorn 27: "<pidfile>.2")
        new = wait_until(lambda: master(Path(f"{pidfile}.2")) or (master() if master() != old else 0), 60,
                         what="the new master")
        os.kill(old, signal.SIGQUIT)
        wait_until(lambda: not Path(f"/proc/{old}").exists() or "Z" in Path(f"/proc/{old}/stat").read_text().split()[2],
                   60, what="the old master gone")
        proc.wait(30)  # the old master was the process started here
        wait_until(lambda: http_json("GET", health_url + "/readyz", timeout=5)[0] == 200, 60,
                   what="the new master's health port")
        status, body = http_json("GET", url + job)
        assert status == 200 and body["status"] == "finished", body  # the job survived the upgrade
        assert list(made.iterdir()), "the new master's job database and metrics"
        os.kill(new, signal.SIGTERM)
        wait_until(lambda: not Path(f"/proc/{new}").exists(), 60, what="the new master stopped")
        wait_until(lambda: list(made.iterdir()) == [], 30, what="its directories removed")
    finally:
        for pid in (master(), master(Path(f"{pidfile}.2")), proc.pid):
            with contextlib.suppress(OSError):
                os.killpg(os.getpgid(pid), signal.SIGKILL) if pid else None
        log.close()
