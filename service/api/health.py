"""GET /healthz (the process answers) and GET /readyz (it can serve: engine loaded, queue reachable)."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from .. import engine
from ..models import Health, Ready
from ..openapi import _version, operation
from .common import manager

bp = Blueprint("health", __name__)


@bp.get("/healthz")
@operation("/healthz", "get", summary="Liveness", tag="meta", responses={200: ("Alive.", Health)})
def healthz() -> Response:
    return jsonify({"status": "ok", "version": _version(), "compiled": engine.compiled(), "backend": manager().backend})


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
    checks: dict[str, str] = {}
    ok = True
    try:
        engine.levels()
        engine.cards()
        checks["engine"] = "ok (compiled)" if engine.compiled() else "ok (interpreted)"
    except Exception as exc:  # noqa: BLE001
        checks["engine"] = f"error: {exc}"
        ok = False
    try:
        manager().store.ping()
        manager().queue.ping()
        checks["queue"] = "ok"
        workers = manager().queue.workers()
        if workers is not None:
            checks["workers"] = str(workers)
    except Exception as exc:  # noqa: BLE001
        checks["queue"] = f"error: {exc}"
        ok = False
    body: dict[str, object] = {"ready": ok, "backend": manager().backend, "checks": checks}
    if not ok:
        body["error"] = "not_ready"  # kashgar_request_errors_total counts it under this code, not "other"
    return jsonify(body), 200 if ok else 503
