"""`kashgar worker`: an RQ worker that runs the parts of long searches, and reaps the parts of
workers that died (retry, or fail visibly after the last attempt)."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import threading
import time
from typing import Any

import redis

log = logging.getLogger("kashgar.worker")


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "worker",
        help="run an RQ worker for long searches",
        description="Run an RQ worker on the Kashgar queue. Start as many as you have cores, on as many "
        "machines as you like, all against the same Redis.",
    )
    p.add_argument("--url", default=None, help="Redis URL (default: KASHGAR_REDIS_URL)")
    p.add_argument("--queue", default=None, help="queue name (default: KASHGAR_QUEUE_NAME or 'kashgar')")
    p.add_argument("--name", default=None, help="worker name (default: host and pid)")
    p.add_argument("--burst", action="store_true", help="exit when the queue is empty")
    p.add_argument(
        "--simple", action="store_true", help="run jobs in the worker process itself (rq SimpleWorker; no fork per job)"
    )
    p.add_argument("--no-reaper", action="store_true", help="do not look for parts of dead workers")
    p.add_argument("--reconnect-timeout", type=float, default=300.0,
                   help="seconds to wait for Redis, at start or after losing it, before exiting (default 300)")
    p.set_defaults(func=run)


def _reaper(stop: threading.Event, interval: float) -> None:
    from service.config import Settings
    from service.jobs import build_manager

    manager = build_manager(Settings.from_env())
    while not stop.wait(interval):
        try:
            manager.reap_all()
        except Exception as exc:  # noqa: BLE001 - Redis may be down for a while
            log.warning("reaper: %s", exc)


def run(args: argparse.Namespace) -> int:
    from rq import SimpleWorker, Worker

    from service import logs
    from service.config import Settings
    from service.jobs.queue import redis_connection

    if args.url:
        os.environ["KASHGAR_REDIS_URL"] = args.url
    if args.queue:
        os.environ["KASHGAR_QUEUE_NAME"] = args.queue
    settings = Settings.from_env()
    if not settings.redis_url:
        print("kashgar worker: set --url or KASHGAR_REDIS_URL")
        return 2
    logs.configure(settings.log_level, settings.log_json)
    # Load the engine and the bots once, before forking work horses.
    import bots.suggest  # noqa: F401
    import engine_ext  # noqa: F401

    # No socket timeout: the worker blocks on BLPOP for minutes.
    connection = redis_connection(settings.redis_url, timeout=None, connect_timeout=10.0)
    cls = SimpleWorker if args.simple else Worker
    base_name = args.name or f"{socket.gethostname()}.{os.getpid()}"
    stop = threading.Event()
    if not args.no_reaper:
        interval = max(0.5, settings.heartbeat_timeout / 3)
        threading.Thread(target=_reaper, args=(stop, interval), name="kashgar-reaper", daemon=True).start()
    shutdown = threading.Event()
    attempt = 0
    try:
        while True:
            # after a reconnect, a fresh name: the old one may still be registered in Redis
            name = base_name if attempt == 0 else f"{base_name}-r{attempt}"
            try:
                worker = cls([settings.queue_name], connection=connection, name=name)
                worker.work(burst=args.burst, logging_level=settings.log_level.upper())
                return 0
            except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
                attempt += 1
                if args.burst:
                    raise
                log.warning("Redis unreachable (%s); waiting for it", exc)
                # RQ's signal handlers stay installed after work() returns; while we wait, SIGTERM
                # and SIGINT must end the wait, not be noted for a job loop that is not running.
                _stop_on_signals(shutdown)
                if not wait_for_redis(connection, args.reconnect_timeout, shutdown):
                    if shutdown.is_set():
                        log.info("stopped by a signal while waiting for Redis")
                        return 0
                    log.error("Redis did not come back within %.0f s; the worker stops", args.reconnect_timeout)
                    return 1
                log.info("Redis is there; the worker goes on")
    finally:
        stop.set()


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
