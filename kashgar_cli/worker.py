"""`kashgar worker`: an RQ worker that runs the parts of long searches, and reaps the parts of
workers that died (retry, or fail visibly after the last attempt)."""

from __future__ import annotations

import argparse
import logging
import os
import threading
from typing import Any

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
    worker = cls([settings.queue_name], connection=connection, name=args.name)
    stop = threading.Event()
    if not args.no_reaper:
        interval = max(0.5, settings.heartbeat_timeout / 3)
        threading.Thread(target=_reaper, args=(stop, interval), name="kashgar-reaper", daemon=True).start()
    try:
        worker.work(burst=args.burst, logging_level=settings.log_level.upper())
    finally:
        stop.set()
    return 0
