"""gunicorn settings for CPU-bound searches (`kashgar serve`, `deploy/gunicorn.conf.py`).

One sync worker process per core: a search holds the GIL for its whole budget, so threads would
only queue behind it; more processes than cores would only share the cores. The sync worker is
gunicorn's own with a deadline on client sockets (`service/gunicorn_worker.py`), so a few clients
that stall mid-request cannot freeze the server. Every value can be
overridden on the gunicorn command line or with the environment variables named here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from typing import Any

from service.config import web_workers as _parse_web_workers  # not "config": a gunicorn setting

#: Directories `prepare_environment` made for this server; removed when it exits (`on_exit`).
_MADE: list[str] = []


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def web_workers() -> int:
    """KASHGAR_WEB_WORKERS (`service.config.web_workers`; unset or blank: one per core). A bad value
    stops the server with one line."""
    try:
        count = _parse_web_workers(os.environ)
    except ValueError as exc:
        raise SystemExit(f"service/gunicorn_conf.py: {exc}") from None
    return cpu_count() if count is None else count


def prepare_environment() -> None:
    """Shared state of the worker processes, set before the app and prometheus_client load:
    the embedded job database (one per server unless KASHGAR_JOBS_DB is set) and the directory
    of multi-process metrics (unless PROMETHEUS_MULTIPROC_DIR is set)."""
    if not os.environ.get("KASHGAR_REDIS_URL") and not os.environ.get("KASHGAR_JOBS_DB"):
        _MADE.append(tempfile.mkdtemp(prefix="kashgar-jobs-"))
        os.environ["KASHGAR_JOBS_DB"] = os.path.join(_MADE[-1], "jobs.sqlite")
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        _MADE.append(tempfile.mkdtemp(prefix="kashgar-metrics-"))
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = _MADE[-1]
    else:
        # prometheus_client's multi-process files of an earlier run of this server would be summed
        # into this one's (a container restarted in place keeps its /tmp): start from none, as the
        # systemd unit does with ExecStartPre
        metrics = os.environ["PROMETHEUS_MULTIPROC_DIR"]
        os.makedirs(metrics, exist_ok=True)
        for name in os.listdir(metrics):
            if name.endswith(".db"):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(metrics, name))


# Checked before prepare_environment makes its directories, which a server that does not start would leave.
workers = web_workers()
prepare_environment()

wsgi_app = "service:create_app()"
bind = os.environ.get("KASHGAR_BIND", "127.0.0.1:8000")
worker_class = "service.gunicorn_worker.ClientTimeoutSyncWorker"
threads = 1
# A sync search is capped by KASHGAR_SYNC_TIMEOUT_MS; the worker timeout leaves room above it.
timeout = int(int(os.environ.get("KASHGAR_SYNC_TIMEOUT_MS", "20000")) / 1000) + 30
graceful_timeout = 30
keepalive = 5
backlog = 2048
preload_app = True
# The app logs every request as a JSON line with its request id; gunicorn's own log stays plain.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("KASHGAR_LOG_LEVEL", "info").lower()


def on_exit(server: Any) -> None:
    """The server stops: the temporary job database and metrics it made go with it (a job store
    meant to outlive the server is a KASHGAR_JOBS_DB the operator names)."""
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)


def post_worker_init(worker: Any) -> None:
    """The embedded job queue's reaper runs in every web process from its start, not only from its
    first request (a process that gets none would leave the parts of a dead one to a poll)."""
    manager = getattr(worker.wsgi, "extensions", {}).get("kashgar_jobs")
    if manager is not None:
        manager.start_reaper()


def child_exit(server: Any, worker: Any) -> None:
    """Drop the metrics of a dead worker process (prometheus multi-process mode)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
