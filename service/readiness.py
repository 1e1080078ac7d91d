"""What `/readyz` checks, shared by the app's route and the health listener of gunicorn's master
process (`service.health_listener`): the engine loads and the job queue answers."""

from __future__ import annotations

from typing import Any

from . import cards, levels, states
from .jobs import JobManager


def health(manager: JobManager) -> dict[str, Any]:
    """The body of `/healthz`: the process answers."""
    from .openapi import _version

    return {"status": "ok", "version": _version(), "compiled": states.compiled(), "backend": manager.backend,
            "cards": cards.cards_file()}


def readiness(manager: JobManager) -> tuple[bool, dict[str, Any]]:
    """Whether this server can serve, and the body of `/readyz` (`error: not_ready` when not)."""
    checks: dict[str, str] = {}
    ok = True
    try:
        levels.levels()
        cards.cards()
        checks["engine"] = "ok (compiled)" if states.compiled() else "ok (interpreted)"
    except Exception as exc:  # noqa: BLE001 - any failure is "not ready", named in the body
        checks["engine"] = f"error: {exc}"
        ok = False
    try:
        manager.store.ping()
        manager.queue.ping()
        checks["queue"] = "ok"
        workers = manager.queue.workers()
        if workers is not None:
            checks["workers"] = str(workers)
    except Exception as exc:  # noqa: BLE001
        checks["queue"] = f"error: {exc}"
        ok = False
    body: dict[str, Any] = {"ready": ok, "backend": manager.backend, "checks": checks}
    return ok, body if ok else not_ready(body)


def not_ready(body: dict[str, Any], **checks: str) -> dict[str, Any]:
    """`body` (a /readyz answer) marked not ready, with `checks` added to its checks: `error:
    not_ready` is the code kashgar_request_errors_total counts it under (not "other")."""
    body.update(ready=False, error="not_ready")
    body.setdefault("checks", {}).update(checks)
    return body
