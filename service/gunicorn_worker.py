"""The gunicorn worker of `kashgar serve`: gunicorn's sync worker with a deadline on every read
and write of a client's socket (`KASHGAR_CLIENT_TIMEOUT_S`, default 10 s).

A sync worker serves one connection at a time. Without a deadline, a client that sends part of a
request and then stalls holds its worker until gunicorn's worker timeout kills it (50 s by
default), and as many such clients as there are workers freeze the server. With it, a stalled
body is answered 408 (`service.api.common.read_body`) and a stalled request head is dropped.
A public deployment should still sit behind a buffering proxy, as gunicorn's documentation says of
sync workers; this keeps a server reachable directly from being frozen by a few slow clients.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from gunicorn.workers.sync import SyncWorker


def client_timeout_s() -> float:
    raw = os.environ.get("KASHGAR_CLIENT_TIMEOUT_S", "") or "10"
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"KASHGAR_CLIENT_TIMEOUT_S={raw!r}: not a number of seconds") from None
    if not value > 0:
        raise ValueError(f"KASHGAR_CLIENT_TIMEOUT_S={raw!r}: must be above 0")
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


class ClientTimeoutSyncWorker(SyncWorker):
    """`worker_class` in `service/gunicorn_conf.py`."""

    def init_process(self) -> None:
        self.client_timeout = client_timeout_s()
        self.log.error_log.addFilter(_SlowClientFilter())
        super().init_process()

    def handle(self, listener: Any, client: Any, addr: Any) -> None:
        client.settimeout(self.client_timeout)
        super().handle(listener, client, addr)
