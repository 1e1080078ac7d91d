"""Health probes answered by gunicorn's master process, on a port of their own
(`KASHGAR_HEALTH_BIND`, e.g. `0.0.0.0:8001`; unset: none).

A sync web worker serves one request at a time, so a probe sent to the API port waits behind the
searches queued there: with every worker busy, the API's `/readyz` answered in 8 s (2 workers,
8 clients of 2 s searches: `python -m loadtests.probes`, BENCHMARKS.md), which is the queue's
length, not the server's readiness; here it answered in milliseconds. The master
process runs no searches: a thread of it answers `GET /healthz` and `GET /readyz` here at once,
however busy the workers are.
- `/healthz`: the master runs; the body adds `web_workers`, the worker processes it has now.
- `/readyz`: the API's checks (`service.readiness`: the engine loads, the job queue answers) and
  at least one live web worker (`checks.web_workers`: "live of configured"); 503 `not_ready` if not.

The master loads the app (gunicorn's `preload_app`, on by default here) and asks its job manager;
a worker process closes its copy of the listening socket when it starts (`close_in_worker`), so
the port stops answering when the master goes.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .errors import APIError, http_code
from .readiness import health, readiness

log = logging.getLogger("kashgar.health")

#: (status, body) of a path, or None when this listener has no such path.
Answer = Callable[[str], "tuple[int, dict[str, Any]] | None"]

PATHS = ("/healthz", "/readyz")


class _Handler(BaseHTTPRequestHandler):
    server: HealthListener
    #: Seconds each read or write of a probe's socket may take (a stalled client holds one thread).
    timeout = 5.0
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = self.path.split("?", 1)[0]
        try:
            answer = self.server.answer(path)
        except Exception as exc:  # noqa: BLE001 - a probe gets an answer, never a dropped socket
            log.exception("health listener: %s failed", path)
            answer = (503, {"ready": False, "error": "not_ready", "checks": {"listener": f"error: {exc}"}})
        if answer is None:
            self._error(404, "Not Found", f"no route {path!r}: this port answers GET {' and '.join(PATHS)}", "path")
        else:
            self._send(*answer)

    def do_HEAD(self) -> None:  # noqa: N802
        self._error(405, "Method Not Allowed", "this port answers GET only", "path")

    do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_HEAD  # noqa: N815

    def _error(self, status: int, reason: str, message: str, where: str) -> None:
        body = APIError(status, http_code(status, reason), message, "", location=where).body()
        self._send(status, body, {"Allow": "GET"} if status == 405 else {})

    def _send(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
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
    """An HTTP server on its own daemon thread; each probe on a daemon thread of its own."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], answer: Answer) -> None:
        self.answer = answer
        super().__init__(address, _Handler)
        self._thread = threading.Thread(target=self.serve_forever, name="kashgar-health", daemon=True)

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


def arbiter_answer(arbiter: Any) -> Answer:
    """The answers of a gunicorn master (`arbiter`): its app's job manager and its live workers."""
    manager = arbiter.app.wsgi().extensions["kashgar_jobs"]

    def answer(path: str) -> tuple[int, dict[str, Any]] | None:
        live = len(arbiter.WORKERS)
        if path == "/healthz":
            return 200, {**health(manager), "web_workers": live}
        if path == "/readyz":
            ok, body = readiness(manager)
            body["checks"]["web_workers"] = f"{live} of {arbiter.num_workers}"
            if live == 0:
                ok = False
                body.update(ready=False, error="not_ready")
            return (200 if ok else 503), body
        return None

    return answer
