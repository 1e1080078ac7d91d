"""Health probes answered by gunicorn's master process, on a port of their own
(`KASHGAR_HEALTH_BIND`, e.g. `0.0.0.0:8001`; unset: none).

A sync web worker serves one request at a time, so a probe sent to the API port waits behind the
searches queued there: with every worker busy, the API's `/readyz` answered in 8 s (2 workers,
8 clients of 2 s searches: `python -m loadtests.probes`, BENCHMARKS.md), which is the queue's
length, not the server's readiness; here it answered in milliseconds.
- `/healthz`: the master runs; the body adds `web_workers`, the worker processes it has now.
- `/readyz`: the API's checks (`service.readiness`: the engine loads, the job queue answers), at
  least one live web worker (`checks.web_workers`: "live of configured") and the API port open
  (not a server shutting down); 503 `not_ready` if not.

How it stays out of the way of the master, which forks the web workers:
- The checks run on one thread of their own, once a second (`Checker`); a probe gets the last
  result (`checks.age_s` says how old), so no probe touches the job store, and a check that hangs
  (a Redis that does not answer) makes the answer stale, then 503, never a hung probe.
- A check holds a lock that a fork waits for (`os.register_at_fork`): a worker is never forked
  while that thread is inside SQLite or Redis code, whose locks the child would inherit taken.
- Probes are served by at most `MAX_CLIENTS` threads, each request cut off after `DEADLINE_S`.
- The master loads the app (gunicorn's `preload_app`, which the health port requires) and asks its
  job manager; a worker closes its copy of the listening socket when it starts (`close_in_worker`),
  so the port stops answering when the master goes.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .errors import PROBLEM_JSON, APIError, http_code
from .readiness import health, not_ready, readiness

log = logging.getLogger("kashgar.health")

#: (status, body) of a path, or None when this listener has no such path.
Answer = Callable[[str], "tuple[int, dict[str, Any]] | None"]

PATHS = ("/healthz", "/readyz")
MAX_CLIENTS = 16  # probes served at once; more connections are closed unanswered
DEADLINE_S = 2.0  # a whole request, from accept to the answer sent
CHECK_EVERY_S = 1.0
STALE_S = 10.0  # a readiness result older than this (its check hangs) is not ready


class _Handler(BaseHTTPRequestHandler):
    server: HealthListener
    timeout = DEADLINE_S  # each read or write; `handle` cuts the whole request off at DEADLINE_S too
    protocol_version = "HTTP/1.0"  # one request a connection: a probe holds no thread between probes

    def handle(self) -> None:
        cutoff = threading.Timer(self.server.deadline_s, self._cut_off)
        cutoff.daemon = True
        cutoff.start()
        try:
            super().handle()
        finally:
            cutoff.cancel()

    def _cut_off(self) -> None:
        try:
            self.connection.shutdown(socket.SHUT_RDWR)  # the blocked read returns: the thread ends
        except OSError:
            pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        try:
            answer = self.server.answer(path)
        except Exception as exc:  # noqa: BLE001 - a probe gets an answer, never a dropped socket
            log.exception("health listener: %s failed", path)
            answer = (503, not_ready({}, listener=f"error: {exc}"))
        if answer is None:
            self._error(404, "Not Found", f"no route {path!r}: this port answers GET {' and '.join(PATHS)}")
        else:
            self._send(*answer)

    def do_HEAD(self) -> None:  # noqa: N802
        self._error(405, "Method Not Allowed", "this port answers GET only")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD  # noqa: N815

    def _error(self, status: int, reason: str, message: str) -> None:
        body = APIError(status, http_code(status, reason), message, "", location="path").body()
        self._send(status, body, {"Allow": "GET"} if status == 405 else {}, PROBLEM_JSON)

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None,
              content_type: str = "application/json") -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - http.server's signature
        log.debug("health listener: " + format, *args)


class HealthListener(ThreadingHTTPServer):
    """An HTTP server on its own daemon thread; each probe on a daemon thread of its own, at most
    `MAX_CLIENTS` at once."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], answer: Answer, max_clients: int = MAX_CLIENTS,
                 deadline_s: float = DEADLINE_S) -> None:
        self.answer = answer
        self.deadline_s = deadline_s
        self._slots = threading.BoundedSemaphore(max_clients)
        super().__init__(address, _Handler)
        self._thread = threading.Thread(target=self.serve_forever, name="kashgar-health", daemon=True)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):  # full: this connection is closed unanswered
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A probe that went away (its client timed out) is no error of the server's."""
        log.debug("health listener: a client went away (%s)", client_address, exc_info=True)

    def start(self) -> HealthListener:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket (in the process that runs the thread)."""
        if self._thread.is_alive():
            self.shutdown()
        self.server_close()

    def close_in_worker(self) -> None:
        """In a forked child, where the serving thread does not exist: close the inherited socket."""
        self.server_close()


class Checker:
    """Runs `check` (the readiness checks) on a thread of its own every `every` seconds and keeps
    the last result. A fork of this process waits while a check runs (the child would inherit the
    locks of the job store's client taken)."""

    def __init__(self, check: Callable[[], tuple[bool, dict[str, Any]]], every: float = CHECK_EVERY_S) -> None:
        self._check = check
        self._every = every
        self._lock = threading.Lock()
        self._result: tuple[float, bool, dict[str, Any]] | None = None
        self._stop = threading.Event()
        os.register_at_fork(before=self._hold, after_in_parent=self._release, after_in_child=self._reset_in_child)
        self.run_once()  # the first result (and every lazy import of the checks) before any fork
        self._thread = threading.Thread(target=self._loop, name="kashgar-health-checks", daemon=True)

    def _hold(self) -> None:
        self._lock.acquire()

    def _release(self) -> None:
        self._lock.release()

    def _reset_in_child(self) -> None:
        self._lock = threading.Lock()
        self._stop.set()  # a worker runs no checks

    def run_once(self) -> None:
        with self._lock:
            try:
                ok, body = self._check()
            except Exception as exc:  # noqa: BLE001 - a failed check is "not ready", named
                ok, body = False, not_ready({}, checks=f"error: {exc}")
            self._result = (time.monotonic(), ok, body)

    def _loop(self) -> None:
        while not self._stop.wait(self._every):
            self.run_once()

    def start(self) -> Checker:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def last(self) -> tuple[bool, dict[str, Any]]:
        """The last result, with `checks.age_s`; not ready when it is older than STALE_S."""
        assert self._result is not None
        at, ok, body = self._result
        age = time.monotonic() - at
        body = {**body, "checks": {**body.get("checks", {}), "age_s": f"{age:.1f}"}}
        if age > STALE_S:
            return False, not_ready(body, stale=f"the checks have not finished for {age:.0f} s")
        return ok, body


def _manager(arbiter: Any) -> Any:
    """The job manager of the app a gunicorn master (`arbiter`) preloaded."""
    return arbiter.app.wsgi().extensions["kashgar_jobs"]


def arbiter_checks(arbiter: Any) -> Callable[[], tuple[bool, dict[str, Any]]]:
    """The readiness of a gunicorn master (`arbiter`): its app's checks (`service.readiness`), its
    live web workers and its API listeners (closed while it shuts down)."""
    manager = _manager(arbiter)

    def check() -> tuple[bool, dict[str, Any]]:
        ok, body = readiness(manager)
        live = len(arbiter.WORKERS)
        body["checks"]["web_workers"] = f"{live} of {arbiter.num_workers}"
        if not arbiter.LISTENERS:
            return False, not_ready(body, listeners="closed: shutting down")
        if live == 0:
            return False, not_ready(body)
        return ok, body

    return check


def arbiter_answer(arbiter: Any, checker: Checker) -> Answer:
    """The answers of a gunicorn master: `/healthz` at once, `/readyz` from `checker`'s last result."""
    manager = _manager(arbiter)

    def answer(path: str) -> tuple[int, dict[str, Any]] | None:
        if path == "/healthz":
            return 200, {**health(manager), "web_workers": len(arbiter.WORKERS)}
        if path == "/readyz":
            ok, body = checker.last()
            return (200 if ok else 503), body
        return None

    return answer
