"""GET /healthz (the process answers) and GET /readyz (it can serve: engine loaded, queue reachable)."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from ..models import Health, Ready
from ..openapi import operation
from ..readiness import health, readiness
from .common import manager

bp = Blueprint("health", __name__)


@bp.get("/healthz")
@operation("/healthz", "get", summary="Liveness", tag="meta", responses={200: ("Alive.", Health)})
def healthz() -> Response:
    return jsonify(health(manager()))


@bp.get("/readyz")
@operation(
    "/readyz",
    "get",
    summary="Readiness",
    tag="meta",
    responses={
        200: ("Ready: the engine loads and the job queue answers.", Ready),
        503: ("Not ready (Redis unreachable when configured).", Ready),
    },
)
def readyz() -> tuple[Response, int]:
    ok, body = readiness(manager())
    return jsonify(body), 200 if ok else 503
