"""The job API the web and the workers share: submit a search, read a job (reaping dead parts on
the way), cancel, and reap every active job."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from .. import search
from ..config import Settings
from . import runner
from .model import JobStatus, Record, all_parts_done, job_status, new_record, part_cost
from .queue import EmbeddedQueue, JobQueue, RQQueue, redis_connection
from .store import JobStore, RedisStore, SqliteStore

log = logging.getLogger("kashgar.jobs")


class JobManager:
    def __init__(self, store: JobStore, queue: JobQueue, settings: Settings) -> None:
        self.store = store
        self.queue = queue
        self.settings = settings
        self._reaper_pid = 0  # the process whose reaper thread runs for this manager (a fork has none)
        self._reaper_lock = threading.Lock()

    @property
    def backend(self) -> str:
        return self.queue.backend

    def _timeout(self, spec: dict[str, Any]) -> int:
        """How long a part may run on an RQ worker: a time budget's own and 300 s, else the job TTL."""
        search_by_time = spec.get("time_ms") is not None and spec.get("iterations") is None
        if spec.get("kind", "search") == "search" and search_by_time:
            return int(spec["time_ms"] / 1000) + 300
        return self.settings.job_ttl

    def submit(self, spec: search.SearchSpec, request_id: str | None = None, client: str = "",
               admit: Callable[[str], None] | None = None, cost: float | None = None) -> Record:
        """A new search job of `client` (whose parts take turns with other clients'); `admit(job_id)`
        first counts its `cost` in search-seconds (`service.admission`, which raises past a limit)."""
        return self.submit_parts(spec.to_dict(), len(search.plan(spec)), request_id, client, admit, cost)

    def submit_parts(self, spec: dict[str, Any], parts: int, request_id: str | None = None, client: str = "",
                     admit: Callable[[str], None] | None = None, cost: float | None = None) -> Record:
        """A new job of any kind (`service.jobs.kinds`, named by `spec["kind"]`) in `parts` parts;
        `cost`: its search-seconds (a queue runs short parts on a lane of their own; None: long)."""
        job_id = uuid.uuid4().hex
        rec = new_record(job_id, spec, parts, self.store.now(), request_id, self.queue.owner(), client, cost)
        if admit is not None:
            admit(job_id)
        try:
            self.store.create(rec)
        except BaseException:
            self.store.release(job_id)
            raise
        for index in range(parts):
            self.queue.enqueue(job_id, index, 1, self._timeout(spec), client, cost=part_cost(rec))
        log.info("job submitted", extra={"job_id": job_id, "parts": parts, "request_id": request_id})
        return rec

    def get(self, job_id: str) -> Record | None:
        rec = self.store.load(job_id)
        if rec is None:
            return None
        if _unsettled(rec):
            rec = self.reap(rec) or rec
        if rec.get("result") is None and not rec.get("error") and all_parts_done(rec):
            # the last part's own merge may not have landed yet: merge here (the same result), so a
            # job never reads as settled without what its parts searched
            rec = runner.maybe_merge(self.store, job_id) or rec
        return rec

    def cancel(self, job_id: str) -> tuple[bool, Record] | None:
        """Ask a job to stop. (False, rec) when it was already finished or failed."""
        now = self.store.now()

        def go(rec: Record) -> bool:
            waiting.clear()
            if job_status(rec).terminal:
                return False
            rec["cancel_requested"] = True
            rec["cancelled_at"] = now
            for p in rec["parts"]:
                if p["status"] == JobStatus.QUEUED.value:
                    p.update(status=JobStatus.CANCELLED.value, finished_at=now)
                    waiting.append((p["index"], p["attempt"], int(p.get("handbacks", 0))))
            return True

        waiting: list[tuple[int, int, int]] = []
        out = self.store.update(job_id, go)
        if out is None:
            return None
        changed, rec = out
        if waiting:  # out of the queue at once, not as workers reach them
            self.queue.remove(job_id, waiting, rec.get("client", ""))
        merged = runner.maybe_merge(self.store, job_id)
        return changed, merged or rec

    # ------------------------------------------------------------------------ dead workers

    def _dead_reason(self, job_id: str, part: dict[str, Any], now: float,
                     back: float | None) -> tuple[str, bool] | None:
        """Why the part is to run again, and whether that uses an attempt (its worker died), or
        None. `back`: when the store came back after an outage (`JobQueue.reachable_since`): a
        silence that reaches past it is timed from then, not from the last beat (every process,
        the part's worker too, had lost the store: no sign of a dead worker)."""
        alive = self.queue.owner_alive(part.get("owner"))
        if part["status"] == JobStatus.QUEUED.value:
            if alive is False:
                return f"process {part['owner']} that held the queued part is gone", True
            waited = now - max(part.get("queued_at") or now, back or 0.0)
            lost = waited > self.settings.heartbeat_timeout and self.queue.entry_lost(
                job_id, part["index"], part["attempt"], int(part.get("handbacks", 0)))
            if lost:  # it never ran: queued again with its attempt
                return (f"the queue lost the part after {waited:.1f} s (Redis restarted, or its worker died "
                        "taking it)"), False
            return None
        if part["status"] != JobStatus.STARTED.value:
            return None
        if alive is False:
            return f"worker {part.get('worker')} is gone", True
        beat = part.get("heartbeat_at") or part.get("started_at") or now
        if back is not None and back > beat:
            if now - back > self.settings.heartbeat_timeout:
                return (f"worker {part.get('worker')} lost: no heartbeat for {now - back:.1f} s since the job store "
                        f"came back ({now - beat:.1f} s since its last)"), True
            return None
        if now - beat > self.settings.heartbeat_timeout:
            return f"worker {part.get('worker')} lost: no heartbeat for {now - beat:.1f} s", True
        return None

    def reap(self, rec: Record) -> Record | None:
        """Retry (or fail, after `max_attempts`) the parts whose worker died; queue again, with
        their attempts, the parts the queue lost before they ran."""
        now = self.store.now()
        back = self.queue.reachable_since(float(rec.get("created_at") or 0.0))
        suspects = [
            (p["index"], p["attempt"], *why)
            for p in rec["parts"]
            if (why := self._dead_reason(rec["id"], p, now, back)) is not None
        ]
        if not suspects:
            return rec

        def go(r: Record) -> list[tuple[int, int, int, bool]]:
            again: list[tuple[int, int, int, bool]] = []  # (index, attempt, handbacks, an attempt used)
            for index, attempt, why, used in suspects:
                p = r["parts"][index]
                if p["attempt"] != attempt or p["status"] not in (JobStatus.QUEUED.value, JobStatus.STARTED.value):
                    continue  # someone else reaped it, or it moved on
                handbacks = int(p.get("handbacks", 0))
                if r.get("cancel_requested"):
                    p["history"].append({"attempt": attempt, "worker": p.get("worker"), "error": why, "at": now})
                    p.update(status=JobStatus.CANCELLED.value, finished_at=now, error=why)
                elif not used:
                    p.update(status=JobStatus.QUEUED.value, handbacks=handbacks + 1, queued_at=now,
                             owner=self.queue.owner(), worker=None, started_at=None, heartbeat_at=None)
                    again.append((index, attempt, handbacks + 1, False))
                elif attempt < self.settings.max_attempts:
                    p["history"].append({"attempt": attempt, "worker": p.get("worker"), "error": why, "at": now})
                    p.update(
                        status=JobStatus.QUEUED.value,
                        attempt=attempt + 1,
                        owner=self.queue.owner(),
                        worker=None,
                        started_at=None,
                        heartbeat_at=None,
                        queued_at=now,
                        progress={},
                    )
                    again.append((index, attempt + 1, handbacks, True))
                else:
                    p["history"].append({"attempt": attempt, "worker": p.get("worker"), "error": why, "at": now})
                    p.update(
                        status=JobStatus.FAILED.value,
                        finished_at=now,
                        error=f"{why}; gave up after {attempt} attempt(s)",
                    )
            return again

        out = self.store.update(rec["id"], go)
        if out is None:
            return None
        requeue, rec = out
        if requeue:  # what lost these parts may have lost a client's turn too
            self.queue.repair()
        for index, attempt, handbacks, used in requeue:
            log.warning("part retried" if used else "part lost by the queue, queued again",
                        extra={"job_id": rec["id"], "part": index, "attempt": attempt})
            if used:
                self.store.incr_stat("parts_retried")
            self.queue.enqueue(rec["id"], index, attempt, self._timeout(rec["spec"]), rec.get("client", ""),
                               handbacks, cost=part_cost(rec), front=True)
        return rec

    def start_reaper(self) -> None:
        """With the embedded queue, a daemon thread of this process that reaps every active job
        each third of the heartbeat timeout: a part whose process died is run again (or fails
        visibly) even if nobody polls its job. Once per process (a fork starts its own); the RQ
        worker has its own reaper."""
        if not isinstance(self.queue, EmbeddedQueue):
            return
        self.queue.start()
        with self._reaper_lock:
            if self._reaper_pid == os.getpid():
                return
            self._reaper_pid = os.getpid()
        interval = max(0.2, self.settings.heartbeat_timeout / 3)

        def loop() -> None:
            while True:
                time.sleep(interval)
                try:
                    self.reap_all()
                except Exception as exc:  # noqa: BLE001 - the reaper must outlive a bad moment
                    if isinstance(self.store, SqliteStore) and not os.path.exists(self.store.path):
                        log.warning("reaper: the job store %s is gone; it stops", self.store.path)
                        return
                    log.warning("reaper: %s", exc)

        threading.Thread(target=loop, name="kashgar-reaper", daemon=True).start()

    def reap_all(self) -> int:
        self.queue.repair()
        n = 0
        for job_id in self.store.active_ids():
            rec = self.store.load(job_id)
            if rec is not None and _unsettled(rec):
                self.reap(rec)
                runner.maybe_merge(self.store, job_id)
                n += 1
        return n


def _unsettled(rec: Record) -> bool:
    """Still running, or cancelled with parts still running: a part whose worker dies after the
    cancel is then marked cancelled by the reaper (it stayed `started` forever)."""
    return not job_status(rec).terminal or (bool(rec.get("cancel_requested")) and not all_parts_done(rec))


def build_manager(settings: Settings, jobs_db: str | None = None) -> JobManager:
    """Redis + RQ when `settings.redis_url` is set, else the embedded SQLite store and threads."""
    if settings.redis_url:
        conn = redis_connection(settings.redis_url, settings.redis_timeout)
        store: JobStore = RedisStore(conn, settings.key_prefix, settings.result_ttl, settings.job_ttl)
        return JobManager(store, RQQueue(conn, settings), settings)
    path = jobs_db or settings.jobs_db
    if not path:
        raise ValueError("the embedded job store needs a database path")
    sstore = SqliteStore(path, settings.result_ttl, settings.job_ttl)
    return JobManager(sstore, EmbeddedQueue(sstore, settings), settings)
