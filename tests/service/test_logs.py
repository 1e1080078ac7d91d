"""The service's log lines (`service/logs.py`): one JSON object a line; a request answered below
400 writes its access line with the next ones (a write per request cost a web process 6% of its
time at the cheap levels), any other line at once, after those waiting."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator

import pytest

from service import create_app, logs


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[io.StringIO, logs.JsonLines]]:
    """The `kashgar` loggers' handler writing to a buffer (the handler `configure` installs)."""
    logger = logging.getLogger("kashgar")
    saved, level, propagate = logger.handlers[:], logger.level, logger.propagate
    logger.setLevel(logging.INFO)
    logger.propagate = False
    for h in saved:
        logger.removeHandler(h)
    out = io.StringIO()
    handler = logs.JsonLines(out)
    handler.setFormatter(logs.JsonFormatter())
    handler._kashgar = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    monkeypatch.setattr(logs, "configure", lambda *a, **k: None)
    try:
        yield out, handler
    finally:
        logger.removeHandler(handler)
        for h in saved:
            logger.addHandler(h)
        logger.setLevel(level)
        logger.propagate = propagate


def lines(out: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(x) for x in out.getvalue().splitlines()]


def access(out: io.StringIO) -> list[dict[str, object]]:
    """The access lines written (another test's job threads may still be logging in this process)."""
    return [x for x in lines(out) if x["logger"] == "kashgar.access"]


def test_an_answered_request_s_line_waits_for_the_next_ones_at_most_a_moment(
        captured: tuple[io.StringIO, logs.JsonLines]) -> None:
    out, handler = captured
    app = create_app({"TESTING": True, "log_level": "INFO"})
    client = app.test_client()
    r1 = client.get("/healthz", headers={"X-Request-ID": "first"})
    r2 = client.get("/levels")
    assert r1.status_code == r2.status_code == 200
    assert access(out) == []  # waiting
    deadline = time.monotonic() + 10 * logs.JsonLines.DELAY_S + 5
    while not access(out) and time.monotonic() < deadline:
        time.sleep(0.02)
    got = access(out)
    assert [(x["path"], x["status"]) for x in got] == [("/healthz", 200), ("/levels", 200)]
    first = got[0]
    # the line is the one a record makes: the same fields, in the same order
    assert list(first) == ["ts", "level", "logger", "msg", "method", "path", "status", "duration_ms", "request_id"]
    assert first["msg"] == "GET /healthz 200" and first["request_id"] == "first" and first["level"] == "info"
    assert first["logger"] == "kashgar.access" and isinstance(first["duration_ms"], float)


def test_an_error_answer_and_any_other_line_are_written_at_once_after_those_waiting(
        captured: tuple[io.StringIO, logs.JsonLines]) -> None:
    out, handler = captured
    app = create_app({"TESTING": True, "log_level": "INFO"})
    client = app.test_client()
    client.get("/healthz")
    assert access(out) == []
    assert client.get("/no-such-path").status_code == 404
    assert [(x["path"], x["status"]) for x in access(out)] == [("/healthz", 200), ("/no-such-path", 404)]
    logging.getLogger("kashgar.service").info("a message")
    assert lines(out)[-1]["msg"] == "a message"


def test_waiting_lines_are_written_once_enough_wait_and_at_a_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    handler = logs.JsonLines(out)  # on no logger: only this test writes to it
    monkeypatch.setattr(logs.JsonLines, "DELAY_S", 60.0)
    monkeypatch.setattr(logs.JsonLines, "MAX_BYTES", 100)
    handler.batch('{"n": 1}')
    assert out.getvalue() == ""
    handler.batch('{"n": 2, "pad": "' + "x" * 100 + '"}')
    assert [x["n"] for x in lines(out)] == [1, 2]
    handler.batch('{"n": 3}')
    handler.flush()  # as at exit (logging's shutdown) and when a web process stops (gunicorn_conf)
    assert [x["n"] for x in lines(out)] == [1, 2, 3]


def test_a_forked_process_starts_with_no_line_waiting(monkeypatch: pytest.MonkeyPatch) -> None:
    """gunicorn forks its web processes from the master: a line waiting there is the master's to
    write, not written again by each worker."""
    import os

    # on no logger and with a long delay: no other line (a job thread's, say) nor the timer on a
    # loaded machine writes the waiting line while the test looks
    handler = logs.JsonLines(io.StringIO())
    monkeypatch.setattr(logs.JsonLines, "DELAY_S", 60.0)
    handler.batch('{"n": "a line of the parent"}')
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: nothing waits; what it writes is its own
        os.close(read)
        os.write(write, str(len(handler._waiting)).encode())
        os._exit(0)
    os.close(write)
    got = os.read(read, 16)
    os.waitpid(pid, 0)
    os.close(read)
    assert got == b"0" and len(handler._waiting) == 1
