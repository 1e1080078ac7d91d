"""The RQ worker entry point (`kashgar worker` calls `run_worker`): an RQ worker on the Kashgar
queue that runs the parts of long searches, a reaper thread that finds the parts of workers that
died (retry, or fail visibly after the last attempt) and registers this worker again when Redis
has forgotten it (a restart without persistence), and a wait for Redis, at start or after losing
it, instead of exiting. A plain `rq worker` runs the parts too, but without the reaper."""

from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
from typing import Any

import redis

from ..config import Settings

log = logging.getLogger("kashgar.worker")


def _reaper(stop: threading.Event, interval: float, settings: Settings, running: list[Any]) -> None:
    from . import build_manager

    manager = build_manager(settings)
    while not stop.wait(interval):
        try:
            manager.reap_all()
            if running and register_again(running[0]):
                log.warning("Redis had forgotten worker %s (restarted without persistence?); registered it again",
                            running[0].name)
        except Exception as exc:  # noqa: BLE001 - Redis may be down for a while
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
    from rq import SimpleWorker, Worker

    from .queue import express_name, redis_connection

    queues = [express_name(settings)] + ([] if express else [settings.queue_name])

    if not settings.redis_url:
        raise ValueError("the worker needs a Redis URL (KASHGAR_REDIS_URL)")
    # Load the engine and the bots once, before forking work horses.
    import bots.suggest  # noqa: F401
    import engine_ext  # noqa: F401

    # No socket timeout: the worker blocks on BLPOP for minutes.
    connection = redis_connection(settings.redis_url, timeout=None, connect_timeout=10.0)
    cls = worker_class or (SimpleWorker if simple else Worker)
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
                log.warning("Redis unreachable (%s); waiting for it", exc)
                # RQ's signal handlers stay installed after work() returns; while we wait, SIGTERM
                # and SIGINT must end the wait, not be noted for a job loop that is not running.
                _stop_on_signals(shutdown)
                if not wait_for_redis(connection, reconnect_timeout, shutdown):
                    if shutdown.is_set():
                        log.info("stopped by a signal while waiting for Redis")
                        return 0
                    log.error("Redis did not come back within %.0f s; the worker stops", reconnect_timeout)
                    return 1
                log.info("Redis is there; the worker goes on")
                _forget(worker)
    finally:
        stop.set()


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
