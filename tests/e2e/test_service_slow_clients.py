"""Clients that misbehave at the socket level, against the real gunicorn of `kashgar serve`
(one web worker, so a stuck worker would show at once): bodies sent chunked, and clients that
stall mid-request."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.serving import Gunicorn, http_json

pytestmark = pytest.mark.e2e

LIMIT = 50_000
ENV = {"KASHGAR_CLIENT_TIMEOUT_S": "1.5", "KASHGAR_MAX_BODY_BYTES": str(LIMIT), "KASHGAR_LOG_LEVEL": "INFO"}


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    with Gunicorn(env=ENV, workers=1, log_dir=str(tmp_path_factory.mktemp("slow-clients"))) as g:
        yield g


def connect(web: Gunicorn) -> socket.socket:
    return socket.create_connection(("127.0.0.1", web.port), timeout=30)


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


def test_a_stalled_request_head_is_dropped_and_the_server_answers_others(web: Gunicorn, tmp_path: Path) -> None:
    stalled = [connect(web) for _ in range(3)]
    try:
        for s in stalled:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the head never ends
        t0 = time.monotonic()
        status, _ = http_json("GET", web.url + "/healthz", timeout=20)
        assert status == 200
        assert time.monotonic() - t0 < 15  # three client timeouts at most, not a worker timeout
        for s in stalled:
            assert s.recv(100) == b""  # closed by the server
    finally:
        for s in stalled:
            s.close()
    assert web.proc is not None
    log = web.proc.output()
    assert "WORKER TIMEOUT" not in log and "Traceback" not in log, log[-3000:]
    assert "no complete request within the client timeout" in log


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
