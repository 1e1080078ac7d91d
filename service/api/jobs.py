"""GET /jobs/<id> (status, progress, result), GET /jobs/<id>/events and DELETE /jobs/<id> (cancel).

With API keys, a job is its client's: another client (but an operator) gets the 404 of an unknown
id, so it learns nothing of the job, not even that it exists. Without keys, the id is what lets
one read and cancel a job."""

from __future__ import annotations

import json
import re
import threading
import time
import weakref
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, jsonify, request, stream_with_context

from .. import clients
from ..errors import APIError
from ..jobs.kinds import kind_of
from ..jobs.model import Record, job_status
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
        "kind": kind_of(spec).name,
        "request": request_of(spec),
        "progress": kind_of(spec).progress(rec),
        "parts": parts,
        "retried": any(p["attempt"] > 1 for p in rec["parts"]),
        "result": rec.get("result"),
        "error": rec.get("error") or ("; ".join(errors) if errors else None),
        "backend": backend,
    }


def request_of(spec: dict[str, Any]) -> dict[str, Any]:
    """What the job was asked: a search's level and budget; a review's level, seats and how many moves."""
    if kind_of(spec).name == "review":
        return {"level": spec.get("level"), "seats": spec.get("seats"), "seed": spec.get("seed"),
                "moves": len(spec.get("moves", []))}
    return {k: spec.get(k) for k in ("level", "elo", "iterations", "time_ms", "seed", "parallel")}


def _load(job_id: str) -> Record:
    """The job, if the request's client may see it (`clients.Client.sees`); else, as for an id
    nobody has, 404."""
    if not _JOB_ID.match(job_id):
        raise not_found(f"no job {job_id!r} (job ids are 32 hex digits)", "/job_id")
    rec = manager().get(job_id)
    if rec is None or not clients.current().sees(str(rec.get("client", ""))):
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


#: Event streams a process serves at once: each holds one of its threads (not the app's lock).
MAX_STREAMS = 16
STREAM_LIFETIME_S = 600.0
_open = [0]  # streams open in this process: counted when one is admitted, before its 200
_open_lock = threading.Lock()
POLL_S = 0.25  # how often a stream reads its job
KEEPALIVE_S = 5.0  # a comment line this often: a client gone is noticed at the next write


def _sse(event: str, data: Any, event_id: int) -> str:
    return f"id: {event_id}\nevent: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n"


def _decisions(rec: Record) -> list[dict[str, Any]]:
    """A review's decisions reviewed so far, finished parts' and running parts' alike."""
    out = []
    for p in rec["parts"]:
        out += (p.get("result") or p.get("progress") or {}).get("decisions", [])
    return out


def events(job_id: str, lifetime_s: float) -> Iterator[str]:
    """The job's events until it settles or `lifetime_s` passes: `progress` when it changes,
    `decision` for each decision a review has reviewed, `end` with the job's view."""
    n = 0
    sent: set[int] = set()
    last: Any = None
    end = time.monotonic() + lifetime_s
    wrote = time.monotonic()
    yield "retry: 2000\n\n"
    while True:
        rec = manager().get(job_id)
        if rec is None:
            n += 1
            yield _sse("error", {"error": "not_found", "message": f"job {job_id} is gone (its result expired)"}, n)
            return
        v = view(rec, manager().backend)
        if v["progress"] != last:
            last = v["progress"]
            n += 1
            yield _sse("progress", {"status": v["status"], **last}, n)
            wrote = time.monotonic()
        for d in _decisions(rec):
            if int(d["move"]) not in sent:
                sent.add(int(d["move"]))
                n += 1
                yield _sse("decision", d, n)
                wrote = time.monotonic()
        if job_status(rec).terminal:
            n += 1
            yield _sse("end", v, n)
            return
        if time.monotonic() >= end:
            n += 1
            yield _sse("timeout", {"message": f"this stream ends after {lifetime_s:g} s: open it again"}, n)
            return
        if time.monotonic() - wrote >= KEEPALIVE_S:
            yield ": keep-alive\n\n"
            wrote = time.monotonic()
        time.sleep(POLL_S)


@bp.get("/jobs/<job_id>/events")
@operation(
    "/jobs/<job_id>/events",
    "get",
    summary="A job's progress as Server-Sent Events",
    tag="search",
    parameters=[JOB_ID_PARAM],
    responses={200: ("A text/event-stream: progress, decision (a review's), end.", None)},
    errors=(404, 503),
    content_type="text/event-stream",
)
def job_events(job_id: str) -> Response:
    """The job as it happens, for a long `/suggest` and a review alike: `progress` whenever it
    changes (iterations and the current best; decisions done of the total), `decision` for each
    decision a review has reviewed, and `end` with the job as `GET /jobs/<id>` gives it; a comment
    every 5 s keeps proxies from closing it. A stream lasts at most 10 minutes (then `timeout`: open
    it again); a process serves 16 at once (503 beyond). A client that goes away costs nothing past
    the next write (5 s at most)."""
    _load(job_id)
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if request.method == "HEAD":  # no body: no stream to count
        return Response(mimetype="text/event-stream", headers=headers)
    slot = _StreamSlot()  # 503 when the process serves MAX_STREAMS already

    def stream() -> Iterator[str]:
        try:
            yield from events(job_id, STREAM_LIFETIME_S)
        finally:
            slot.release()

    try:
        response = Response(stream_with_context(stream()), mimetype="text/event-stream", headers=headers)
        # given back when the server closes the response: the stream ended, the client left, or
        # it never began (the generator's own `finally` runs only once it has started)
        response.call_on_close(slot.release)
        weakref.finalize(response, slot.release)  # an answer replaced before it was sent
    except BaseException:
        slot.release()
        raise
    return response


def open_streams() -> int:
    """Event streams this process holds now (admitted, not yet given back)."""
    with _open_lock:
        return _open[0]


class _StreamSlot:
    """One event stream's place in the process's count: taken when the stream is admitted, before
    its 200 (the check and the count are one step, so streams opened at once cannot all pass the
    check), given back once, however many ways its end is told."""

    def __init__(self) -> None:
        with _open_lock:
            if _open[0] >= MAX_STREAMS:
                raise APIError(503, "too_many_streams", f"this process serves {MAX_STREAMS} event streams at "
                               "once; poll GET /jobs/<id> or retry", "", headers={"Retry-After": "5"})
            _open[0] += 1
        self._held = True

    def release(self) -> None:
        with _open_lock:
            if self._held:
                self._held = False
                _open[0] -= 1
