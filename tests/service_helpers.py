"""The service app behind a real HTTP server in this process, for tests that talk HTTP to it."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

from flask import Flask
from werkzeug.test import TestResponse


@contextlib.contextmanager
def serve_app(config: Mapping[str, Any] | None = None, app: Any = None) -> Iterator[str]:
    """`app`, else `create_app(TESTING, log level WARNING, then config)`, served on a free loopback
    port by werkzeug's threaded server; yields its base URL and shuts it down after."""
    from werkzeug.serving import make_server

    from service import create_app

    if app is None:
        app = create_app({"TESTING": True, "log_level": "WARNING", **(config or {})})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


#: The settings of the in-process app most API tests use (small sync limits, quick heartbeats).
TEST_CONFIG: dict[str, Any] = {
    "TESTING": True,
    "sync_max_iterations": 400,
    "sync_max_ms": 500,
    "max_iterations": 1_000_000,
    "part_iterations": 100,
    "heartbeat_interval": 0.05,
    "heartbeat_timeout": 2.0,
    "max_body_bytes": 200_000,
    "log_level": "WARNING",
}


class Resp:
    """A test response whose JSON body is typed `Any` (Flask's is Optional)."""

    def __init__(self, r: TestResponse) -> None:
        self.raw = r
        self.status_code = r.status_code
        self.headers = r.headers
        self.data = r.data
        self.is_json = r.is_json
        self.json: Any = r.get_json(silent=True)

    def get_data(self, as_text: bool = False) -> Any:
        return self.raw.get_data(as_text=True) if as_text else self.raw.get_data()


class Client:
    def __init__(self, app: Flask) -> None:
        self.c = app.test_client()

    def get(self, *a: Any, **kw: Any) -> Resp:
        return Resp(self.c.get(*a, **kw))

    def post(self, *a: Any, **kw: Any) -> Resp:
        return Resp(self.c.post(*a, **kw))

    def put(self, *a: Any, **kw: Any) -> Resp:
        return Resp(self.c.put(*a, **kw))

    def delete(self, *a: Any, **kw: Any) -> Resp:
        return Resp(self.c.delete(*a, **kw))


FlaskClient = Client


def wait_job(client: FlaskClient, url: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = client.get(url)
        assert r.status_code == 200, r.json
        if r.json["status"] in ("finished", "failed", "cancelled"):
            return r.json  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"job {url} did not end: {r.json}")


def moved(record: dict[str, Any], index: int, move: Any) -> dict[str, Any]:
    """`record` with its move `index` replaced by `move`."""
    return {**record, "moves": record["moves"][:index] + [move] + record["moves"][index + 1:]}


#: Records refused by POST /reviews and POST /table/load alike, each (how the record is changed, the
#: error code, the pointer it names or a field under it): not a record (`invalid_record`), or one
#: that does not replay (`record_does_not_replay`, at the move's field or the result).
REFUSED_RECORDS: list[tuple[Any, str, str]] = [
    (lambda r: {**r, "players": 5}, "invalid_record", "/record/players"),
    (lambda r: {**r, "seed": 2**64}, "invalid_record", "/record/seed"),
    (lambda r: {**r, "seed": None}, "invalid_record", "/record/seed"),
    (lambda r: {**r, "schema": "kashgar/record@2"}, "invalid_record", "/record/schema"),
    (lambda r: moved(r, 3, 7), "invalid_record", "/record/moves/3"),
    (lambda r: moved(r, 3, {"seat": 0}), "invalid_record", "/record/moves/3"),
    (lambda r: {**r, "seed": None, "initial_state": {"players": 9}}, "invalid_record", "/record/initial_state"),
    (lambda r: {**r, "moves": r["moves"][:9]}, "record_does_not_replay", "/record/result"),
    (lambda r: moved(r, 5, {**r["moves"][5], "decision": "fulfil 40"}), "record_does_not_replay",
     "/record/moves/5/decision"),
    (lambda r: moved(r, 0, {**r["moves"][0], "seat": 1 - r["moves"][0]["seat"]}), "record_does_not_replay",
     "/record/moves/0/seat"),
]
