"""gunicorn settings for CPU-bound searches (`kashgar serve`, `deploy/gunicorn.conf.py`).

One worker process per core, each running one search at a time (a search holds the GIL for most
of its budget; more processes than cores would only share the cores). The worker is gunicorn's
threaded one (`service/gunicorn_worker.py`): its threads read requests, each with a deadline on
the whole request, and hand each one that has arrived whole to the app in turn, so slow clients
hold threads, not the process. With KASHGAR_HEALTH_BIND, the master answers
health probes on a port of its own (`service/health_listener.py`). Every value can be
overridden on the gunicorn command line or with the environment variables named here.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import threading
import time
from typing import Any

from service.config import DEFAULT_BIND
from service.config import health_bind as _parse_health_bind
from service.config import web_workers as _parse_web_workers  # not "config": a gunicorn setting
from service.gunicorn_worker import KEEPALIVE_S, THREADS

#: Directories `prepare_environment` made for this server; removed when it exits (`on_exit`).
_MADE: list[str] = []
#: The job store `prepare_environment` chose for the address named (none: KASHGAR_JOBS_DB or Redis).
_DEFAULT_STORE: list[tuple[str, str]] = []
#: The environment variable that names them for a master started by USR2.
MADE_DIRS_VAR = "KASHGAR_SERVER_TEMP_DIRS"
#: The master's health checks and listener (`service.health_listener`), when KASHGAR_HEALTH_BIND is set.
_CHECKS: list[Any] = []
_LISTENERS: list[Any] = []


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


def listen_address() -> str:
    """KASHGAR_BIND (`kashgar serve --host/--port` set it), else DEFAULT_BIND."""
    return os.environ.get("KASHGAR_BIND", "").strip() or DEFAULT_BIND


def prepare_environment() -> None:
    """Shared state of the worker processes, set before the app and prometheus_client load:
    the embedded job database (unless KASHGAR_JOBS_DB is set: the server's own, named for its
    address in the data directory by `default_jobs_db`, the directory made its owner's only) and
    the directory of multi-process metrics (unless PROMETHEUS_MULTIPROC_DIR is set).

    The directories made here are named in MADE_DIRS_VAR, which `pre_exec` hands to a master
    started by USR2 (a binary upgrade), so that it takes them over, jobs and metrics included,
    instead of making new ones and losing the old master's when that one exits (`on_exit`)."""
    inherited = [d for d in os.environ.get(MADE_DIRS_VAR, "").split(os.pathsep) if d and os.path.isdir(d)]
    if inherited:  # a USR2 master: the old master's directories, now this one's too
        _MADE.extend(inherited)
        return
    if not os.environ.get("KASHGAR_REDIS_URL") and not os.environ.get("KASHGAR_JOBS_DB"):
        data = data_dir()
        os.makedirs(data, mode=0o700, exist_ok=True)
        path = default_jobs_db(data, listen_address())
        os.environ["KASHGAR_JOBS_DB"] = path  # the app's SqliteStore creates it, 0600
        _DEFAULT_STORE.append((path, listen_address()))
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
    if not os.environ.get("KASHGAR_TABLE_KEY", "").strip():
        # the web table's tokens: every web process (forked from here) and a USR2 master seal and
        # open them with this one key, so any process can answer any call
        from cryptography.fernet import Fernet

        os.environ["KASHGAR_TABLE_KEY"] = Fernet.generate_key().decode("ascii")
    if _MADE:
        os.environ[MADE_DIRS_VAR] = os.pathsep.join(_MADE)


def data_dir() -> str:
    """Where the embedded job store lives, kept across restarts: KASHGAR_DATA_DIR, else
    `$XDG_DATA_HOME/kashgar` (`~/.local/share/kashgar`)."""
    explicit = os.environ.get("KASHGAR_DATA_DIR", "").strip()
    if explicit:
        return explicit
    base = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "kashgar")


def default_jobs_db(data: str, bind: str) -> str:
    """The embedded job store of a server listening at `bind` (HOST:PORT, or gunicorn's
    `unix:PATH`) in the directory `data`: one file per address (`jobs-127.0.0.1-8000.sqlite`), so
    two servers of one machine, with their own keys and clients, keep their jobs apart, and a
    server restarted at its address finds its own."""
    host, sep, port = bind.strip().rpartition(":")
    where = f"{host.strip('[]')}-{port}" if sep else port
    return os.path.join(data, "jobs-" + re.sub(r"[^A-Za-z0-9._-]", "_", where) + ".sqlite")


def health_address() -> tuple[str, int] | None:
    """KASHGAR_HEALTH_BIND (`service.config.health_bind`). A bad value stops the server with one line."""
    try:
        return _parse_health_bind(os.environ)
    except ValueError as exc:
        raise SystemExit(f"service/gunicorn_conf.py: {exc}") from None


# Checked before prepare_environment makes its directories, which a server that does not start would leave.
workers = web_workers()
_health_address = health_address()
prepare_environment()

wsgi_app = "service:create_app()"
bind = listen_address()
worker_class = "service.gunicorn_worker.DeadlineThreadWorker"
# Threads that read requests (one search at a time runs in the app): as many slow clients a
# process as this leave the others unaffected (a buffering proxy in front takes any number).
threads = THREADS
# A sync search is capped by KASHGAR_SYNC_TIMEOUT_MS; the worker timeout leaves room above it.
timeout = int(int(os.environ.get("KASHGAR_SYNC_TIMEOUT_MS", "20000")) / 1000) + 30
graceful_timeout = 30
# gunicorn's control socket (gunicornc) is one path per user ($HOME/.gunicorn/gunicorn.ctl): a
# second server on the machine would take it over, and the first one stopping would remove it from
# under the second. The service does not use it; signals (HUP, USR2, TERM) manage the master.
control_socket_disable = True
keepalive = KEEPALIVE_S
backlog = 2048
preload_app = True
# The app logs every request as a JSON line with its request id; gunicorn's own log stays plain.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("KASHGAR_LOG_LEVEL", "info").lower()


def on_starting(server: Any) -> None:
    """A worker timeout's log lines name the request the process was serving
    (`service.gunicorn_worker.timeout_log_filter`), not "Perhaps out of memory?". A job store
    named for another address than the one gunicorn listens at (its --bind without KASHGAR_BIND)
    is said at start: another server so started would share it."""
    from service.gunicorn_worker import timeout_log_filter

    timeout_log_filter(server)
    for path, named in _DEFAULT_STORE:
        if list(server.cfg.bind) != [named]:
            server.log.warning("The job store %s is named for %s, not for %s where this server listens: another "
                               "server started so would share its jobs. Set KASHGAR_BIND (not --bind), or "
                               "KASHGAR_JOBS_DB", path, named, ", ".join(server.cfg.bind))


def when_ready(server: Any) -> None:
    """The master is listening: start its health listener (KASHGAR_HEALTH_BIND), which answers
    probes however busy the workers are. A port it cannot bind stops the server with one line,
    except in a master started by USR2 (a binary upgrade), whose old master still holds the port:
    it binds it once the old one has gone."""
    if _health_address is None:
        return
    if not server.cfg.preload_app:
        server.log.error("KASHGAR_HEALTH_BIND needs preload_app: the master answers from the app it loaded")
        _remove_made(server)
        raise SystemExit(1)
    from service.health_listener import Checker, arbiter_answer, arbiter_checks

    checker = Checker(arbiter_checks(server))
    _CHECKS.append(checker.start())
    answer = arbiter_answer(server, checker)
    try:
        _listen(server, answer)
    except OSError as exc:
        if not getattr(server, "master_pid", 0):
            server.log.error("KASHGAR_HEALTH_BIND=%s:%s: cannot listen there (%s)", *_health_address, exc)
            _remove_made(server)
            raise SystemExit(1) from None
        server.log.warning("KASHGAR_HEALTH_BIND=%s:%s is held by the old master (USR2): listening there once "
                           "it has gone", *_health_address)
        threading.Thread(target=_listen_when_free, args=(server, answer), name="kashgar-health-bind",
                         daemon=True).start()


def _listen(server: Any, answer: Any) -> None:
    from service.health_listener import HealthListener

    assert _health_address is not None
    _LISTENERS.append(HealthListener(_health_address, answer).start())
    server.log.info("Health probes at: http://%s:%s (/healthz, /readyz)", *_health_address)


def _listen_when_free(server: Any, answer: Any) -> None:
    while True:
        time.sleep(1.0)
        try:
            _listen(server, answer)
            return
        except OSError:
            continue


def pre_exec(server: Any) -> None:
    """A USR2 upgrade is about to start the new master, with the environment gunicorn started with:
    hand it this server's job database, metrics directory and the directories made for them
    (`prepare_environment`), which it then uses and, once it alone runs, removes."""
    for name in ("KASHGAR_JOBS_DB", "PROMETHEUS_MULTIPROC_DIR", "KASHGAR_TABLE_KEY", MADE_DIRS_VAR):
        if name in os.environ:
            server.cfg.env_orig[name] = os.environ[name]


def post_fork(server: Any, worker: Any) -> None:
    """A web worker closes its copy of the health listener's socket (only the master answers it)."""
    for listener in _LISTENERS:
        listener.close_in_worker()


def on_exit(server: Any) -> None:
    """The server stops: the health listener closes, and the temporary job database and metrics it
    made go with it (a job store meant to outlive the server is a KASHGAR_JOBS_DB the operator names),
    unless the other master of a USR2 upgrade still runs and uses them: the new one, when the old
    one exits, or the old one, when a new one gives up."""
    for part in [*_LISTENERS, *_CHECKS]:
        part.stop()
    _remove_made(server)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_made(server: Any) -> None:
    other = [pid for pid in (getattr(server, "reexec_pid", 0), getattr(server, "master_pid", 0)) if pid and _alive(pid)]
    if other:
        server.log.info("Temporary job database and metrics kept for master %s", other[0])
        return
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)


def post_worker_init(worker: Any) -> None:
    """The embedded job queue's reaper runs in every web process from its start, not only from its
    first request (a process that gets none would leave the parts of a dead one to a poll)."""
    manager = getattr(worker.wsgi, "extensions", {}).get("kashgar_jobs")
    if manager is not None:
        manager.start_reaper()


def worker_exit(server: Any, worker: Any) -> None:
    """A web process stops (SIGTERM, a restart): its request answered, its embedded threads take
    no more parts and hand the running ones back to the queue, with their attempts (another
    process, or the server started next, runs them), and its log lines still waiting are written."""
    manager = getattr(worker.wsgi, "extensions", {}).get("kashgar_jobs")
    stop = getattr(getattr(manager, "queue", None), "stop", None)
    if stop is not None:
        stop(timeout=max(1.0, float(server.cfg.graceful_timeout) - 5.0))
    import logging

    for handler in logging.getLogger("kashgar").handlers:  # the access lines still waiting (service.logs)
        handler.flush()


def child_exit(server: Any, worker: Any) -> None:
    """Drop the metrics of a dead worker process (prometheus multi-process mode)."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)
