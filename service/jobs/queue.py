"""What runs the parts of a job: threads of this process (embedded) or RQ workers (Redis).
Both take `enqueue(job_id, index, attempt)` and leave the job's truth in the store."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from abc import ABC, abstractmethod
from datetime import UTC, datetime
from typing import Any

from ..config import Settings
from . import runner
from .model import EXPRESS_MAX_S, UNKNOWN_PART_COST, Record, part_cost
from .store import SqliteStore, StoreUnavailable

log = logging.getLogger("kashgar.jobs")

#: The importable job function RQ workers run.
TASK = "service.jobs.tasks.run_part"


class JobQueue(ABC):
    backend: str = "abstract"

    @abstractmethod
    def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None, client: str = "",
                handbacks: int = 0, cost: float | None = None, front: bool = False) -> None:
        """Queue part `index` (attempt `attempt`, handed back `handbacks` times) of `client`'s job;
        the parts of different clients take turns. `cost`: the part's search-seconds (None: long);
        `front`: a part that ran before (retried, handed back), which waits for no part queued
        after its first attempt: on Redis, first of its client's parts and at the front of the RQ
        queue; embedded, taken before every part not queued `front`."""

    def remove(self, job_id: str, parts: list[tuple[int, int, int]], client: str = "") -> None:
        """Take the parts `(index, attempt, handbacks)` of a cancelled job out of the queue at once."""
        return None

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

    def entry_lost(self, job_id: str, index: int, attempt: int, handbacks: int = 0) -> bool:
        """Whether the queue no longer holds (or will never run) this part attempt."""
        return False

    def repair(self) -> None:
        """Put right what a process that died mid-way left (the reaper calls it)."""
        return None

    def reachable_since(self, created_at: float) -> float | None:
        """When the store the workers beat to last came back after being unreachable, on the
        store's clock, as a job created at `created_at` may have lived through it (a Redis
        restart since then, or an outage a process noted on reconnecting); None when none is
        known. A heartbeat gap that reaches past it is no sign of a dead worker."""
        return None

    def note_reachable(self) -> None:
        """Say that this process reaches the store again, now, after losing it."""
        return None


class EmbeddedQueue(JobQueue):
    """Threads of every web process that shares the SQLite job store, taking parts from its
    `queue` table, the clients in turn (`SqliteStore.queue_take`): `embedded_threads` that take any
    part, and one more, the express lane, that takes only parts of at most EXPRESS_MAX_S
    search-seconds, so that a short job waits for no long one (both share the core: a search
    lets other threads run every few ms). Waiting parts are in the file:
    they outlive the processes, and a restarted server runs them. A part that ran before (retried,
    handed back) is taken first. On shutdown (`stop`) a running part goes back to the table with
    its attempt, at the front; a process that dies unannounced leaves its
    parts `started`, and the reaper (`JobManager.start_reaper`) runs them again, an attempt used."""

    backend = "embedded"
    POLL_S = 0.2  # how often an idle thread looks for parts other processes queued

    def __init__(self, store: SqliteStore, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._pid = os.getpid()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._busy = 0

    def start(self) -> None:
        """Start this process's threads (once per process: a fork starts its own)."""
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's threads are not here
                self._threads = []
                self._pid = os.getpid()
                self._wake = threading.Event()
                self._stopping = threading.Event()
                self._busy = 0
            if self._stopping.is_set():
                return
            self._threads = [t for t in self._threads if t.is_alive()]
            while len(self._threads) < max(1, self.settings.embedded_threads) + 1:
                express = not any(t.name == "kashgar-embedded-express" for t in self._threads)
                name = "kashgar-embedded-express" if express else f"kashgar-embedded-{len(self._threads)}"
                t = threading.Thread(target=self._loop, args=(EXPRESS_MAX_S if express else None,), name=name,
                                     daemon=True)
                t.start()
                self._threads.append(t)

    def stop(self, timeout: float = 10.0) -> None:
        """Take no more parts, and hand the running ones back to the queue (within `timeout`)."""
        self._stopping.set()
        self._wake.set()
        deadline = time.monotonic() + timeout
        for t in list(self._threads):
            t.join(max(0.0, deadline - time.monotonic()))

    def _loop(self, max_cost: float | None) -> None:
        """Take parts (of at most `max_cost` search-seconds; None: any) and run them, until stopped."""
        worker = runner.process_id()
        while not self._stopping.is_set():
            with self._lock:  # busy from before the take: a part is never out of the table and not yet busy
                self._busy += 1
            try:
                got = self.store.queue_take(lambda rec, i, a: runner.claim(rec, i, a, worker, self.store.now()),
                                            max_cost)
            except Exception as exc:  # noqa: BLE001 - the thread must survive a locked or failing store
                log.warning("embedded queue: %s", exc)
                got = None
            if got is None:
                with self._lock:
                    self._busy -= 1
                self._wake.wait(self.POLL_S)
                if not self._stopping.is_set():  # a stop's wake is for every thread: left set
                    self._wake.clear()
                continue
            job_id, index, attempt, verdict, rec = got
            try:
                runner.execute_part(self.store, self.settings, job_id, index, attempt, worker=worker,
                                    stopping=self._stopping.is_set, requeue=self._requeue_for(job_id, rec),
                                    claimed=(verdict, rec))
            except Exception:  # noqa: BLE001 - the thread must survive any job; the reaper retries it
                log.exception("embedded part crashed", extra={"job_id": job_id, "part": index})
            finally:
                with self._lock:
                    self._busy -= 1

    def _requeue_for(self, job_id: str, rec: Record) -> runner.Requeue:
        def requeue(index: int, attempt: int, handbacks: int) -> None:
            self.store.queue_put(job_id, index, attempt, handbacks, rec.get("client", ""), part_cost(rec), front=True)

        return requeue

    def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None, client: str = "",
                handbacks: int = 0, cost: float | None = None, front: bool = False) -> None:
        self.store.queue_put(job_id, index, attempt, handbacks, client, cost, front=front)
        self.start()
        self._wake.set()

    def remove(self, job_id: str, parts: list[tuple[int, int, int]], client: str = "") -> None:
        self.store.queue_remove(job_id)

    def depth(self) -> int:
        """Parts waiting for a thread of any process that shares the store."""
        return self.store.queue_depth()

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

    def entry_lost(self, job_id: str, index: int, attempt: int, handbacks: int = 0) -> bool:
        """True for a part left `queued` that the queue no longer holds (a process that died
        between handing a part back and queueing it): nobody would run it again."""
        return not self.store.queue_has(job_id, index, attempt, handbacks)

    def join(self, timeout: float = 120.0) -> None:
        """Wait until no part waits and this process's threads are idle (tests)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                busy = self._busy
            if busy == 0 and self.depth() == 0:
                return
            time.sleep(0.02)
        raise TimeoutError("the embedded queue did not empty")


class RQQueue(JobQueue):
    """One RQ job per part attempt, id `<job>-p<index>-a<attempt>` (`-h<n>` once handed back n
    times), on queue `settings.queue_name`, the clients taking turns: each client's parts wait in
    a list of its own (`<prefix>:fair:pending:<client>`), and the RQ queue holds at most one
    waiting part per client (`<prefix>:fair:fed`), the next one fed when a worker takes it
    (`tasks.run_part`). A client with none waiting goes to the front: a backlog delays another
    client's first part by at most the part running (docs/decisions.md). A part of at most
    EXPRESS_MAX_S search-seconds goes to the express queue (`<queue>-express`), which every worker
    takes from first and express workers (`kashgar worker --express`) take from alone, so a short
    job waits for no long part. A part queued `front` (one that ran before: retried or handed
    back) goes first in its client's list and to the front of the RQ queue (`<prefix>:fair:front`
    names it until it is fed), so it waits for no part queued after its first attempt.

    `<prefix>:reachable-since` holds when a process last reached Redis again after losing it
    (`note_reachable`); with Redis's own start, it is `reachable_since`."""

    backend = "redis"
    #: How long `reachable_since` keeps Redis's answer (one reaper round asks it once).
    REACHABLE_CACHE_S = 1.0

    def __init__(self, connection: Any, settings: Settings) -> None:
        from rq import Queue

        self.connection = connection
        self.settings = settings
        self.rq_queue = Queue(settings.queue_name, connection=connection)
        self.express_queue = Queue(express_name(settings), connection=connection)
        self.queues = (self.rq_queue, self.express_queue)  # where a fed part may wait
        p = f"{settings.key_prefix}:fair"
        self.parts_key, self.fed_key, self.fed_at_key, self.clients_key, self.pending_prefix = (
            f"{p}:parts", f"{p}:fed", f"{p}:fed-at", f"{p}:clients", f"{p}:pending:")
        self.front_key = f"{p}:front"
        self.reachable_key = f"{settings.key_prefix}:reachable-since"
        self._feed = connection.register_script(_FEED_LUA)
        self._note = connection.register_script(_NOTE_LUA)
        self._reachable = (-1e18, 0.0, 0.0)  # when asked (monotonic), Redis's start, the latest noted

    @staticmethod
    def rq_job_id(job_id: str, index: int, attempt: int, handbacks: int = 0) -> str:
        return f"{job_id}-p{index}-a{attempt}" + (f"-h{handbacks}" if handbacks else "")

    @staticmethod
    def entry(job_id: str, index: int, attempt: int, handbacks: int = 0) -> str:
        return f"{job_id}|{index}|{attempt}|{handbacks}"

    def _redis(self, fn: Any) -> Any:
        import redis

        try:
            return fn()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None, client: str = "",
                handbacks: int = 0, cost: float | None = None, front: bool = False) -> None:
        entry = self.entry(job_id, index, attempt, handbacks)

        def go() -> None:
            with self.connection.pipeline() as pipe:
                size = UNKNOWN_PART_COST if cost is None else cost
                pipe.hset(self.parts_key, entry, f"{timeout_s or self.settings.job_ttl}|{size!r}|{client}")
                if front:
                    pipe.sadd(self.front_key, entry)
                    pipe.lpush(self.pending_prefix + client, entry)
                else:
                    pipe.rpush(self.pending_prefix + client, entry)
                pipe.sadd(self.clients_key, client)
                pipe.execute()

        self._redis(go)
        self.feed(client, front=True)

    def feed(self, client: str, front: bool = False) -> None:
        """Move `client`'s next part into the RQ queue unless one of its parts waits there."""
        while True:
            got = self._redis(lambda: self._feed(
                keys=[self.parts_key, self.fed_key, self.clients_key, self.fed_at_key, self.front_key],
                args=[client, self.pending_prefix + client, repr(time.time())]))
            if not got:
                return
            entry, detail, first = (x.decode() if isinstance(x, bytes) else str(x) for x in got)
            if not detail:  # cancelled while it waited: the next one
                continue
            job_id, index, attempt, handbacks = entry.split("|")
            timeout, cost = _detail(detail)
            self._enqueue_rq(job_id, int(index), int(attempt), int(handbacks), timeout, client,
                             front or first == "1", cost <= EXPRESS_MAX_S)
            self._redis(lambda e=entry: self.connection.hdel(self.parts_key, e))
            return

    def _enqueue_rq(self, job_id: str, index: int, attempt: int, handbacks: int, timeout: int, client: str,
                    front: bool, express: bool = False) -> None:
        queue = self.express_queue if express else self.rq_queue
        self._redis(lambda: queue.enqueue_call(
            TASK,
            args=(job_id, index, attempt, handbacks, client),
            job_id=self.rq_job_id(job_id, index, attempt, handbacks),
            timeout=timeout,
            result_ttl=0,
            failure_ttl=self.settings.result_ttl,
            description=f"kashgar search {job_id} part {index}",
            at_front=front,
        ))

    def taken(self, client: str, job_id: str, index: int, attempt: int, handbacks: int = 0) -> None:
        """A worker took this part from the RQ queue: the client's next part may wait there."""
        entry = self.entry(job_id, index, attempt, handbacks)

        def go() -> bool:
            with self.connection.pipeline() as pipe:
                while True:
                    try:
                        pipe.watch(self.fed_key)
                        fed = pipe.hget(self.fed_key, client)
                        if (fed.decode() if isinstance(fed, bytes) else fed) != entry:
                            pipe.unwatch()
                            return False
                        pipe.multi()
                        pipe.hdel(self.fed_key, client)
                        pipe.hdel(self.fed_at_key, client)
                        pipe.execute()
                        return True
                    except redis_watch_error():
                        continue

        if self._redis(go):
            self.feed(client)

    def remove(self, job_id: str, parts: list[tuple[int, int, int]], client: str = "") -> None:
        """Every waiting part of the job leaves its client's list and the RQ queue (RQ's job
        deleted with its queue entry), and the client's next part takes the freed place."""
        from rq.job import Job

        entries = [self.entry(job_id, i, a, h) for i, a, h in parts]
        rq_ids = [self.rq_job_id(job_id, i, a, h) for i, a, h in parts]

        def go() -> None:
            with self.connection.pipeline() as pipe:
                for entry in entries:
                    pipe.hdel(self.parts_key, entry)
                    pipe.srem(self.front_key, entry)
                    pipe.lrem(self.pending_prefix + client, 0, entry)
                for rq_id in rq_ids:
                    for queue in self.queues:
                        pipe.lrem(queue.key, 0, rq_id)
                    pipe.delete(Job.key_for(rq_id))
                pipe.execute()

        self._redis(go)
        fed = self._redis(lambda: self.connection.hget(self.fed_key, client))
        if fed is not None and (fed.decode() if isinstance(fed, bytes) else fed) in entries:
            self._redis(lambda: self.connection.hdel(self.fed_key, client))
            self.feed(client)

    def repair(self) -> None:
        """A client whose part fed to RQ is no longer waiting there (taken by a worker that died
        before saying so, or lost with Redis) gets its next one; a part fed longer than the
        heartbeat timeout ago that never reached RQ (its feeder died) goes back to its client's
        list; and a client with parts waiting and none fed is fed (a feed that never happened)."""
        from rq.exceptions import NoSuchJobError
        from rq.job import Job

        fed = self._redis(lambda: self.connection.hgetall(self.fed_key))
        for raw_client, raw_entry in fed.items():
            client = raw_client.decode() if isinstance(raw_client, bytes) else str(raw_client)
            entry = raw_entry.decode() if isinstance(raw_entry, bytes) else str(raw_entry)
            job_id, index, attempt, handbacks = entry.split("|")
            rq_id = self.rq_job_id(job_id, int(index), int(attempt), int(handbacks))
            if any(self._redis(lambda rq_id=rq_id, q=q: self.connection.lpos(q.key, rq_id)) is not None
                   for q in self.queues):
                continue
            try:
                Job.fetch(rq_id, connection=self.connection)
            except NoSuchJobError:
                if self._redis(lambda e=entry: self.connection.hexists(self.parts_key, e)):  # not yet in RQ
                    since = float(self._redis(lambda c=client: self.connection.hget(self.fed_at_key, c)) or 0)
                    if time.time() - since <= self.settings.heartbeat_timeout:
                        continue  # being fed right now
                    self._redis(lambda c=client, e=entry: self.connection.lpush(self.pending_prefix + c, e))
            self.taken(client, job_id, int(index), int(attempt), int(handbacks))
        for raw in self._redis(lambda: self.connection.smembers(self.clients_key)):
            self.feed(raw.decode() if isinstance(raw, bytes) else str(raw))

    def depth(self) -> int:
        import redis

        try:
            return (int(self.rq_queue.count) + int(self.express_queue.count)
                    + int(self.connection.hlen(self.parts_key)))
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def ping(self) -> None:
        import redis

        try:
            self.connection.ping()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def reachable_since(self, created_at: float) -> float | None:
        """The latest of Redis's own start, when the job is older (a restart: every process lost
        Redis until then; a job created since cannot have lived through it), and the latest
        reconnect a process noted, on Redis's clock; Redis is asked at most once a second."""
        at = time.monotonic()
        if at - self._reachable[0] >= self.REACHABLE_CACHE_S:

            def ask() -> tuple[float, float]:
                with self.connection.pipeline(transaction=False) as pipe:
                    pipe.time()
                    pipe.info("server")
                    pipe.get(self.reachable_key)
                    (sec, usec), info, noted = pipe.execute()
                return float(sec) + float(usec) / 1e6 - float(info.get("uptime_in_seconds", 0)), float(noted or 0)

            self._reachable = (at, *self._redis(ask))
        _, started, noted = self._reachable
        # Redis's uptime is in whole seconds: it started within the second before `started`
        since = max(started if started - 1.0 > created_at else 0.0, noted)
        return since or None

    def note_reachable(self) -> None:
        def note() -> None:
            sec, usec = self.connection.time()
            self._note(keys=[self.reachable_key], args=[repr(float(sec) + float(usec) / 1e6), 86400])

        self._redis(note)
        self._reachable = (-1e18, 0.0, 0.0)

    def workers(self) -> int | None:
        from rq import Worker

        try:
            return len(Worker.all(queue=self.rq_queue))
        except Exception:  # noqa: BLE001
            return None

    def entry_lost(self, job_id: str, index: int, attempt: int, handbacks: int = 0) -> bool:
        """Asked about a part that has waited unclaimed longer than the heartbeat timeout: False
        while it waits its turn in its client's list; True when its RQ job is gone (a Redis restart
        can drop it), failed or ended, queued but out of its queue's list for longer than the
        heartbeat timeout, or started without its work horse ever claiming the part (a horse claims
        it first thing; one that started around a Redis outage can die without RQ recording it, and
        the part stayed queued forever); False while it waits, and when Redis cannot be asked."""
        import redis
        from rq.exceptions import NoSuchJobError
        from rq.job import Job
        from rq.job import JobStatus as RQStatus

        rq_id = self.rq_job_id(job_id, index, attempt, handbacks)
        try:
            if self.connection.hexists(self.parts_key, self.entry(job_id, index, attempt, handbacks)):
                return False
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
                    started = started.replace(tzinfo=UTC)
                return (datetime.now(UTC) - started).total_seconds() > self.settings.heartbeat_timeout
            return status in (RQStatus.FAILED, RQStatus.STOPPED, RQStatus.CANCELED, RQStatus.FINISHED)
        except NoSuchJobError:
            return True
        except (redis.exceptions.RedisError, OSError):
            return False

    def _waiting(self, rq_id: str) -> bool:
        """Whether the RQ job waits in a queue's list, or was taken by a worker moments ago.

        A worker takes a job out of the queue's list before its work horse starts it, normally
        within milliseconds: into the queue's intermediate list (RQ 3.x, a worker of one queue), or
        into no list at all (a worker of several queues pops it). Such a part is not lost (a
        backlog made parts caught in that moment look lost, and, twice, failed their jobs). But a
        worker whose connection breaks while it takes one (a Redis restart) leaves it there, and RQ
        cleans the intermediate list only every ten minutes: a part out of the queue's list longer
        than the heartbeat timeout (timed from when this check first saw it so) is lost, and taken
        out of the intermediate list."""
        if any(self.connection.lpos(q.key, rq_id) is not None for q in self.queues):
            return True
        seen_key = f"{self.settings.key_prefix}:taken-since:{rq_id}"
        now = time.time()
        if self.connection.set(seen_key, now, nx=True, ex=3600):
            return True
        since = float(self.connection.get(seen_key) or now)
        if now - since <= self.settings.heartbeat_timeout:
            return True
        for q in self.queues:
            self.connection.lrem(q.intermediate_queue_key, 0, rq_id)
        return False


def express_name(settings: Settings) -> str:
    """The RQ queue of short parts (at most EXPRESS_MAX_S search-seconds)."""
    return f"{settings.queue_name}-express"


def _detail(detail: str) -> tuple[int, float]:
    """(timeout, cost) of a waiting part's details `timeout|cost|client` (`timeout|client` before
    the cost was kept: as long as any)."""
    fields = detail.split("|", 2)
    try:
        cost = float(fields[1]) if len(fields) == 3 else UNKNOWN_PART_COST
    except ValueError:
        cost = UNKNOWN_PART_COST
    return int(fields[0]), cost


def redis_watch_error() -> type[Exception]:
    import redis

    return redis.WatchError  # type: ignore[no-any-return]


# Feeds a client's next part to RQ: nothing while one of its parts waits there (`fed`), else its
# list's first entry, named in `fed` (and when, in `fed_at`), returned with its details (gone if
# the part was cancelled) and "1" when it was queued to go first (`front`, which forgets it). The
# entry stays in `parts` until RQ holds it: never in neither.
_FEED_LUA = """
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return false end
local entry = redis.call('LPOP', ARGV[2])
if not entry then
  redis.call('SREM', KEYS[3], ARGV[1])
  return false
end
local first = tostring(redis.call('SREM', KEYS[5], entry))
local detail = redis.call('HGET', KEYS[1], entry)
if not detail then return {entry, '', first} end
redis.call('HSET', KEYS[2], ARGV[1], entry)
redis.call('HSET', KEYS[4], ARGV[1], ARGV[3])
return {entry, detail, first}
"""

# Notes when a process reached Redis again (ARGV[1], on Redis's clock), keeping the latest one;
# forgotten after ARGV[2] seconds.
_NOTE_LUA = """
local held = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > held then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
return 1
"""


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
