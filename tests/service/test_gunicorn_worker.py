"""The parts of the web worker (`service/gunicorn_worker.py`) on real sockets and the real app: a
request's deadline runs from its first read, a caller's shorter timeout still holds, and the
middleware is the app to gunicorn's hooks (they look up its `extensions`). The whole worker runs
under gunicorn in tests/e2e/test_service_slow_clients.py."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest

from service import create_app
from service.gunicorn_worker import DeadlineSocket, RequestDeadline, WholeRequests


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    yield a, b
    a.close()
    b.close()


def test_the_deadline_runs_from_the_first_read_over_every_read(pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    sock = DeadlineSocket(server, 0.4)
    client.send(b"a")
    t0 = time.monotonic()
    assert sock.recv(10) == b"a"
    client.send(b"b")
    time.sleep(0.2)
    assert sock.recv(10) == b"b"  # each read was quick; together they near the deadline
    with pytest.raises(RequestDeadline):
        sock.recv(10)
    assert 0.35 <= time.monotonic() - t0 < 1.0 and sock.expired
    sock.arrived()  # a request that missed its deadline keeps it: the rest is not waited for
    with pytest.raises(RequestDeadline):
        sock.recv(10)


def test_an_arrived_request_starts_the_next_one_s_deadline_afresh(pair: tuple[socket.socket, socket.socket]) -> None:
    server, client = pair
    sock = DeadlineSocket(server, 0.3)
    client.send(b"a")
    sock.recv(10)
    sock.arrived()
    time.sleep(0.4)
    client.send(b"b")
    assert sock.recv(10) == b"b"


def test_a_shorter_timeout_of_the_caller_still_holds(pair: tuple[socket.socket, socket.socket]) -> None:
    """gunicorn's graceful close reads with a timeout of its own, on the main thread."""
    server, _ = pair
    sock = DeadlineSocket(server, 30.0)
    sock.settimeout(0.1)
    t0 = time.monotonic()
    with pytest.raises(TimeoutError) as info:
        sock.recv(10)
    assert not isinstance(info.value, RequestDeadline) and time.monotonic() - t0 < 1.0
    assert sock.gettimeout() == 0.1 and server.gettimeout() == 0.1


def test_the_middleware_is_the_app_to_gunicorn_s_hooks() -> None:
    app = create_app({"TESTING": True, "log_level": "WARNING"})
    wrapped = WholeRequests(app, lambda what: None)
    assert wrapped.extensions["kashgar_jobs"] is app.extensions["kashgar_jobs"]
    assert wrapped.limit == app.config["MAX_CONTENT_LENGTH"]


class Writes:
    """A socket that records each write it is given."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.timeout: float | None = None

    def gettimeout(self) -> float | None:
        return self.timeout

    def settimeout(self, value: float | None) -> None:
        self.timeout = value

    def sendall(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def send(self, data: bytes) -> int:
        self.writes.append(bytes(data))
        return len(data)


def test_a_response_s_head_goes_out_with_its_body_in_one_write() -> None:
    """gunicorn writes a response's head, then its body: two writes, each through the deadline's
    timeouts (19% of a web process's time at the cheap levels). Held, they are one."""
    raw = Writes()
    sock = DeadlineSocket(raw, 5.0)
    sock.hold_next()
    sock.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
    assert raw.writes == [] and not sock.answered
    sock.sendall(b"{}")
    sock.sendall(b"more")  # a streamed body's next parts go out as they come
    sock.flush()
    assert raw.writes == [b"HTTP/1.1 200 OK\r\n\r\n{}", b"more"] and sock.answered
    assert raw.timeout == 5.0  # a write has the client timeout


def test_a_held_head_without_a_body_goes_out_at_the_flush_or_before_any_other_write() -> None:
    raw = Writes()
    sock = DeadlineSocket(raw, 5.0)
    sock.hold_next()
    sock.sendall(b"HTTP/1.1 204 No Content\r\n\r\n")
    sock.flush()
    sock.flush()
    assert raw.writes == [b"HTTP/1.1 204 No Content\r\n\r\n"]
    sock.hold_next()
    sock.sendall(b"head")
    assert sock.send(b"x") == 1  # gunicorn's non-blocking error writes: what is held goes first
    assert raw.writes[1:] == [b"head", b"x"]
    sock.hold_next()
    sock.sendall(b"head of a response that failed")
    sock.drop()
    sock.flush()
    assert raw.writes[3:] == []


def test_the_date_header_is_made_once_a_second() -> None:
    import email.utils

    from service.gunicorn_worker import http_date

    now = time.time()
    assert http_date() in {email.utils.formatdate(t, usegmt=True) for t in (int(now), int(now) + 1)}
    assert http_date(0) == "Thu, 01 Jan 1970 00:00:00 GMT"
