"""What runs the parts of a job: threads of this process (embedded) or RQ workers (Redis).
Both take `enqueue(job_id, index, attempt)` and leave the job's truth in the store."""

from __future__ import annotations

import logging
import os
import queue as stdqueue
import socket
import threading
import time
from abc import ABC, abstractmethod
from datetime import datetime, timezone
from typing import Any

from ..config import Settings
from . import runner
from .model import JobStatus
from .store import JobStore, StoreUnavailable

log = logging.getLogger("kashgar.jobs")

#: The importable job function RQ workers run.
TASK = "service.jobs.tasks.run_part"
MAX_DROPPED = 10_000  # dropped part attempts an embedded queue remembers


class JobQueue(ABC):
    backend: str = "abstract"

    @abstractmethod
    def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None, client: str = "") -> None:
        """Queue part `index` (attempt `attempt`) of `client`'s job."""

    @abstractmethod
    def depth(self) -> int:
        """Parts waiting for a worker."""

    def owner(self) -> str | None:
        """Who holds queued parts (embedded: this process); None when the queue is shared."""
        return None

    def owner_alive(self, owner: str | None) -> bool | None:
        """Whether the process holding a part still runs; None when that cannot be known here."""
        return None

    def ping(self) -> None:
        return None

    def workers(self) -> int | None:
        return None

    def entry_lost(self, job_id: str, index: int, attempt: int) -> bool:
        """Whether the queue no longer holds (or will never run) this part attempt."""
        return False


class EmbeddedQueue(JobQueue):
    """Daemon threads of this process; they die with it, and the reaper thread of another process
    of the same machine (`JobManager.start_reaper`), or a poll of the job, sees that the owner is
    gone and runs the part again."""

    backend = "embedded"

    def __init__(self, store: JobStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self._queue: stdqueue.Queue[tuple[str, int, int]] = stdqueue.Queue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._pid = os.getpid()
        # part attempts a thread took but could not run (the store failed before the claim):
        # `entry_lost` says so, and the reaper runs them again
        self._dropped: dict[tuple[str, int, int], None] = {}

    def _ensure_threads(self) -> None:
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's threads are not here
                self._threads = []
                self._queue = stdqueue.Queue()
                self._pid = os.getpid()
            self._threads = [t for t in self._threads if t.is_alive()]
            while len(self._threads) < max(1, self.settings.embedded_threads):
                t = threading.Thread(target=self._loop, name=f"kashgar-embedded-{len(self._threads)}", daemon=True)
                t.start()
                self._threads.append(t)

    def _loop(self) -> None:
        while True:
            job_id, index, attempt = self._queue.get()
            try:
                runner.execute_part(self.store, self.settings, job_id, index, attempt, worker=runner.process_id())
            except Exception:  # noqa: BLE001 - the thread must survive any job
                log.exception("embedded part crashed", extra={"job_id": job_id, "part": index})
                with self._lock:
                    self._dropped[(job_id, index, attempt)] = None
                    while len(self._dropped) > MAX_DROPPED:
                        del self._dropped[next(iter(self._dropped))]
            finally:
                self._queue.task_done()

    def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None, client: str = "") -> None:
        self._ensure_threads()
        self._queue.put((job_id, index, attempt))

    def depth(self) -> int:
        """Parts waiting for a thread, in every process that shares the store (this process's own
        queue holds only the parts it was given)."""
        waiting = 0
        for job_id in self.store.active_ids():
            rec = self.store.load(job_id)
            if rec is not None:
                waiting += sum(1 for p in rec["parts"] if p["status"] == JobStatus.QUEUED.value)
        return waiting

    def owner(self) -> str | None:
        return runner.process_id()

    def owner_alive(self, owner: str | None) -> bool | None:
        """Whether the process `owner` (`host:pid:start`, or `host:pid` before 2026-11-24) still
        runs: None for another host; False when its pid is free, or taken by a process that started
        at another time."""
        if not owner:
            return None
        host, pid, *start = owner.split(":")
        if host != socket.gethostname() or not pid.isdigit():
            return None
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        if start and start[0] and runner.process_start(int(pid)) not in (start[0], ""):
            return False
        return True

    def entry_lost(self, job_id: str, index: int, attempt: int) -> bool:
        """True for a part attempt of this process that a thread took and dropped (an error before it
        was claimed, as a job database locked for longer than its timeout): it is still `queued`
        with a live owner, and without this nobody would run it again."""
        with self._lock:
            return (job_id, index, attempt) in self._dropped

    def join(self) -> None:
        """Wait until every queued part has run (tests)."""
        self._queue.join()


class RQQueue(JobQueue):
    """One RQ job per part attempt, id `<job>-p<index>-a<attempt>`, on queue `settings.queue_name`."""

    backend = "redis"

    def __init__(self, connection: Any, settings: Settings) -> None:
        from rq import Queue

        self.connection = connection
        self.settings = settings
        self.rq_queue = Queue(settings.queue_name, connection=connection)

    @staticmethod
    def rq_job_id(job_id: str, index: int, attempt: int) -> str:
        return f"{job_id}-p{index}-a{attempt}"

    def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None, client: str = "") -> None:
        import redis

        try:
            self.rq_queue.enqueue_call(
                TASK,
                args=(job_id, index, attempt),
                job_id=self.rq_job_id(job_id, index, attempt),
                timeout=timeout_s or self.settings.job_ttl,
                result_ttl=0,
                failure_ttl=self.settings.result_ttl,
                description=f"kashgar search {job_id} part {index}",
            )
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def depth(self) -> int:
        import redis

        try:
            return int(self.rq_queue.count)
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def ping(self) -> None:
        import redis

        try:
            self.connection.ping()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def workers(self) -> int | None:
        from rq import Worker

        try:
            return len(Worker.all(queue=self.rq_queue))
        except Exception:  # noqa: BLE001
            return None

    def entry_lost(self, job_id: str, index: int, attempt: int) -> bool:
        """Asked about a part that has waited unclaimed longer than the heartbeat timeout: True
        when its RQ job is gone (a Redis restart can drop it), failed or ended, queued but in
        neither of the queue's lists, or started without its work horse ever claiming the part (a
        horse claims it first thing; one that started around a Redis outage can die without RQ
        recording it, and the part stayed queued forever); False while it waits, and when Redis
        cannot be asked."""
        import redis
        from rq.exceptions import NoSuchJobError
        from rq.job import Job
        from rq.job import JobStatus as RQStatus

        rq_id = self.rq_job_id(job_id, index, attempt)
        try:
            job = Job.fetch(rq_id, connection=self.connection)
            status = job.get_status(refresh=False)
            if status == RQStatus.QUEUED:
                if self._waiting(rq_id):
                    return False
                job.refresh()  # it may have started while we looked
                status = job.get_status(refresh=False)
                if status == RQStatus.QUEUED:
                    return not self._waiting(rq_id)
            if status == RQStatus.STARTED:
                started = job.started_at
                if started is None:
                    return False
                if started.tzinfo is None:
                    started = started.replace(tzinfo=timezone.utc)
                return (datetime.now(timezone.utc) - started).total_seconds() > self.settings.heartbeat_timeout
            return status in (RQStatus.FAILED, RQStatus.STOPPED, RQStatus.CANCELED, RQStatus.FINISHED)
        except NoSuchJobError:
            return True
        except (redis.exceptions.RedisError, OSError):
            return False

    def _waiting(self, rq_id: str) -> bool:
        """Whether the RQ job waits in the queue's list, or was taken by a worker moments ago.

        RQ (3.x) moves a job a worker takes to the queue's intermediate list, still QUEUED, until
        its work horse starts it, normally within milliseconds: such a part is not lost (a backlog
        made parts caught in that moment look lost, and, twice, failed their jobs). But a worker
        whose connection breaks while it takes one (a Redis restart) leaves it there, and RQ
        cleans that list only every ten minutes: a part in it longer than the heartbeat timeout
        (timed from when this check first saw it there) is lost, and taken out of the list."""
        if self.connection.lpos(self.rq_queue.key, rq_id) is not None:
            return True
        intermediate = self.rq_queue.intermediate_queue_key
        if self.connection.lpos(intermediate, rq_id) is None:
            return False
        seen_key = f"{self.settings.key_prefix}:taken-since:{rq_id}"
        now = time.time()
        if self.connection.set(seen_key, now, nx=True, ex=3600):
            return True
        since = float(self.connection.get(seen_key) or now)
        if now - since <= self.settings.heartbeat_timeout:
            return True
        self.connection.lrem(intermediate, 0, rq_id)
        return False


def redis_connection(url: str, timeout: float | None = 2.0, connect_timeout: float = 2.0) -> Any:
    """A Redis client that fails fast (the web answers 503 instead of hanging)."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    return redis.Redis.from_url(
        url,
        socket_connect_timeout=connect_timeout,
        socket_timeout=timeout,
        retry=Retry(NoBackoff(), 0),
        health_check_interval=0,
    )
