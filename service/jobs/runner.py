"""Running one part of a job, wherever it runs (an embedded thread or an RQ worker): claim it,
search with heartbeats, progress and cancel checks, store the result, merge when it is the last."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from ..config import Settings
from .kinds import kind_of
from .model import JobStatus, Record, all_parts_done
from .store import JobStore, StoreUnavailable

log = logging.getLogger("kashgar.jobs")


def process_id() -> str:
    """`host:pid:start` of this process (the owner of embedded parts): `start` is when the process
    started (`process_start(pid)`), so that a new process that got a dead one's pid (a container
    restarted in place numbers its processes alike) is not taken for it."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{process_start(pid)}"


def process_start(pid: int) -> str:
    """When process `pid` started, in clock ticks since boot (Linux `/proc`); "" when unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
    except OSError:
        return ""
    fields = stat[stat.rfind(")") + 2:].split()  # after "pid (comm) ": field 3 (state) onwards
    return fields[19] if len(fields) > 19 else ""  # field 22: starttime


#: Asked to stop by a shutdown, the part goes back to the queue: `requeue(index, attempt, handbacks)`.
Requeue = Callable[[int, int, int], None]

T = TypeVar("T")

#: How long a part waits for an unreachable store to write what it did (its claim, its result,
#: its hand-back), as `kashgar worker` waits for Redis: the search is not thrown away for an outage.
STORE_WAIT_S = 300.0


def until_reachable(fn: Callable[[], T], what: str, wait_s: float = STORE_WAIT_S) -> T:
    """`fn()`, called again while the store is unreachable (a pause growing from 0.1 s to 1 s),
    for up to `wait_s` seconds; then its StoreUnavailable is raised."""
    deadline = time.monotonic() + wait_s
    pause = 0.1
    while True:
        try:
            return fn()
        except StoreUnavailable as exc:
            if time.monotonic() + pause > deadline:
                raise
            if pause == 0.1:
                log.warning("%s: the job store is unreachable (%s); waiting for it", what, exc)
            time.sleep(pause)
            pause = min(pause * 2, 1.0)


def claim(rec: Record, index: int, attempt: int, worker: str, now: float) -> str:
    """Mark part `index` started by `worker` (`ok`), unless it moved on (`stale`) or its job was
    cancelled (`cancelled`)."""
    p = rec["parts"][index]
    if p["attempt"] != attempt or p["status"] != JobStatus.QUEUED.value:
        return "stale"
    if rec.get("cancel_requested"):
        p.update(status=JobStatus.CANCELLED.value, finished_at=now)
        return "cancelled"
    p.update(status=JobStatus.STARTED.value, worker=worker, owner=worker, started_at=now, heartbeat_at=now)
    return "ok"


def execute_part(
    store: JobStore, settings: Settings, job_id: str, index: int, attempt: int, worker: str | None = None,
    stopping: Callable[[], bool] | None = None, requeue: Requeue | None = None,
    claimed: tuple[str, Record] | None = None, on_reconnect: Callable[[], None] | None = None,
) -> str:
    """Run part `index` (attempt `attempt`) of job `job_id`. Returns what happened: `finished`,
    `failed`, `cancelled`, `stale` (the part was given to someone else), `lost`, `missing`, or
    `handed_back`: `stopping()` turned true (the process shuts down), the search stopped and the
    part went back to the queue with its attempt (`requeue`), to start over elsewhere. `claimed`:
    the verdict of `claim` and the record, when the queue claimed the part as it gave it.

    The store out of reach (a Redis restart) costs the part nothing: the search goes on, its
    heartbeats resume when the store is back (`on_reconnect()` is then called once, to say so
    to the reaper: `JobQueue.note_reachable`), and its claim and result wait for the store
    (`until_reachable`)."""
    worker = worker or process_id()
    if claimed is None:
        claimed = until_reachable(
            lambda: store.update(job_id, lambda rec: claim(rec, index, attempt, worker, store.now())),
            f"claiming part {index} of {job_id}")
    if claimed is None:
        return "missing"
    verdict, rec = claimed
    t0 = store.now()
    if verdict != "ok":
        if verdict == "cancelled":
            maybe_merge(store, job_id)
        return verdict
    log.info(
        "part started",
        extra={
            "job_id": job_id,
            "part": index,
            "attempt": attempt,
            "request_id": rec.get("request_id"),
            "worker": worker,
        },
    )
    kind = kind_of(rec["spec"])

    latest: dict[str, Any] = {}
    cancelled = threading.Event()
    lost = threading.Event()
    done = threading.Event()
    shutdown = threading.Event()

    def on_progress(d: dict[str, Any]) -> None:
        latest.update(kind.summary(d))

    def beat_once() -> None:
        now = store.now()
        snapshot = dict(latest)

        def hb(r: Record) -> str:
            p = r["parts"][index]
            if p["attempt"] != attempt or p["status"] != JobStatus.STARTED.value:
                return "lost"
            p["heartbeat_at"] = now
            if snapshot:
                p["progress"] = snapshot
            return "cancel" if r.get("cancel_requested") else "ok"

        res = store.update(job_id, hb)
        state = "lost" if res is None else res[0]
        if state == "cancel":
            cancelled.set()
        elif state == "lost":
            lost.set()

    def heartbeat() -> None:
        # a shutdown is looked for four times a second at least, a beat sent every interval
        tick = min(settings.heartbeat_interval, 0.25) if stopping is not None else settings.heartbeat_interval
        next_beat = time.monotonic() + settings.heartbeat_interval
        unreachable = False  # the last beat did not get through
        while not done.wait(tick):
            try:
                if stopping is not None and requeue is not None and stopping():
                    shutdown.set()
                    return
                if time.monotonic() < next_beat:
                    continue
                next_beat = time.monotonic() + settings.heartbeat_interval
                beat_once()
                if unreachable:
                    unreachable = False
                    log.info("heartbeat through again", extra={"job_id": job_id, "part": index})
                    if on_reconnect is not None:
                        on_reconnect()
            except StoreUnavailable as exc:  # keep searching; the next beat may get through
                if not unreachable:
                    log.warning("heartbeat failed: %s", exc, extra={"job_id": job_id, "part": index})
                unreachable = True
            except Exception:  # noqa: BLE001 - a heartbeat must never kill the search
                log.exception("heartbeat error", extra={"job_id": job_id, "part": index})

    beater = threading.Thread(target=heartbeat, name=f"kashgar-hb-{job_id[:8]}-{index}", daemon=True)
    beater.start()
    result: dict[str, Any] | None = None
    error: str | None = None
    try:
        result = kind.run_part(
            rec["spec"], index, on_progress,
            lambda: cancelled.is_set() or lost.is_set() or shutdown.is_set(),
        )
    except Exception as exc:  # noqa: BLE001 - the search's failure is the job's failure, never lost
        error = f"{exc.__class__.__name__}: {exc}"
        log.exception("part failed", extra={"job_id": job_id, "part": index, "attempt": attempt})
    finally:
        done.set()
        beater.join(timeout=5.0)
    if lost.is_set():
        return "lost"
    if shutdown.is_set() and requeue is not None and not cancelled.is_set():
        return hand_back(store, job_id, index, attempt, requeue)
    t1 = until_reachable(store.now, f"storing part {index} of {job_id}")

    def finish(r: Record) -> str:
        p = r["parts"][index]
        if p["attempt"] != attempt or p["status"] != JobStatus.STARTED.value:
            return "stale"
        p["finished_at"] = t1
        p["heartbeat_at"] = t1
        if error is not None:
            p.update(status=JobStatus.FAILED.value, error=error)
            return "failed"
        assert result is not None
        p["result"] = result
        p["progress"] = kind.summary(result)
        p["status"] = JobStatus.CANCELLED.value if r.get("cancel_requested") else JobStatus.FINISHED.value
        return p["status"]

    finished = until_reachable(lambda: store.update(job_id, finish), f"storing part {index} of {job_id}")
    if finished is None:
        return "missing"
    outcome, rec = finished
    log.info(
        "part %s",
        outcome,
        extra={
            "job_id": job_id,
            "part": index,
            "attempt": attempt,
            "request_id": rec.get("request_id"),
            "elapsed_ms": round((t1 - t0) * 1000, 1),
        },
    )
    if all_parts_done(rec):
        until_reachable(lambda: maybe_merge(store, job_id), f"merging {job_id}")
    return outcome


def hand_back(store: JobStore, job_id: str, index: int, attempt: int, requeue: Requeue) -> str:
    """A running part goes back to the queue with the attempt it had (its search starts over):
    the process running it shuts down, which is no failure of the part."""
    now = until_reachable(store.now, f"handing part {index} of {job_id} back")

    def back(r: Record) -> int | None:
        p = r["parts"][index]
        if p["attempt"] != attempt or p["status"] != JobStatus.STARTED.value:
            return None
        handbacks = int(p.get("handbacks", 0)) + 1
        if r.get("cancel_requested"):
            p.update(status=JobStatus.CANCELLED.value, finished_at=now)
            return None
        p.update(status=JobStatus.QUEUED.value, worker=None, owner=None, started_at=None, heartbeat_at=None,
                 queued_at=now, progress={}, handbacks=handbacks)
        return handbacks

    out = until_reachable(lambda: store.update(job_id, back), f"handing part {index} of {job_id} back")
    if out is None or out[0] is None:
        if out is not None:
            maybe_merge(store, job_id)
        return "stale"
    handbacks = out[0]
    until_reachable(lambda: requeue(index, attempt, handbacks), f"queueing part {index} of {job_id} again")
    log.info("part handed back", extra={"job_id": job_id, "part": index, "attempt": attempt})
    return "handed_back"


def maybe_merge(store: JobStore, job_id: str) -> Record | None:
    """When every part is done and the job has no result yet, merge the parts' results. A job
    cancelled, or with a part that failed for good, gets the merge of what its parts did
    (`partial: true`): the finished parts' results, and what an unfinished part left where its
    kind keeps it (`JobKind.salvage`: a review's decisions reviewed). Merging twice gives the same."""
    rec = store.load(job_id)
    if rec is None or rec.get("result") is not None or rec.get("error") or not all_parts_done(rec):
        return rec
    if rec.get("merged_at") is not None:  # merged already, and nothing to keep
        return rec
    kind = kind_of(rec["spec"])
    partial = bool(rec.get("cancel_requested")) or any(p["status"] != JobStatus.FINISHED.value
                                                       for p in rec["parts"])
    results = [p["result"] if p.get("result") else kind.salvage(p) if partial else None for p in rec["parts"]]
    kept = [r for r in results if r]
    merged: dict[str, Any] | None = None
    error: str | None = None
    if kept:
        try:
            merged = kind.combine(rec["spec"], kept)
            if partial:
                merged["partial"] = True
            merged["elapsed_ms"] = round(
                max((p.get("finished_at") or 0) for p in rec["parts"]) * 1000 - rec["created_at"] * 1000, 3
            )
        except Exception as exc:  # noqa: BLE001
            error = f"merge failed: {exc.__class__.__name__}: {exc}"
            log.exception("merge failed", extra={"job_id": job_id})
    now = store.now()

    def put(r: Record) -> None:
        if r.get("result") is None and not r.get("error") and r.get("merged_at") is None:
            r["merged_at"] = now
            if merged is not None:
                r["result"] = merged
            elif error is not None:
                r["error"] = error

    out = store.update(job_id, put)
    return None if out is None else out[1]
