"""The health listener of gunicorn's master (KASHGAR_HEALTH_BIND), against the real gunicorn of
`kashgar serve` with one web worker: probes are answered at once while that worker is busy, which
the API port cannot do."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.health_listener import HealthListener
from service.testing import Gunicorn, descendants, free_port, http_json

pytestmark = pytest.mark.e2e

BUSY_S = 3.0  # how long a stalled client holds the only web worker (its client timeout)


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    port = free_port()
    env = {"KASHGAR_HEALTH_BIND": f"127.0.0.1:{port}", "KASHGAR_CLIENT_TIMEOUT_S": str(BUSY_S)}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path_factory.mktemp("health"))) as g:
        g.health_url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
        yield g


def health(web: Gunicorn, path: str, timeout: float = 5.0) -> tuple[int, object]:
    return http_json("GET", web.health_url + path, timeout=timeout)  # type: ignore[attr-defined]


def test_the_master_answers_liveness_and_readiness(web: Gunicorn) -> None:
    status, body = health(web, "/healthz")
    assert status == 200 and body["status"] == "ok" and body["web_workers"] == 1, body  # type: ignore[index]
    status, body = health(web, "/readyz")
    assert status == 200, body
    assert body["ready"] is True and body["backend"] == "embedded", body  # type: ignore[index]
    assert body["checks"] == {"engine": "ok (compiled)", "queue": "ok", "web_workers": "1 of 1"}, body  # type: ignore[index]


def test_probes_are_answered_while_the_only_worker_is_busy(web: Gunicorn) -> None:
    """A client that sends half a body holds the only web worker for its client timeout: the API
    port answers nothing meanwhile, the health port answers at once."""
    stalled = socket.create_connection(("127.0.0.1", web.port), timeout=30)
    try:
        stalled.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 100\r\n\r\n{\"pla")
        time.sleep(0.3)  # the worker has taken it
        api: dict[str, object] = {}

        def ask_api() -> None:
            api["answer"] = http_json("GET", web.url + "/readyz", timeout=30)
            api["at"] = time.monotonic()

        asker = threading.Thread(target=ask_api)
        asker.start()
        status, body = health(web, "/readyz", timeout=BUSY_S / 2)
        answered = time.monotonic()
        assert status == 200 and body["ready"] is True, body  # type: ignore[index]
        asker.join(60)
        assert api["answer"][0] == 200  # type: ignore[index]
        assert api["at"] > answered  # type: ignore[operator]  # the API port waited for the worker
    finally:
        stalled.close()


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
        status, body = http_json("GET", f"http://127.0.0.1:{port}/readyz", timeout=10)
    assert status == 503, body
    assert body["ready"] is False and body["error"] == "not_ready" and body["backend"] == "redis", body
    assert body["checks"]["queue"].startswith("error:") and body["checks"]["web_workers"] == "1 of 1", body


def test_a_health_port_in_use_stops_the_server_with_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(RuntimeError, match="gunicorn exited") as err:
            Gunicorn(env={"KASHGAR_HEALTH_BIND": f"127.0.0.1:{port}"}, workers=1, log_dir=str(tmp_path)).start()
    assert f"KASHGAR_HEALTH_BIND=127.0.0.1:{port}: cannot listen there" in str(err.value)
    assert "Traceback" not in str(err.value)


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
