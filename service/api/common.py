"""Helpers the blueprints share."""

from __future__ import annotations

from typing import Any, TypeVar

from flask import current_app, g, request
from pydantic import BaseModel
from werkzeug.exceptions import RequestEntityTooLarge

from .. import idempotency
from ..config import Settings
from ..errors import APIError, parse_json_body, validate_model
from ..jobs import JobManager

M = TypeVar("M", bound=BaseModel)

JOB_ID_PARAM = {
    "name": "job_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
    "description": "The job id a 202 from POST /suggest or POST /reviews returned. With API keys, a job is "
                   "its client's: another key (but an operator's) gets the 404 of an unknown id.",
}

#: The header as the document states it: the rule `idempotency.key_of` checks, from the same constants.
IDEMPOTENCY_KEY_PARAM = {
    "name": idempotency.HEADER,
    "in": "header",
    "required": False,
    "schema": {"type": "string", "minLength": 1, "maxLength": idempotency.MAX_CHARS,
               "pattern": idempotency.KEY_PATTERN},
    "description": "A key of the client's choosing: the request sent again with it gets the job the first one "
                   "made (202, `Idempotent-Replayed: true`), not a second one; with another body, 422.",
}


def read_body(model: type[M]) -> M:
    """The request body as `model`: 415 unless it is sent as `application/json` (a browser sends
    other types cross-site without asking first), 400 if it is not JSON, 413 if too large, 408 if
    the client stops sending it (gunicorn's worker puts a deadline on client sockets), 422 naming
    the field."""
    if request.mimetype != "application/json":
        raise APIError(415, "unsupported_media_type",
                       f"the body must be JSON sent with Content-Type: application/json, not "
                       f"{request.mimetype or 'none'}", "/Content-Type", location="header")
    try:
        data = _body_bytes()
    except TimeoutError:
        raise APIError(408, "request_timeout", "the request body did not arrive in time", "") from None
    g.body_bytes = data  # as it came (`service.idempotency` compares a request sent again by it)
    payload = parse_json_body(data)
    return validate_model(model, payload)  # type: ignore[no-any-return]


def _body_bytes() -> bytes:
    """The body, read from the server's stream here rather than through werkzeug's: werkzeug stops
    a chunked body at MAX_CONTENT_LENGTH without saying so (the JSON would be parsed cut short),
    and turns a socket timeout into a generic 400. A chunked body has no Content-Length; the server
    ends its stream (`wsgi.input_terminated`), so one byte more than the limit is read, and too
    many is a 413."""
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    env = request.environ
    stream = env["wsgi.input"]
    length = request.content_length
    if length is not None:
        if limit is not None and length > limit:
            raise RequestEntityTooLarge()
        data: bytes = stream.read(length) if length else b""
        if len(data) < length:
            raise APIError(400, "incomplete_body", f"the body ended after {len(data)} of its {length} bytes", "")
        return data
    if env.get("wsgi.input_terminated"):
        data = stream.read() if limit is None else stream.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise RequestEntityTooLarge()
        return data
    return b""  # no length and a server that does not end the stream: reading could hang


def settings() -> Settings:
    return current_app.config["KASHGAR"]  # type: ignore[no-any-return]


def manager() -> JobManager:
    return current_app.extensions["kashgar_jobs"]  # type: ignore[no-any-return]


def request_id() -> str:
    return str(getattr(g, "request_id", ""))


def not_found(what: str, ptr: str, location: str = "path") -> APIError:
    return APIError(404, "not_found", what, ptr, location=location)


def with_request_id(body: dict[str, Any]) -> dict[str, Any]:
    body["request_id"] = request_id()
    return body
