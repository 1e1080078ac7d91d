"""`kashgar serve`: the HTTP API under gunicorn, one web worker process per core (`service/gunicorn_conf.py`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from kashgar_cli.errors import CliError, check_redis_url, port_number, positive_int, service_settings, use_cards


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "serve",
        help="run the HTTP API (gunicorn)",
        description="Run the Kashgar AI HTTP API under gunicorn. Without --redis-url (or "
        "KASHGAR_REDIS_URL) long searches run on an embedded in-process queue; with it they "
        "go to Redis and `kashgar worker` processes.",
    )
    p.add_argument("--host", default=None, help="interface to bind (default 127.0.0.1, or KASHGAR_BIND)")
    p.add_argument("--port", type=port_number, default=None, help="port (default 8000)")
    p.add_argument(
        "--workers", type=positive_int, default=None,
        help="web worker processes (default: one per core, or KASHGAR_WEB_WORKERS)"
    )
    p.add_argument("--timeout", type=positive_int, default=None, help="gunicorn worker timeout in seconds")
    p.add_argument("--redis-url", default=None, help="Redis URL for async searches (sets KASHGAR_REDIS_URL)")
    p.add_argument("--cards", default=None, metavar="PATH",
                   help="play with this card file (sets KASHGAR_CARDS; the schema of engine_ext/data/cards.toml, "
                   "see docs/cards.md)")
    p.add_argument("--dry-run", action="store_true", help="print the gunicorn command and exit")
    p.set_defaults(func=run)


def gunicorn_command() -> list[str]:
    """gunicorn's own script beside this Python (a USR2 upgrade re-runs the master's command line,
    and `python -m gunicorn` would re-run as `python .../gunicorn/__main__.py`, with gunicorn's
    package directory first on the path); `python -m gunicorn` when there is no such script."""
    script = os.path.join(os.path.dirname(sys.executable), "gunicorn")
    if os.access(script, os.X_OK):
        return [sys.executable, script]
    return [sys.executable, "-m", "gunicorn"]


def bind_of(args: argparse.Namespace) -> str | None:
    """The address --host and --port name (each in place of its part of KASHGAR_BIND); None
    without either."""
    if args.host is None and args.port is None:
        return None
    from service.config import DEFAULT_BIND

    bind = os.environ.get("KASHGAR_BIND", "").strip() or DEFAULT_BIND
    default_host, _, default_port = bind.rpartition(":")
    if args.port is None and not default_port.isdigit():
        raise CliError(f"KASHGAR_BIND={bind!r} has no port to keep with --host: give --port")
    return f"{args.host or default_host}:{args.port or int(default_port)}"


def gunicorn_argv(args: argparse.Namespace) -> list[str]:
    argv = [*gunicorn_command(), "-c", "python:service.gunicorn_conf"]
    bind = bind_of(args)
    if bind is not None:
        argv += ["--bind", bind]
    if args.workers is not None:
        argv += ["--workers", str(args.workers)]
    if args.timeout is not None:
        argv += ["--timeout", str(args.timeout)]
    return argv


def check_environment(args: argparse.Namespace) -> None:
    """What the server would otherwise fail on in every process it starts, with a traceback (or, for
    0 web workers, by listening and never answering): the settings, the Redis URL, the workers,
    the API keys file."""
    environ = dict(os.environ)
    if args.redis_url:
        environ["KASHGAR_REDIS_URL"] = args.redis_url
    settings = service_settings(environ)
    if settings.redis_url:
        check_redis_url(settings.redis_url, "argument --redis-url" if args.redis_url else "KASHGAR_REDIS_URL")
    from service.config import health_bind, web_workers

    # service/gunicorn_conf.py reads it even when --workers overrides it, and refuses it the same way
    try:
        web_workers(environ)
    except ValueError:
        raw = environ["KASHGAR_WEB_WORKERS"]
        raise CliError(f"KASHGAR_WEB_WORKERS: want a whole number >= 1, not {raw!r}") from None
    try:
        health_bind(environ)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    args.cards = use_cards(args.cards, environ)
    from bots.levels import default_level

    try:  # the level file (KASHGAR_LEVELS) holds the default level in use
        default_level(settings.default_level, environ.get("KASHGAR_LEVELS") or None)
    except (OSError, ValueError) as exc:
        raise CliError(f"KASHGAR_LEVELS: {exc}") from None
    from service.clients import load_keys

    try:
        load_keys(settings)
    except ValueError as exc:
        raise CliError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    check_environment(args)
    argv = gunicorn_argv(args)
    bind = bind_of(args)
    if bind is not None:  # the config names the server's default job store for the address it listens at
        os.environ["KASHGAR_BIND"] = bind
    if args.redis_url:
        os.environ["KASHGAR_REDIS_URL"] = args.redis_url
    if args.cards:
        os.environ["KASHGAR_CARDS"] = args.cards
    if args.dry_run:
        print(" ".join(argv))
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)
    return 0  # not reached
