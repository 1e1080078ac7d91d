"""The per-address connection bound (`KASHGAR_CLIENT_CONNECTIONS`) on the real gunicorn of `kashgar
serve`: an address past it is answered 429 and closed, but never on a health path (/healthz,
/readyz, /metrics), which a probe behind the same address as stuck clients must still reach."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from lab.serving import Gunicorn, wait_until

pytestmark = pytest.mark.e2e

BOUND = 2
ENV = {"KASHGAR_CLIENT_CONNECTIONS": str(BOUND), "KASHGAR_CLIENT_TIMEOUT_S": "20", "KASHGAR_LOG_LEVEL": "WARNING"}
SOURCE = "127.0.0.7"  # the address of the stuck clients and of the probes


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    with Gunicorn(env=ENV, workers=1, log_dir=str(tmp_path_factory.mktemp("connection-bound"))) as g:
        yield g


def connect(web: Gunicorn, source: str = SOURCE) -> socket.socket:
    return socket.create_connection(("127.0.0.1", web.port), timeout=30, source_address=(source, 0))


def answer(sock: socket.socket) -> tuple[int, dict[str, object]]:
    """The status and JSON body of the one answer on `sock` (asked with Connection: close)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), json.loads(body) if body.startswith(b"{") else {}


def ask(web: Gunicorn, line: bytes, body: bytes = b"", pause: float = 0.0) -> tuple[int, dict[str, object]]:
    """One request from SOURCE (its request line sent `pause` s after connecting, when given)."""
    with connect(web) as s:
        if pause:
            time.sleep(pause)
        head = line + b"\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n"
        s.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return answer(s)


@pytest.fixture
def stuck(web: Gunicorn) -> Iterator[list[socket.socket]]:
    """BOUND connections from SOURCE, each in a thread of the server with a head that never ends."""
    socks = [connect(web) for _ in range(BOUND)]
    for s in socks:
        s.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\n")
    time.sleep(0.5)  # each is read by a thread of the server
    yield socks
    for s in socks:
        s.close()


def test_past_the_bound_an_address_is_answered_429_but_on_its_health_paths(web: Gunicorn,
                                                                           stuck: list[socket.socket]) -> None:
    status, body = ask(web, b"POST /games HTTP/1.1", b'{"players": 2, "seed": 1}')
    assert status == 429 and body["error"] == "too_many_requests", body
    for path in (b"/healthz", b"/readyz", b"/metrics", b"/healthz?probe=1"):
        status, _ = ask(web, b"GET " + path + b" HTTP/1.1")
        assert status == 200, path
    status, _ = ask(web, b"GET /healthz HTTP/1.1", pause=0.3)  # a request line sent after the connection
    assert status == 200
    for path in (b"/healthzz", b"/levels", b"/healthz/x"):
        status, body = ask(web, b"GET " + path + b" HTTP/1.1")
        assert status == 429, path
    other = socket.create_connection(("127.0.0.1", web.port), timeout=30, source_address=("127.0.0.8", 0))
    with other:  # another address is not bound by this one's connections
        other.sendall(b"GET /levels HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer(other)[0] == 200


def test_a_connection_past_the_bound_that_sends_nothing_holds_no_thread(web: Gunicorn,
                                                                        stuck: list[socket.socket]) -> None:
    """It waits on the poller: the server answers others meanwhile, and it is let in for /healthz."""
    idle = [connect(web) for _ in range(20)]
    try:
        t0 = time.monotonic()
        status, _ = ask(web, b"GET /healthz HTTP/1.1")
        assert status == 200 and time.monotonic() - t0 < 5.0
        idle[0].sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert answer(idle[0])[0] == 200
    finally:
        for s in idle:
            s.close()
    assert web.proc is not None
    assert "Traceback" not in web.proc.output()


def test_the_bound_is_back_once_the_connections_are_done(web: Gunicorn) -> None:
    """The stuck connections of the tests above are closed: their threads let go of the address."""
    wait_until(lambda: ask(web, b"POST /games HTTP/1.1", b'{"players": 2, "seed": 1}')[0] == 200, 10,
               interval=0.2, what="the address's connections let go")
