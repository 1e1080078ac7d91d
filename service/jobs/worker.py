"""The RQ worker entry point (`kashgar worker` calls `run_worker`): an RQ worker on the Kashgar
queue that runs the parts of long searches, a reaper thread that finds the parts of workers that
died (retry, or fail visibly after the last attempt) and registers this worker again when Redis
has forgotten it (a restart without persistence), and a wait for Redis, at start or after losing
it, instead of exiting. A plain `rq worker` runs the parts too, but without the reaper.

Redis going away while a part runs costs the part nothing: the worker (`KashgarWorker`) goes on
waiting for its work horse through the lost connection, RQ's heartbeats resuming when Redis is
back, and the horse's search goes on, its own heartbeats and result waiting for Redis
(`runner.execute_part`); RQ's worker quit its loop there, and the part's silence was taken for a
dead worker, an attempt used, the search thrown away."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from typing import Any

import redis
import rq

from ..config import Settings
from .store import StoreUnavailable

log = logging.getLogger("kashgar.worker")

#: What a lost Redis connection raises.
REDIS_DOWN = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)


class SurvivesLostRedis:
    """What an RQ worker does on Redis that is unreachable, between taking parts: its heartbeat,
    its suspension check and its maintenance are tried again on the next round instead of ending
    its loop (RQ's own wait for a job already waits for Redis)."""

    name: str
    log: Any

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        if pipeline is not None:
            super().heartbeat(timeout, pipeline)  # type: ignore[misc]
            return
        try:
            super().heartbeat(timeout)  # type: ignore[misc]
        except REDIS_DOWN as exc:
            log.warning("worker %s: heartbeat failed (%s); the next one may get through", self.name, exc)

    def check_for_suspension(self, burst: bool) -> None:
        try:
            super().check_for_suspension(burst)  # type: ignore[misc]
        except REDIS_DOWN as exc:
            log.warning("worker %s: Redis unreachable (%s); waiting for a part", self.name, exc)

    def run_maintenance_tasks(self) -> None:
        try:
            super().run_maintenance_tasks()  # type: ignore[misc]
        except REDIS_DOWN as exc:
            log.warning("worker %s: maintenance skipped, Redis unreachable (%s)", self.name, exc)


class KashgarWorker(SurvivesLostRedis, rq.Worker):
    """RQ's forking worker that keeps waiting for its work horse while Redis is unreachable: the
    horse's part goes on (RQ's worker let a heartbeat's ConnectionError end its loop, the horse
    left unwatched), and the worker's own heartbeats resume when Redis is back."""

    def maintain_heartbeats(self, job: Any, execution: Any) -> None:
        try:
            super().maintain_heartbeats(job, execution)
        except REDIS_DOWN as exc:
            log.warning("worker %s: Redis unreachable while part %s runs (%s); the part goes on",
                        self.name, job.id, exc)

    def monitor_work_horse(self, job: Any, queue: Any, execution: Any) -> None:
        try:
            super().monitor_work_horse(job, queue, execution)
        except REDIS_DOWN as exc:  # the horse has ended; what RQ records of it waits for Redis
            log.warning("worker %s: could not record the end of %s in RQ (%s)", self.name, job.id, exc)


class KashgarSimpleWorker(SurvivesLostRedis, rq.SimpleWorker):
    """RQ's worker that runs parts in its own process, on lost Redis as `KashgarWorker`."""


def _reaper(stop: threading.Event, interval: float, settings: Settings, running: list[Any]) -> None:
    from . import build_manager

    manager = build_manager(settings)
    lost = False  # the last round could not reach Redis
    while not stop.wait(interval):
        try:
            if lost:  # said before reaping: the silence of every part since is no death
                manager.queue.note_reachable()
                lost = False
            manager.reap_all()
            if running and register_again(running[0]):
                log.warning("Redis had forgotten worker %s (restarted without persistence?); registered it again",
                            running[0].name)
        except Exception as exc:  # noqa: BLE001 - Redis may be down for a while
            lost = lost or isinstance(exc, StoreUnavailable | redis.exceptions.RedisError)
            log.warning("reaper: %s", exc)


def register_again(worker: Any) -> bool:
    """Put a live RQ `worker` back in Redis's worker registry when Redis has lost it (True), as
    after a restart without persistence: RQ reconnects and goes on working, but never registers
    again, so `Worker.all()` (and `/readyz`'s `workers`) counted 0. False when it is registered,
    not yet born, or has registered its death (stopping)."""
    from rq import worker_registration

    if worker.birth_date is None or worker.last_heartbeat is None:
        return False
    key = worker.key
    with worker.connection.pipeline() as pipe:
        try:
            # Checked and written in one transaction: a worker that registers its death (or
            # beats its heart) between the check and the write changes its key, and the write is
            # dropped (the next round checks again), so a stopped worker is never listed again.
            pipe.watch(key, worker.redis_workers_keys)
            if pipe.sismember(worker.redis_workers_keys, key) or pipe.hexists(key, "death"):
                return False
            mapping = worker.serialize()
            pipe.multi()
            pipe.hset(key, mapping=mapping)
            worker_registration.register(worker, pipe)
            pipe.expire(key, worker.worker_ttl + 60)
            pipe.execute()
        except redis.exceptions.WatchError:
            return False
    return True


def run_worker(settings: Settings, *, name: str | None = None, burst: bool = False, simple: bool = False,
               reaper: bool = True, reconnect_timeout: float = 300.0, worker_class: Any = None,
               express: bool = False) -> int:
    """Work the queues of `settings` (the express queue first, then the main one; `express`: the
    express queue alone) until stopped (0), or until Redis stays away longer than
    `reconnect_timeout` (1). `name`: the worker's name (default host.pid); `simple`: run jobs in
    this process (rq SimpleWorker, no fork per job); `burst`: exit when the queues are empty;
    `worker_class`: another RQ worker class (tests)."""
    from .queue import RQQueue, express_name, redis_connection

    queues = [express_name(settings)] + ([] if express else [settings.queue_name])

    if not settings.redis_url:
        raise ValueError("the worker needs a Redis URL (KASHGAR_REDIS_URL)")
    # Load the engine and the bots once, before forking work horses.
    import bots.suggest  # noqa: F401
    import engine_ext  # noqa: F401

    # No socket timeout: the worker blocks on BLPOP for minutes.
    connection = redis_connection(settings.redis_url, timeout=None, connect_timeout=10.0)
    cls = worker_class or (KashgarSimpleWorker if simple else KashgarWorker)
    base_name = name or f"{socket.gethostname()}.{os.getpid()}"
    stop = threading.Event()
    running: list[Any] = []  # the RQ worker now working, for the reaper to keep registered
    if reaper:
        interval = max(0.5, settings.heartbeat_timeout / 3)
        threading.Thread(target=_reaper, args=(stop, interval, settings, running), name="kashgar-reaper",
                         daemon=True).start()
    shutdown = threading.Event()
    attempt = 0
    worker: Any = None
    try:
        while True:
            # after a reconnect, a fresh name: the old one may still be registered in Redis
            worker_name = base_name if attempt == 0 else f"{base_name}-r{attempt}"
            try:
                worker = cls(queues, connection=connection, name=worker_name)
                running[:] = [worker]
                try:
                    worker.work(burst=burst, logging_level=settings.log_level.upper())
                finally:
                    running.clear()
                return 0
            except ValueError as exc:
                # RQ refuses a name still registered: a worker of that name killed without
                # cleaning up (SIGKILL, a lost machine) keeps its key for a minute or more, and a
                # supervisor restarting it under its fixed name would loop on this error.
                if "active worker named" not in str(exc) or attempt >= 20:
                    raise
                attempt += 1
                log.warning("a worker named %s is still registered (one that died without cleaning up, or "
                            "another one of that name); this one runs as %s-r%d", worker_name, base_name, attempt)
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                attempt += 1
                if burst:
                    raise
                # RQ's signal handlers stay installed after work() returns; while we wait, SIGTERM
                # and SIGINT must end the wait, not be noted for a job loop that is not running.
                # Installed before the line that says the worker waits: a supervisor (or a test)
                # that reads it and stops the worker at once finds the wait's handlers in place.
                _stop_on_signals(shutdown)
                log.warning("Redis unreachable (%s); waiting for it", exc)
                if not wait_for_redis(connection, reconnect_timeout, shutdown):
                    if shutdown.is_set():
                        log.info("stopped by a signal while waiting for Redis")
                        return 0
                    log.error("Redis did not come back within %.0f s; the worker stops", reconnect_timeout)
                    return 1
                log.info("Redis is there; the worker goes on")
                _note_reachable(RQQueue(connection, settings))
                _wait_for_horse(worker)
                _forget(worker)
    finally:
        stop.set()


def _note_reachable(queue: Any) -> None:
    try:
        queue.note_reachable()
    except StoreUnavailable as exc:
        log.warning("could not note the reconnect: %s", exc)


def _wait_for_horse(worker: Any) -> None:
    """A work horse the lost worker left running goes on with its part (it waits for Redis
    itself): the worker takes no other part before it ends."""
    pid = int(getattr(worker, "_horse_pid", 0) or 0) if worker is not None else 0
    if pid <= 0:
        return
    log.warning("work horse %d goes on with its part; the worker waits for it", pid)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _forget(worker: Any) -> None:
    """Take a worker that lost Redis out of RQ's registry: the worker goes on under a new name,
    and Redis that kept its data (an append-only file) would list the old name as a second
    worker until its key expires (8 minutes), so `/readyz` counted more workers than ran."""
    if worker is None or worker.birth_date is None:
        return
    try:
        worker.register_death()
    except redis.exceptions.RedisError as exc:
        log.warning("could not unregister %s: %s", worker.name, exc)


def _stop_on_signals(shutdown: threading.Event) -> None:
    def handler(signum: int, frame: Any) -> None:
        shutdown.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, handler)


def wait_for_redis(connection: Any, timeout: float, shutdown: threading.Event | None = None) -> bool:
    """Ping Redis with a growing pause (0.5 s up to 10 s) until it answers (True), or `timeout`
    passes or `shutdown` is set (False)."""
    deadline = time.monotonic() + timeout
    pause = 0.5
    shutdown = shutdown or threading.Event()
    while time.monotonic() < deadline and not shutdown.is_set():
        try:
            if connection.ping():
                return True
        except redis.exceptions.RedisError:
            pass
        if shutdown.wait(min(pause, max(0.0, deadline - time.monotonic()))):
            return False
        pause = min(pause * 2, 10.0)
    return False
