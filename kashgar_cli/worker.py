"""`kashgar worker`: an RQ worker that runs the parts of long searches, and reaps the parts of
workers that died (retry, or fail visibly after the last attempt); the entry point itself is
`service.jobs.worker.run_worker`."""

from __future__ import annotations

import argparse
import os
from typing import Any

from kashgar_cli.errors import CliError, check_redis_url, float_above, service_settings, use_cards


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
    p.add_argument("--express", action="store_true",
                   help="take only short parts (the express queue: at most 5 search-seconds), so that a short "
                        "job never waits behind long ones; run one or more beside the others")
    p.add_argument(
        "--simple", action="store_true", help="run jobs in the worker process itself (rq SimpleWorker; no fork per job)"
    )
    p.add_argument("--cards", default=None, metavar="PATH",
                   help="play with this card file (sets KASHGAR_CARDS): the same as the web processes'")
    p.add_argument("--no-reaper", action="store_true", help="do not look for parts of dead workers")
    p.add_argument("--reconnect-timeout", type=float_above(0), default=300.0,
                   help="seconds to wait for Redis, at start or after losing it, before exiting (default 300)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from service import logs
    from service.jobs.worker import run_worker

    # The settings and the URL are checked before the environment is changed or Redis dialled.
    environ = dict(os.environ)
    if args.url:
        environ["KASHGAR_REDIS_URL"] = args.url
    if args.queue:
        environ["KASHGAR_QUEUE_NAME"] = args.queue
    settings = service_settings(environ)
    if not settings.redis_url:
        raise CliError("set --url or KASHGAR_REDIS_URL")
    check_redis_url(settings.redis_url, "argument --url" if args.url else "KASHGAR_REDIS_URL")
    cards = use_cards(args.cards, environ)
    if cards:
        os.environ["KASHGAR_CARDS"] = cards
    if args.url:
        os.environ["KASHGAR_REDIS_URL"] = args.url
    if args.queue:
        os.environ["KASHGAR_QUEUE_NAME"] = args.queue
    logs.configure(settings.log_level, settings.log_json)
    return run_worker(settings, name=args.name, burst=args.burst, simple=args.simple, reaper=not args.no_reaper,
                      reconnect_timeout=args.reconnect_timeout, express=args.express)
