"""Structured logs: one JSON object per line, with the request id of the request being served
(`X-Request-ID` from the caller when it is sane, else a fresh one).

The access line of a request answered below 400 is the one line every request writes: it is made
without the logging module's look-up of its caller, and written with the next ones in one write
(at most `JsonLines.DELAY_S` later, or once `JsonLines.MAX_BYTES` wait). Every other line (an
error answer's, a warning, a message of the application) is written at once, after those waiting,
so the log keeps its order."""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading
import time
import uuid
import weakref
from functools import partial
from typing import Any, TextIO

from flask import Flask, Response, g, has_request_context, request

try:
    import orjson
except ImportError:  # pragma: no cover - a run-time dependency; the standard library's if missing
    orjson = None  # type: ignore[assignment]

_STANDARD = set(vars(logging.LogRecord("x", 0, "x", 0, "x", None, None))) | {"message", "asctime"}
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


class JsonFormatter(logging.Formatter):
    """`{"ts", "level", "logger", "msg", "request_id", ...extra fields}`."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if has_request_context() and "request_id" not in record.__dict__:
            out["request_id"] = getattr(g, "request_id", None)
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return dumps(out)


def dumps(obj: Any) -> str:
    """A log line's JSON (anything else as its str)."""
    if orjson is not None:
        try:
            return orjson.dumps(obj, default=str).decode()
        except TypeError:  # orjson's JSONEncodeError (an integer over 64 bits, ...)
            pass
    return json.dumps(obj, default=str)


#: The attribute of a record that may wait to be written with the next ones (`JsonLines`).
BATCHED = "_kashgar_batched"


class JsonLines(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler that writes the records marked `BATCHED` (a 2xx or 3xx request's access
    line) together: each waits at most DELAY_S, or until MAX_BYTES wait, or until any other record,
    which is written at once after them."""

    DELAY_S = 0.2
    MAX_BYTES = 64 * 1024

    def __init__(self, stream: TextIO | None = None) -> None:
        super().__init__(stream)
        self._pid = 0  # the process whose thread writes the waiting lines (a fork has none yet)
        self._forked()
        # a forked process (gunicorn's workers) starts with none waiting: its parent writes its own
        os.register_at_fork(after_in_child=partial(_forked, weakref.ref(self)))

    def _forked(self) -> None:
        self._waiting: list[str] = []
        self._bytes = 0
        self._waiting_lock = threading.Lock()
        self._due = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            line = self.format(record)
        except Exception:  # noqa: BLE001 - as logging.StreamHandler: a bad record is reported, not raised
            self.handleError(record)
            return
        if getattr(record, BATCHED, False):
            self.batch(line)
        else:
            self._write(line)

    def batch(self, line: str) -> None:
        """Write `line` (formatted) with the next ones, DELAY_S from now at the latest."""
        with self._waiting_lock:
            self._waiting.append(line)
            self._bytes += len(line) + 1
            full = self._bytes >= self.MAX_BYTES
        if full:
            self.flush()
            return
        if self._pid != os.getpid():
            self._pid = os.getpid()
            threading.Thread(target=self._writer, name="kashgar-log", daemon=True).start()
        if not self._due.is_set():
            self._due.set()

    def _writer(self) -> None:
        while True:
            self._due.wait()
            time.sleep(self.DELAY_S)
            self._due.clear()
            self.flush()

    def _write(self, line: str | None) -> None:
        """The waiting lines, then `line`, in one write."""
        with self.lock:  # type: ignore[union-attr]
            with self._waiting_lock:
                lines, self._waiting, self._bytes = self._waiting, [], 0
            if line is not None:
                lines.append(line)
            if not lines:
                return
            try:
                self.stream.write("\n".join(lines) + "\n")
                self.stream.flush()
            except Exception:  # noqa: BLE001 - as logging.StreamHandler
                self.handleError(logging.makeLogRecord({"msg": lines[-1]}))

    def flush(self) -> None:
        self._write(None)


def configure(level: str = "INFO", json_lines: bool = True) -> None:
    """Give the `kashgar` loggers one stderr handler (once per process)."""
    logger = logging.getLogger("kashgar")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_kashgar", False) for h in logger.handlers):
        handler = JsonLines(sys.stderr)
        handler.setFormatter(
            JsonFormatter() if json_lines else logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s")
        )
        handler._kashgar = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False


def _forked(ref: weakref.ref[JsonLines]) -> None:
    handler = ref()
    if handler is not None:
        handler._forked()


def _only_json_lines(access: logging.Logger) -> JsonLines | None:
    """The handler of `configure` when it is the one place the access lines go, as JSON lines (the
    access line is then written without a LogRecord); None otherwise (a handler or filter added)."""
    parent = access.parent
    if access.propagate and parent is not None and parent.name == "kashgar" and not parent.propagate:
        handlers = parent.handlers
        if (len(handlers) == 1 and isinstance(handlers[0], JsonLines) and getattr(handlers[0], "_kashgar", False)
                and type(handlers[0].formatter) is JsonFormatter and not handlers[0].filters and not parent.filters):
            return handlers[0]
    return None


def new_request_id() -> str:
    return uuid.uuid4().hex


def init_app(app: Flask) -> None:
    settings = app.config["KASHGAR"]
    configure(settings.log_level, settings.log_json)
    access = logging.getLogger("kashgar.access")
    home = logging.getLogger("kashgar")
    fast = _only_json_lines(access)

    @app.before_request
    def _start() -> None:
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming if _REQUEST_ID.match(incoming) else new_request_id()
        g.t0 = time.perf_counter()

    @app.after_request
    def _finish(resp: Response) -> Response:
        rid = getattr(g, "request_id", None)
        if rid:
            resp.headers["X-Request-ID"] = rid
        if not access.isEnabledFor(logging.INFO):
            return resp
        elapsed = (time.perf_counter() - getattr(g, "t0", time.perf_counter())) * 1000.0
        method, path, status = request.method, request.path, resp.status_code
        extra = {"method": method, "path": path, "status": status, "duration_ms": round(elapsed, 3),
                 "request_id": rid}
        if (status < 400 and fast is not None and not access.handlers and not access.filters
                and len(home.handlers) == 1 and home.handlers[0] is fast):
            # the line JsonFormatter would make of the record, made without one
            fast.batch(dumps({"ts": round(time.time(), 3), "level": "info", "logger": access.name,
                              "msg": f"{method} {path} {status}", **extra}))
            return resp
        # the logger's own info() looks for its caller's file and line, which no line here shows
        record = access.makeRecord(access.name, logging.INFO, "", 0, "%s %s %s", (method, path, status), None,
                                   extra=extra)
        if status < 400:
            setattr(record, BATCHED, True)
        access.handle(record)
        return resp
