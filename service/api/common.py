"""Helpers the blueprints share."""

from __future__ import annotations

from typing import Any, TypeVar

from flask import current_app, g, request
from pydantic import BaseModel

from ..config import Settings
from ..errors import APIError, parse_json_body, validate_model
from ..jobs import JobManager

M = TypeVar("M", bound=BaseModel)

JOB_ID_PARAM = {
    "name": "job_id",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
    "description": "The job id a 202 from POST /suggest returned.",
}


def read_body(model: type[M]) -> M:
    """The request body as `model`: 400 if it is not JSON, 413 if too large, 422 naming the field."""
    data = request.get_data(cache=True)  # raises 413 beyond MAX_CONTENT_LENGTH
    payload = parse_json_body(data)
    return validate_model(model, payload)  # type: ignore[no-any-return]


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
