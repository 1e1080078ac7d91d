"""GET /jobs/<id> (status, progress, result) and DELETE /jobs/<id> (cancel)."""

from __future__ import annotations

import re
from typing import Any

from flask import Blueprint, Response, jsonify

from ..errors import APIError
from ..jobs.model import Record, job_status, progress
from ..models import JobView
from ..openapi import operation
from .common import JOB_ID_PARAM, manager, not_found

bp = Blueprint("jobs", __name__)

_JOB_ID = re.compile(r"^[0-9a-f]{32}$")


def view(rec: Record, backend: str) -> dict[str, Any]:
    spec = rec["spec"]
    parts = []
    for p in rec["parts"]:
        src = p.get("result") or p.get("progress") or {}
        parts.append(
            {
                "index": p["index"],
                "status": p["status"],
                "attempt": p["attempt"],
                "worker": p.get("worker"),
                "iterations": int(src.get("iterations", 0) or 0),
                "error": p.get("error"),
                "history": p.get("history", []),
            }
        )
    errors = [p["error"] for p in rec["parts"] if p["status"] == "failed" and p.get("error")]
    return {
        "job_id": rec["id"],
        "status": job_status(rec).value,
        "created_at": rec["created_at"],
        "finished_at": rec.get("finished_at"),
        "request_id": rec.get("request_id"),
        "request": {k: spec.get(k) for k in ("level", "iterations", "time_ms", "seed", "parallel")},
        "progress": progress(rec),
        "parts": parts,
        "retried": any(p["attempt"] > 1 for p in rec["parts"]),
        "result": rec.get("result"),
        "error": rec.get("error") or ("; ".join(errors) if errors else None),
        "backend": backend,
    }


def _load(job_id: str) -> Record:
    if not _JOB_ID.match(job_id):
        raise not_found(f"no job {job_id!r} (job ids are 32 hex digits)", "/job_id")
    rec = manager().get(job_id)
    if rec is None:
        raise not_found(f"no job {job_id!r} (unknown, its result expired, or lost with a Redis that restarted "
                        "without its data)", "/job_id")
    return rec


@bp.get("/jobs/<job_id>")
@operation(
    "/jobs/<job_id>",
    "get",
    summary="Status, progress and result of a search job",
    tag="search",
    parameters=[JOB_ID_PARAM],
    responses={200: ("The job.", JobView)},
    errors=(404, 503),
)
def get_job(job_id: str) -> Response:
    """Status (queued, started, finished, failed, cancelled), progress while it runs (iterations so
    far, current best decision), and the result when finished. Parts whose worker died are retried
    or marked failed here, visibly (`parts[].history`)."""
    return jsonify(view(_load(job_id), manager().backend))


@bp.delete("/jobs/<job_id>")
@operation(
    "/jobs/<job_id>",
    "delete",
    summary="Cancel a search job",
    tag="search",
    parameters=[JOB_ID_PARAM],
    responses={200: ("The job, now cancelled.", JobView)},
    errors=(404, 409, 503),
)
def cancel_job(job_id: str) -> Response:
    """Stop a queued or running job (`cancelled` at once, its waiting parts out of the queue at
    once, so they delay nobody); a running search stops at its next check,
    and once every part has stopped (`progress.parts_done` = `parts_total`) the job keeps
    what it found (`result.partial`). 409 when the job already finished, failed or was cancelled."""
    _load(job_id)
    out = manager().cancel(job_id)
    if out is None:
        raise not_found(f"no job {job_id!r}", "/job_id")
    changed, rec = out
    if not changed:
        raise APIError(
            409, "job_already_done", f"job {job_id} is already {job_status(rec).value}", "/job_id", location="path"
        )
    return jsonify(view(rec, manager().backend))
