"""Clients that misbehave at the socket level, against the real gunicorn of `kashgar serve`
(one web worker, so a stuck worker would show at once): bodies sent chunked, clients that stall or
trickle their requests (each request must arrive whole within the client timeout of its first
byte), and a worker that stops answering gunicorn's heartbeat."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.serving import Gunicorn, descendants, http_json, wait_until
from loadtests import slow_clients

pytestmark = pytest.mark.e2e

LIMIT = 50_000
ENV = {"KASHGAR_CLIENT_TIMEOUT_S": "1.5", "KASHGAR_MAX_BODY_BYTES": str(LIMIT), "KASHGAR_LOG_LEVEL": "INFO"}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    with Gunicorn(env=ENV, workers=1, log_dir=str(tmp_path_factory.mktemp("slow-clients"))) as g:
        yield g


def connect(web: Gunicorn, source: str = "127.0.0.1") -> socket.socket:
    """A connection to `web` from the loopback address `source` (127.0.0.0/8: a client of its own)."""
    return socket.create_connection(("127.0.0.1", web.port), timeout=30, source_address=(source, 0))


def response(sock: socket.socket) -> tuple[int, dict[str, object], dict[str, str]]:
    """The status, JSON body and headers (names lower-cased) of the answer on `sock`."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    if b"transfer-encoding: chunked" in head.lower():
        out, rest = b"", body
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line, 16)
            if size == 0:
                break
            out, rest = out + rest[:size], rest[size + 2 :]
        body = out
    headers = dict((k.strip().lower(), v.strip()) for k, _, v in
                   (line.decode("latin-1").partition(":") for line in head.split(b"\r\n")[1:]))
    return status, json.loads(body), headers


def post_chunked(web: Gunicorn, body: bytes) -> tuple[int, dict[str, object], dict[str, str]]:
    with connect(web) as s:
        s.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        for i in range(0, len(body), 8192):
            piece = body[i : i + 8192]
            s.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        s.sendall(b"0\r\n\r\n")
        return response(s)


def test_a_chunked_body_is_read_whole(web: Gunicorn) -> None:
    status, body, _ = post_chunked(web, b'{"players": 2, "seed": 5}' + b" " * 1000)
    assert status == 200 and body["state"]["players"] == 2, body  # type: ignore[index]


def test_a_chunked_body_over_the_limit_is_413_not_cut_short(web: Gunicorn) -> None:
    """It was parsed cut at the limit: 200 for trailing spaces, 400 for a long string."""
    status, body, _ = post_chunked(web, b'{"players": 2, "seed": 5}' + b" " * (LIMIT + 10))
    assert status == 413 and body["error"] == "body_too_large", body
    status, body, _ = post_chunked(web, b'{"players": 2, "seed": 5, "x": "' + b"a" * (LIMIT + 10) + b'"}')
    assert status == 413, body


def test_a_stalled_body_is_408_and_frees_the_worker(web: Gunicorn) -> None:
    """The only worker reads a body that never comes; it answers 408 after the client timeout
    (it was stuck until gunicorn killed it, 50 s, with an HTML 500)."""
    with connect(web) as s:
        s.sendall(b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 100\r\n\r\n{\"pla")
        t0 = time.monotonic()
        status, body, _ = response(s)
        assert status == 408 and body["error"] == "request_timeout", body
        assert time.monotonic() - t0 < 10
    assert http_json("GET", web.url + "/healthz", timeout=10)[0] == 200


def test_a_stalled_request_head_is_408_and_the_server_answers_others(web: Gunicorn) -> None:
    stalled = [connect(web) for _ in range(3)]
    try:
        for s in stalled:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        t0 = time.monotonic()
        status, _ = http_json("GET", web.url + "/healthz", timeout=20)
        assert status == 200
        assert time.monotonic() - t0 < 1.0  # not after the stalled ones' client timeouts
        for s in stalled:
            status, body, headers = response(s)  # then closed by the server (gunicorn's own answer)
            assert status == 408 and body["error"] == "request_timeout", body
            assert headers["content-type"] == "application/problem+json" and body["status"] == 408, headers
    finally:
        for s in stalled:
            s.close()
    assert web.proc is not None
    log = web.proc.output()
    assert "WORKER TIMEOUT" not in log and "Traceback" not in log, log[-3000:]
    assert "no complete request within the client timeout" in log


class Trickle:
    """Connections that each send one byte of a request every `every` seconds, head and body
    never done: half of them in the head, half in the body (a length of 10 KB). Each comes from an
    address of its own (127.0.1.x), as `count` clients would."""

    def __init__(self, web: Gunicorn, count: int, every: float) -> None:
        head = b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        self.requests = [head + (b"Content-Length: 10000\r\n\r\n{" if i % 2 else b"X-Slow: ") + b" " * 1000
                         for i in range(count)]
        self.socks = [connect(web, f"127.0.1.{i + 1}") for i in range(count)]
        self.first_byte = [0.0] * count
        self.every = every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        sent = 0
        while not self.stop.is_set():
            for i, (sock, data) in enumerate(zip(self.socks, self.requests, strict=True)):
                try:
                    sock.send(data[sent : sent + 1])
                except OSError:
                    continue  # answered and closed
                if sent == 0:
                    self.first_byte[i] = time.monotonic()
            sent += 1
            self.stop.wait(self.every)

    def __enter__(self) -> Trickle:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        for sock in self.socks:
            sock.close()


def test_ten_trickling_clients_leave_the_others_answered_and_get_408_at_the_deadline(web: Gunicorn) -> None:
    """Ten connections that send one byte every 0.3 s held the only sync worker (it read one of
    them at a time, each read within the timeout): another client waited for them all."""
    with Trickle(web, 10, 0.3) as trickle:
        time.sleep(0.5)  # every trickling request has begun
        for _ in range(5):
            t0 = time.monotonic()
            status, body = http_json("POST", web.url + "/games", {"players": 2, "seed": 1}, timeout=20)
            assert status == 200, body
            assert time.monotonic() - t0 < 1.0
        for i, sock in enumerate(trickle.socks):
            status, body, _ = response(sock)
            waited = time.monotonic() - trickle.first_byte[i]
            assert status == 408 and body["error"] == "request_timeout", body
            # answered at the deadline (1.5 s after the first byte), not at a worker timeout
            assert 1.4 <= waited < 5, waited
    assert web.proc is not None
    assert "WORKER TIMEOUT" not in web.proc.output()


def test_the_slow_clients_tool_measures_the_same(web: Gunicorn) -> None:
    """`python -m loadtests.slow_clients` (RELIABILITY.md's figures), shortened."""
    report = slow_clients.run(web.url, 4, 0.3, 2.5)
    assert report["statuses"] == ["200"] and report["requests"] >= 4, report
    assert report["slow_client_answers"] == ["408"], report
    assert 1.4 <= report["slow_client_answered_after_s"][0] <= report["slow_client_answered_after_s"][1] < 5, report


def test_a_worker_timeout_names_the_request_the_process_was_serving(tmp_path: Path) -> None:
    """A web process stopped mid-request (as one stuck would be) is killed by gunicorn's worker
    timeout; the master's log says which request it was serving, not "Perhaps out of memory?"."""
    with Gunicorn(env=ENV, workers=1, log_dir=str(tmp_path), extra_args=["--timeout", "2"]) as g:
        assert g.proc is not None
        status, game = http_json("POST", g.url + "/games", {"players": 2, "seed": 3, "observer": 0})
        worker = descendants(g.proc.pid)[0]
        body = {"state": game["state"], "time_ms": 1500, "mode": "sync"}

        def suggest() -> None:
            with contextlib.suppress(OSError):  # the process serving it is killed
                http_json("POST", g.url + "/suggest", body, timeout=30)

        search = threading.Thread(target=suggest, daemon=True)
        search.start()
        time.sleep(0.5)
        os.kill(worker, signal.SIGSTOP)
        proc = g.proc
        wait_until(lambda: "was sent SIGKILL" in proc.output(), 20, what="the stopped worker killed")
        log = proc.output()
        assert f"WORKER TIMEOUT (pid:{worker}): no heartbeat for 2 s, serving POST /suggest from 127.0.0.1" in log, log
        assert "Perhaps out of memory" not in log, log
        assert http_json("GET", g.url + "/healthz", timeout=20)[0] == 200  # a new process serves
        search.join(30)


def raw(web: Gunicorn, request: bytes) -> tuple[int, dict[str, object], dict[str, str]]:
    with connect(web) as s:
        s.sendall(request)
        return response(s)


@pytest.mark.parametrize(
    ("request_bytes", "status", "where"),
    [
        (b"GET /jobs/" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "path"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: 1\r\n" % i for i in range(120)) + b"\r\n",
         431, "header"),
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431, "header"),
        (b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}", 400, "body"),
    ],
    ids=["long-url", "many-headers", "large-header", "bad-content-length"],
)
def test_errors_gunicorn_answers_itself_are_json(web: Gunicorn, request_bytes: bytes, status: int, where: str) -> None:
    """They were gunicorn's HTML pages; now the service's error body, like every other error."""
    got, body, headers = raw(web, request_bytes)
    assert got == status, body
    assert body["in"] == where and body["message"] and body["errors"], body
    # like every other answer, it carries a request id, in the body and the header, that the
    # server's log names too (the request was not read far enough to take the caller's own)
    rid = headers.get("x-request-id", "")
    assert len(rid) == 32 and body["request_id"] == rid, (headers, body)
    assert web.proc is not None
    assert rid in web.proc.output()
