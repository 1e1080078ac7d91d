"""A search job as data: one JSON record per job, with one entry per root-parallel part.

The record is the single source of truth of a job, whatever runs its parts (embedded threads or
RQ workers). Every change goes through `JobStore.update`, an atomic read-modify-write.
"""

from __future__ import annotations

from enum import Enum
from typing import Any


class JobStatus(str, Enum):  # noqa: UP042 - str() of a member stays what it was
    """The status of a job (and of each of its parts)."""

    QUEUED = "queued"
    STARTED = "started"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in (JobStatus.FINISHED, JobStatus.FAILED, JobStatus.CANCELLED)


TERMINAL = {JobStatus.FINISHED.value, JobStatus.FAILED.value, JobStatus.CANCELLED.value}

Record = dict[str, Any]


def new_record(
    job_id: str, spec: dict[str, Any], n_parts: int, now: float, request_id: str | None, owner: str | None,
    client: str = "", cost: float | None = None,
) -> Record:
    return {
        "id": job_id,
        "client": client,
        "cost": cost,
        "created_at": now,
        "request_id": request_id,
        "spec": spec,
        "cancel_requested": False,
        "result": None,
        "error": None,
        "finished_at": None,
        "parts": [new_part(i, now, owner) for i in range(n_parts)],
    }


def new_part(index: int, now: float, owner: str | None) -> dict[str, Any]:
    return {
        "index": index,
        "status": JobStatus.QUEUED.value,
        "attempt": 1,
        "owner": owner,
        "worker": None,
        "queued_at": now,
        "started_at": None,
        "finished_at": None,
        "heartbeat_at": None,
        "progress": {},
        "result": None,
        "error": None,
        "history": [],
    }


def job_status(rec: Record) -> JobStatus:
    """A job with a part failed for good is `failed` once its other parts are done and what they
    left is merged (`merged_at`: `runner.maybe_merge`), so that a failed job is read with all it
    keeps; until then it is `started` (a cancelled one: `failed` at once)."""
    parts = rec["parts"]
    states = [p["status"] for p in parts]
    if rec.get("error"):
        return JobStatus.FAILED
    if any(s == JobStatus.FAILED.value for s in states):
        merged = rec.get("result") is not None or rec.get("merged_at") is not None
        if rec.get("cancel_requested") or (merged and all_parts_done(rec)):
            return JobStatus.FAILED
        return JobStatus.STARTED
    if rec.get("cancel_requested"):
        return JobStatus.CANCELLED
    if all(s == JobStatus.FINISHED.value for s in states):
        return JobStatus.FINISHED if rec.get("result") is not None else JobStatus.STARTED
    if any(s in (JobStatus.STARTED.value, JobStatus.FINISHED.value) for s in states):
        return JobStatus.STARTED
    return JobStatus.QUEUED


def all_parts_done(rec: Record) -> bool:
    return all(p["status"] in TERMINAL for p in rec["parts"])


def progress(rec: Record) -> dict[str, Any]:
    """Iterations so far (all parts) and the current best decision (most visited over the parts
    that reported one, else the best of the part that ran furthest)."""
    total = 0
    votes: dict[str, float] = {}
    furthest: tuple[int, str | None] = (-1, None)
    for p in rec["parts"]:
        if p.get("result"):
            it = int(p["result"].get("iterations", 0))
            best = p["result"].get("decision_text")
        else:
            it = int(p.get("progress", {}).get("iterations", 0))
            best = p.get("progress", {}).get("best")
        total += it
        if isinstance(best, str):
            votes[best] = votes.get(best, 0.0) + max(it, 1)
            if it > furthest[0]:
                furthest = (it, best)
    best_text = max(sorted(votes), key=lambda k: votes[k]) if votes else furthest[1]
    if rec.get("result"):
        best_text = rec["result"].get("decision_text", best_text)
        total = int(rec["result"].get("iterations", total))
    done = sum(1 for p in rec["parts"] if p["status"] in TERMINAL)
    return {"iterations": total, "best": best_text, "parts_total": len(rec["parts"]), "parts_done": done}


#: The search-seconds of a part of a job recorded without its cost: as long as any.
UNKNOWN_PART_COST = 1e12
#: The longest part an express lane takes, in search-seconds: a job of such parts waits for no long
#: part (the embedded queue's express thread; on Redis the express queue and its workers).
EXPRESS_MAX_S = 5.0


def part_cost(rec: Record) -> float:
    """The search-seconds of one of the job's parts: its cost shared equally among them."""
    cost = rec.get("cost")
    return UNKNOWN_PART_COST if cost is None else float(cost) / max(1, len(rec["parts"]))
