"""The gunicorn worker of `kashgar serve`: gunicorn's sync worker with a deadline on every read
and write of a client's socket (`KASHGAR_CLIENT_TIMEOUT_S`, default 10 s).

A sync worker serves one connection at a time. Without a deadline, a client that sends part of a
request and then stalls holds its worker until gunicorn's worker timeout kills it (50 s by
default), and as many such clients as there are workers freeze the server. With it, a stalled
body is answered 408 (`service.api.common.read_body`) and a stalled request head is dropped.

It also answers the errors gunicorn raises itself, before the app sees the request (a request
line over 4094 bytes: 414; too many or too large headers: 431; a bad Content-Length: 400), with
the service's JSON error body instead of gunicorn's HTML page.
A public deployment should still sit behind a buffering proxy, as gunicorn's documentation says of
sync workers; this keeps a server reachable directly from being frozen by a few slow clients.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import gunicorn.util
from gunicorn.workers.sync import SyncWorker

from .config import Settings
from .errors import APIError, http_code
from .logs import new_request_id


def client_timeout_s() -> float:
    """`KASHGAR_CLIENT_TIMEOUT_S` (Settings.client_timeout_s), which must be above 0."""
    value = Settings.from_env().client_timeout_s
    if not value > 0:
        raise ValueError(f"KASHGAR_CLIENT_TIMEOUT_S={value!r}: must be above 0")
    return value


class _SlowClientFilter(logging.Filter):
    """gunicorn logs a socket timeout while it reads a request head as an error with a traceback;
    a slow client is not a server error, so it becomes one plain warning line."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, TimeoutError):
            record.msg, record.args, record.exc_info, record.exc_text = (
                "a client sent no complete request within the client timeout; connection closed",
                (),
                None,
                None,
            )
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def write_json_error(sock: Any, status: int, reason: str, message: str) -> None:
    """gunicorn's `util.write_error`, writing the service's error body (`service.errors`) with a
    fresh request id, in the body and `X-Request-ID` as every answer of the app has, and logged on
    the access log (the request was not read far enough to take the caller's own id; gunicorn also
    answers 500 here for an error of its own while it handles a request)."""
    where = "path" if status == 414 else "header" if status == 431 else "body"
    code = http_code(status, reason)
    error = APIError(status, code, message or reason, "", location=where)
    rid = new_request_id()
    data = json.dumps(dict(error.body(), request_id=rid)).encode()
    logging.getLogger("kashgar.access").info(
        "answered by gunicorn, not the app: %s %s", status, code,
        extra={"status": status, "error": code, "request_id": rid},
    )
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: application/json\r\n"
            f"X-Request-ID: {rid}\r\nContent-Length: {len(data)}\r\n\r\n").encode("latin-1")
    gunicorn.util.write_nonblock(sock, head + data)


class ClientTimeoutSyncWorker(SyncWorker):
    """`worker_class` in `service/gunicorn_conf.py`."""

    def init_process(self) -> None:
        self.client_timeout = client_timeout_s()
        self.log.error_log.addFilter(_SlowClientFilter())
        # gunicorn's workers call `util.write_error` for the errors they answer themselves; in this
        # worker process it writes JSON.
        gunicorn.util.write_error = write_json_error  # type: ignore[assignment]
        super().init_process()

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        client.settimeout(self.client_timeout)
        super().handle(listener, client, addr)
