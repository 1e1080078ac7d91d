"""Structured logs: one JSON object per line, with the request id of the request being served
(`X-Request-ID` from the caller when it is sane, else a fresh one)."""

from __future__ import annotations

import json
import logging
import re
import sys
import time
import uuid
from typing import Any

from flask import Flask, Response, g, has_request_context, request

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
        return json.dumps(out, default=str)


def configure(level: str = "INFO", json_lines: bool = True) -> None:
    """Give the `kashgar` loggers one stderr handler (once per process)."""
    logger = logging.getLogger("kashgar")
    logger.setLevel(level.upper())
    if not any(getattr(h, "_kashgar", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(
            JsonFormatter() if json_lines else logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s")
        )
        handler._kashgar = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
        logger.propagate = False


def new_request_id() -> str:
    return uuid.uuid4().hex


def init_app(app: Flask) -> None:
    settings = app.config["KASHGAR"]
    configure(settings.log_level, settings.log_json)
    access = logging.getLogger("kashgar.access")

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
        elapsed = (time.perf_counter() - getattr(g, "t0", time.perf_counter())) * 1000.0
        access.info(
            "%s %s %s",
            request.method,
            request.path,
            resp.status_code,
            extra={
                "method": request.method,
                "path": request.path,
                "status": resp.status_code,
                "duration_ms": round(elapsed, 3),
                "request_id": rid,
            },
        )
        return resp
