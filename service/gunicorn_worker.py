"""The gunicorn worker of `kashgar serve`: gunicorn's threaded worker (gthread) with a deadline on
the whole request.

Threads read the clients' sockets; a request enters the app only once its head and body have
arrived. In the app, requests of a process run side by side: a search lets go of the GIL every few
ms, so a health probe, a job's status or a short search is answered while a long search runs; a
synchronous search long enough to need the core waits for its process to itself
(`service.admission`). A client that trickles its request holds one thread, not the process: its
request must have arrived `KASHGAR_CLIENT_TIMEOUT_S` (default 10 s) after its first byte, or it is
answered 408 and the connection closed. Each write to a client has that long too. One client
address holds at most `KASHGAR_CLIENT_CONNECTIONS` of a process's connections at once (the next
are answered 429 and closed), so slow clients from one address leave the threads to the others;
a request for a health path (`/healthz`, `/readyz`, `/metrics`: `service.clients.OPEN_PATHS`) is
never refused by it: a connection over the bound waits on the poller, without a thread, for its
request line, and is let in when it asks for one of those. Many addresses at once are what a
buffering proxy in front protects the server from (`deploy/nginx.conf`, docs/service.md).

It also answers the errors gunicorn raises itself, before the app sees the request (a request
line over 4094 bytes: 414; too many or too large headers: 431; a bad Content-Length: 400), with
the service's JSON error body instead of gunicorn's HTML page; and when gunicorn's worker timeout
ends a process, the log names the request it was serving (`timeout_log_filter`).
"""

from __future__ import annotations

import email.utils
import io
import json
import logging
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

import gunicorn.util
from gunicorn.workers.gthread import ThreadWorker

from .clients import OPEN_PATHS
from .config import Settings
from .errors import PROBLEM_JSON, APIError, http_code
from .logs import new_request_id

log = logging.getLogger("kashgar.service")

#: Bytes of the record of the request a process is serving, kept in its gunicorn heartbeat file.
RECORD_BYTES = 512
#: Bytes of a request's start looked at to read its path (a connection over the per-address bound).
HEAD_PEEK = 512
#: gunicorn's `threads` and `keepalive` in `service/gunicorn_conf.py`, here where they can be read
#: without starting a server (`kashgar bench service --floor` serves its floor app with them too).
THREADS = 32
KEEPALIVE_S = 5


def client_timeout_s() -> float:
    """`KASHGAR_CLIENT_TIMEOUT_S` (Settings.client_timeout_s), which must be above 0."""
    value = Settings.from_env().client_timeout_s
    if not value > 0:
        raise ValueError(f"KASHGAR_CLIENT_TIMEOUT_S={value!r}: must be above 0")
    return value


class RequestDeadline(TimeoutError):
    """A request had not arrived whole by its deadline (a TimeoutError, as gunicorn's body drain and
    `service.api.common.read_body` take a slow client's)."""


class DeadlineSocket:
    """A client socket whose reads stop at the current request's deadline: the first read of a
    request starts it, `arrived` ends it. A read also keeps any shorter timeout its caller set
    (gunicorn's drains and graceful close). Everything else is the socket's.

    A response goes out in one write where it can: `hold_next` keeps the next write (gunicorn writes
    a response's head on its own) to go out with the one after it (the body, or its first part), and
    `flush` sends what is still held (a response without a body; `DeadlineThreadWorker.handle_request`
    calls it once the response is written). Every other way of writing sends what is held first."""

    def __init__(self, sock: Any, timeout: float) -> None:
        self._sock = sock
        self._timeout: float | None = sock.gettimeout()
        self._set: float | None = self._timeout  # the timeout the socket has now
        self.client_timeout = timeout
        self.deadline: float | None = None
        self.started = 0.0
        self.expired = False
        self.answered = False
        self._hold = False
        self._held: bytes | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)

    def _settimeout(self, value: float | None) -> None:
        if value != self._set:
            self._sock.settimeout(value)
            self._set = value

    def settimeout(self, value: float | None) -> None:
        self._timeout = value
        self._sock.settimeout(value)
        self._set = value

    def setblocking(self, flag: bool) -> None:
        self._timeout = None if flag else 0.0
        self._sock.setblocking(flag)
        self._set = self._timeout

    def gettimeout(self) -> float | None:
        return self._timeout

    def arrived(self) -> None:
        """The request has been read: its deadline no longer applies (the next read starts the next
        one's). One that missed it keeps it: the rest of its body is not waited for."""
        if not self.expired:
            self.deadline = None

    def recv(self, size: int) -> bytes:
        now = time.monotonic()
        if self.deadline is None:
            self.started, self.deadline = now, now + self.client_timeout
        remaining = self.deadline - now
        if remaining <= 0:
            self.expired = True
            raise RequestDeadline(f"the request did not arrive within {self.client_timeout:g} s")
        self._settimeout(remaining if self._timeout is None else min(self._timeout, remaining))
        try:
            data: bytes = self._sock.recv(size)
        except TimeoutError:
            if time.monotonic() >= self.deadline:
                self.expired = True
                raise RequestDeadline(f"the request did not arrive within {self.client_timeout:g} s") from None
            raise
        return data

    def _write(self, method: Callable[..., Any], *args: Any) -> Any:
        # a write has the client timeout (or the shorter one its caller set); the socket keeps it
        # until a read or a caller sets another
        self._settimeout(self.client_timeout if self._timeout is None else self._timeout)
        result = method(*args)
        self.answered = True
        return result

    def peek(self, size: int) -> bytes | None:
        """What has arrived on the socket and not been read, up to `size` bytes, left there (None:
        nothing yet; b"": the client closed it)."""
        try:
            data: bytes = self._sock.recv(size, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return None
        except OSError:
            return b""
        return data

    def hold_next(self) -> None:
        """Keep the next write to go out with the one after it (or at `flush`)."""
        self._hold = True

    def flush(self) -> None:
        """Send what `hold_next` kept, if anything; hold nothing more."""
        self._hold = False
        held, self._held = self._held, None
        if held is not None:
            self._write(self._sock.sendall, held)

    def drop(self) -> None:
        """Forget what is held (its response failed and the connection closes)."""
        self._hold, self._held = False, None

    def sendall(self, data: bytes) -> None:
        if self._hold:
            self._hold = False
            self._held = bytes(data)
            return
        if self._held is not None:
            data, self._held = self._held + data, None
        self._write(self._sock.sendall, data)

    def send(self, data: bytes) -> int:
        self.flush()
        return int(self._write(self._sock.send, data))

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        self.flush()
        return int(self._write(self._sock.sendfile, file, offset, count))


class _Stalled(io.RawIOBase):
    """The body of a request whose deadline passed while it was read: reading it is a TimeoutError
    (`service.api.common.read_body` answers 408)."""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        raise RequestDeadline("the request body did not arrive in time")


class WholeRequests:
    """WSGI middleware: the body is read (to the app's MAX_CONTENT_LENGTH and one byte more, so
    that the app sees a body over it) before the request enters the app. While requests are in the
    app, the worker's heartbeat file names the one that entered first (`timeout_log_filter`)."""

    def __init__(self, app: Any, record: Callable[[str], None]) -> None:
        self.app = app
        self.lock = threading.Lock()  # guards `inside`
        self.inside: dict[int, str] = {}  # the requests in the app, by arrival
        self.arrivals = 0
        self.record = record
        config = getattr(app, "config", {})
        self.limit: int | None = config.get("MAX_CONTENT_LENGTH")

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)  # the Flask app's own (`extensions`: gunicorn_conf's hooks)

    def _read_body(self, environ: dict[str, Any]) -> None:
        stream = environ["wsgi.input"]
        length = environ.get("CONTENT_LENGTH") or ""
        if length.isdigit():
            if self.limit is not None and int(length) > self.limit:
                return  # the app answers 413 without reading it
            environ["wsgi.input"] = io.BytesIO(stream.read(int(length)) if int(length) else b"")
        elif environ.get("wsgi.input_terminated"):  # chunked: the server ends the stream
            environ["wsgi.input"] = io.BytesIO(stream.read() if self.limit is None else stream.read(self.limit + 1))

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        sock = environ.get("gunicorn.socket")
        try:
            self._read_body(environ)
        except RequestDeadline:
            environ["wsgi.input"] = io.BufferedReader(_Stalled())
        finally:
            if isinstance(sock, DeadlineSocket):
                sock.arrived()
        client = environ.get("REMOTE_ADDR", "")
        what = f"{environ.get('REQUEST_METHOD', '')} {environ.get('PATH_INFO', '')} from {client}"
        with self.lock:
            self.arrivals += 1
            key = self.arrivals
            self.inside[key] = f"{time.time():.3f} {what}"
            self.record(self.inside[min(self.inside)])
        try:
            return self.app(environ, start_response)  # type: ignore[no-any-return]
        finally:
            with self.lock:
                del self.inside[key]
                self.record(self.inside[min(self.inside)] if self.inside else "")


class _SlowClientFilter(logging.Filter):
    """gunicorn logs a socket error while it reads a request head as an error with a traceback; a
    client that missed its deadline is answered and logged by the worker (`handle`), and any other
    timeout becomes one plain warning line: a slow client is not a server error."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, RequestDeadline):
            return False
        if isinstance(exc, TimeoutError):
            record.msg, record.args, record.exc_info, record.exc_text = (
                "a client sent no complete request within the client timeout; connection closed", (), None, None)
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def write_json_error(sock: Any, status: int, reason: str, message: str, headers: str = "") -> None:
    """gunicorn's `util.write_error`, writing the service's error body (`service.errors`) with a
    fresh request id, in the body and `X-Request-ID` as every answer of the app has, and logged on
    the access log (the request was not read far enough to take the caller's own id; gunicorn also
    answers 500 here for an error of its own while it handles a request)."""
    where = "path" if status == 414 else "header" if status == 431 else "body"
    code = http_code(status, reason)
    error = APIError(status, code, message or reason, "", location=where)
    rid = new_request_id()
    data = json.dumps(dict(error.body(), request_id=rid)).encode()
    logging.getLogger("kashgar.access").info(
        "answered by gunicorn, not the app: %s %s", status, code,
        extra={"status": status, "error": code, "request_id": rid},
    )
    head = (f"HTTP/1.1 {status} {reason}\r\nConnection: close\r\nContent-Type: {PROBLEM_JSON}\r\n"
            f"X-Request-ID: {rid}\r\n{headers}Content-Length: {len(data)}\r\n\r\n").encode("latin-1")
    gunicorn.util.write_nonblock(sock, head + data)


_DATE: tuple[int, str] = (0, "")


def http_date(timestamp: float | None = None) -> str:
    """gunicorn's `util.http_date`, made once a second rather than for every response (an answer's
    `Date` names the second)."""
    global _DATE
    if timestamp is not None:
        return email.utils.formatdate(timestamp, localtime=False, usegmt=True)
    now = int(time.time())
    second, text = _DATE
    if second != now:
        text = email.utils.formatdate(now, localtime=False, usegmt=True)
        _DATE = (now, text)
    return text


class DeadlineThreadWorker(ThreadWorker):
    """`worker_class` in `service/gunicorn_conf.py`."""

    def init_process(self) -> None:
        self.client_timeout = client_timeout_s()
        settings = Settings.from_env()
        self.per_client = 0 if settings.trusted_proxies else settings.client_connections
        self.held: dict[str, int] = {}  # connections in threads, by client address (main thread only)
        self.log.error_log.addFilter(_SlowClientFilter())
        # gunicorn's workers call `util.write_error` for the errors they answer themselves; in this
        # worker process it writes JSON.
        gunicorn.util.write_error = write_json_error  # type: ignore[assignment]
        gunicorn.util.http_date = http_date
        self.serving = ""
        super().init_process()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi: Any = WholeRequests(self.wsgi, self.record)

    def record(self, what: str) -> None:
        """Name the request in the app ("" when none) where the master reads it: the first
        RECORD_BYTES bytes of this process's heartbeat file (`timeout_log_filter`)."""
        self.serving = what
        data = what.encode("utf-8", "replace")[: RECORD_BYTES - 1].ljust(RECORD_BYTES)
        fd = self.tmp.fileno()
        # the file's mtime is the heartbeat gunicorn's master reads: a write must leave it as it was
        before = os.fstat(fd)
        os.pwrite(fd, data, 0)
        os.utime(fd, ns=(before.st_atime_ns, before.st_mtime_ns))

    def enqueue_req(self, conn: Any) -> None:
        if not isinstance(conn.sock, DeadlineSocket):
            conn.sock = DeadlineSocket(conn.sock, self.client_timeout)
        addr = _address(conn.client)
        if self.per_client and self.held.get(addr, 0) >= self.per_client:
            head = request_start(conn)
            if head is None:
                self.await_head(conn)
                return
            if request_path(head) not in OPEN_PATHS:
                self.refuse(conn, addr)
                return
        self.held[addr] = self.held.get(addr, 0) + 1
        super().enqueue_req(conn)

    def await_head(self, conn: Any) -> None:
        """Wait on the poller, without a thread, for what a connection over its address's bound
        sends first (gunicorn's pending connections: `enqueue_req` again once it is readable, closed
        after the client timeout)."""
        conn.sock.setblocking(False)
        conn.timeout = time.monotonic() + self.client_timeout
        self.pending_conns.append(conn)
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_pending_socket_readable, conn))

    def finish_request(self, conn: Any, fs: Any) -> None:
        addr = _address(conn.client)
        left = self.held.get(addr, 0) - 1
        if left > 0:
            self.held[addr] = left
        else:
            self.held.pop(addr, None)
        super().finish_request(conn, fs)

    def refuse(self, conn: Any, addr: str) -> None:
        """429 and close: `addr` already has `per_client` connections in this process's threads."""
        log.warning("a client holds %s connections of this process (KASHGAR_CLIENT_CONNECTIONS): 429, connection "
                    "closed", self.per_client, extra={"client": addr, "status": 429})
        try:
            conn.sock.setblocking(False)
            write_json_error(conn.sock, 429, "Too Many Requests",
                             f"this address has {self.per_client} connections in this server's threads already "
                             "(KASHGAR_CLIENT_CONNECTIONS): wait for their answers", headers="Retry-After: 1\r\n")
            for _ in range(16):  # what it sent already is read, so that closing sends no reset before the 429
                if not conn.sock.recv(65536):
                    break
        except OSError:
            pass
        self.nr_conns -= 1
        conn.close()

    def handle(self, conn: Any) -> Any:
        sock: DeadlineSocket = conn.sock
        sock.deadline, sock.expired, sock.answered = None, False, False
        result = super().handle(conn)
        if sock.expired and not sock.answered:
            # the head did not arrive whole in time (a stalled body is the app's 408)
            log.warning("a client sent no complete request within the client timeout (%s s after its first byte, "
                        "KASHGAR_CLIENT_TIMEOUT_S): 408, connection closed", self.client_timeout,
                        extra={"client": _client(conn.client), "status": 408})
            try:
                write_json_error(sock, 408, "Request Timeout",
                                 f"the request did not arrive whole within {self.client_timeout:g} s")
            except OSError:
                pass
            return False
        return result

    def handle_request(self, req: Any, conn: Any) -> Any:
        """gunicorn's, with the response's head written with its body, in one write
        (`DeadlineSocket.hold_next`)."""
        sock = conn.sock
        if not isinstance(sock, DeadlineSocket):
            return super().handle_request(req, conn)
        sock.hold_next()
        try:
            keep = super().handle_request(req, conn)
        except BaseException:
            sock.drop()
            raise
        sock.flush()
        return keep

    def handle_abort(self, sig: int, frame: Any) -> None:
        """gunicorn's worker timeout (SIGABRT): say which request was slow before the process goes."""
        if self.serving:
            self.log.error("worker timeout: %s", describe(self.serving))
        super().handle_abort(sig, frame)


def request_start(conn: Any) -> bytes | None:
    """The start of the next request on `conn` (what gunicorn's parser read ahead, then what
    waits on the socket), up to HEAD_PEEK bytes, none of it consumed (None: nothing yet)."""
    parser = getattr(conn, "parser", None)
    ahead: bytes = parser.unreader.buf.getvalue() if parser is not None else b""
    if len(ahead) >= HEAD_PEEK:
        return ahead
    waiting = conn.sock.peek(HEAD_PEEK - len(ahead)) if isinstance(conn.sock, DeadlineSocket) else b""
    if waiting is None:
        return ahead or None
    return ahead + waiting


def request_path(head: bytes) -> str | None:
    """The path of the request line `head` starts with (`GET /healthz?x HTTP/1.1`: `/healthz`);
    None while its target has not arrived whole."""
    _, sp, rest = head.partition(b" ")
    target, sp2, _ = rest.partition(b" ")
    if not (sp and sp2):
        return None
    return target.split(b"?", 1)[0].decode("latin-1")


def _address(addr: Any) -> str:
    """A client's address without its port (a unix socket's peer: "")."""
    return str(addr[0]) if isinstance(addr, tuple) and addr else ""


def _client(addr: Any) -> str:
    return f"{addr[0]}:{addr[1]}" if isinstance(addr, tuple) and len(addr) >= 2 else str(addr)


def describe(record: str) -> str:
    """`POST /suggest from 127.0.0.1, in the app for 52.1 s` from a record `WholeRequests` wrote."""
    stamp, _, what = record.strip().partition(" ")
    try:
        return f"{what}, in the app for {time.time() - float(stamp):.1f} s"
    except ValueError:
        return record.strip()


class _TimeoutLogFilter(logging.Filter):
    """On the master's log: gunicorn's "WORKER TIMEOUT (pid:N)" names the request the process was
    serving (from its heartbeat file), and the SIGKILL that follows when the process does not stop
    says so instead of "Perhaps out of memory?"."""

    def __init__(self, arbiter: Any) -> None:
        super().__init__()
        self.arbiter = arbiter
        self.timed_out: dict[int, str] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        msg = str(record.msg)
        args: tuple[Any, ...] = record.args if isinstance(record.args, tuple) else ()
        if msg.startswith("WORKER TIMEOUT (pid:%s)") and args:
            pid = int(args[0])
            worker = self.arbiter.WORKERS.get(pid)
            what = ""
            if worker is not None:
                try:
                    what = os.pread(worker.tmp.fileno(), RECORD_BYTES, 0).decode("utf-8", "replace").strip()
                except OSError:
                    what = ""
            serving = f"serving {describe(what)}" if what else "between requests"
            self.timed_out[pid] = serving
            record.msg = "WORKER TIMEOUT (pid:%s): no heartbeat for %s s, %s"
            record.args = (pid, self.arbiter.timeout, serving)
        elif "Perhaps out of memory?" in msg and args and int(args[0]) in self.timed_out:
            record.msg = "Worker (pid:%s) was sent %s after the worker timeout (it did not stop on SIGABRT), %s"
            record.args = (*args, self.timed_out.pop(int(args[0])))
        return True


def timeout_log_filter(arbiter: Any) -> None:
    """Install `_TimeoutLogFilter` on the master's error log (`on_starting` in gunicorn_conf)."""
    arbiter.log.error_log.addFilter(_TimeoutLogFilter(arbiter))
