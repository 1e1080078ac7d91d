"""Real processes on free loopback ports, for tests and benchmarks: a `redis-server`, gunicorn
serving `create_app()` (or the floor app, `lab.floor_app`), `kashgar worker`. Every process runs
in its own session so that a kill takes its children (RQ's work horse) with it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ProcessExited(RuntimeError):
    """Raised by a `wait_until` predicate whose process has exited: waiting longer cannot help."""


def wait_until(predicate: Any, timeout: float, interval: float = 0.05, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = predicate()
            if last:
                return last
        except ProcessExited:
            raise
        except Exception as exc:  # noqa: BLE001 - keep polling until the deadline
            last = exc
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


def http_json(method: str, url: str, body: Any = None, timeout: float = 30.0,
              headers: Mapping[str, str] | None = None, response_headers: dict[str, str] | None = None
              ) -> tuple[int, Any]:
    """The status and JSON body (else text) of a request; `response_headers`, when given, is
    filled with the answer's headers."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read()
            status = resp.status
            got = dict(resp.headers.items())
    except urllib.error.HTTPError as err:
        raw = err.read()
        status = err.code
        got = dict(err.headers.items())
    if response_headers is not None:
        response_headers.update(got)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


class Proc:
    """A child process in its own session, its output in a log file."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        env: Mapping[str, str] | None = None,
        cwd: str | Path | None = None,
        log_dir: str | None = None,
    ) -> None:
        self.name = name
        self.argv = argv
        self.log_path = Path(log_dir or tempfile.mkdtemp(prefix="kashgar-proc-")) / f"{name}.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        full_env = dict(os.environ)
        full_env.update(env or {})
        self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.popen = subprocess.Popen(
            argv,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=full_env,
            cwd=str(cwd or REPO_ROOT),
            start_new_session=True,
        )

    @property
    def pid(self) -> int:
        return int(self.popen.pid)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, sig)

    def stop(self, timeout: float = 10.0) -> None:
        family = descendants(self.pid) if self.alive() else []
        if self.alive():
            self.kill_group(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill_group(signal.SIGKILL)
                self.popen.wait(5)
        else:
            self.kill_group(signal.SIGKILL)  # leftovers of the session
        for pid in family:  # children in sessions of their own (RQ's work horse)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        self._log.close()

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")


class RedisServer:
    """`redis-server` on a free loopback port, no persistence."""

    def __init__(self, port: int | None = None, log_dir: str | None = None) -> None:
        self.port = port or free_port()
        self.dir = tempfile.mkdtemp(prefix="kashgar-redis-")
        self.log_dir = log_dir or self.dir
        self.proc: Proc | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        exe = shutil.which("redis-server")
        if exe is None:
            raise RuntimeError("redis-server is not installed")
        self.proc = Proc(
            f"redis-{self.port}",
            [
                exe,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                self.dir,
                "--protected-mode",
                "no",
            ],
            log_dir=self.log_dir,
        )
        wait_until(self.ping, 10.0, what=f"redis-server on {self.port}")
        return self

    def ping(self) -> bool:
        import redis

        return bool(redis.Redis(host="127.0.0.1", port=self.port, socket_connect_timeout=0.5).ping())

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Gunicorn:
    """gunicorn serving `service:create_app()` with the defaults of `kashgar serve`."""

    def __init__(
        self,
        env: Mapping[str, str] | None = None,
        workers: int = 2,
        port: int | None = None,
        log_dir: str | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.env = dict(env or {})
        self._own_data: str | None = None  # the data directory made for this server, removed when it stops
        self.workers = workers
        self.log_dir = log_dir
        self.extra_args = extra_args or []
        self.proc: Proc | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Gunicorn:
        if "KASHGAR_DATA_DIR" not in self.env:  # a job store of its own, not the user's data directory
            self._own_data = self.env["KASHGAR_DATA_DIR"] = tempfile.mkdtemp(prefix="kashgar-data-")
        argv = [
            sys.executable,
            "-m",
            "kashgar_cli.main",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            str(self.workers),
            *self.extra_args,
        ]
        self.proc = Proc(f"gunicorn-{self.port}", argv, env=self.env, log_dir=self.log_dir)

        def up() -> bool:
            if self.proc is not None and not self.proc.alive():
                raise ProcessExited("gunicorn exited")
            return http_json("GET", self.url + "/healthz", timeout=2.0)[0] == 200

        try:
            wait_until(up, timeout, interval=0.1, what="gunicorn /healthz")
        except (TimeoutError, RuntimeError) as exc:
            out = self.proc.output()[-3000:] if self.proc else ""
            self.stop()
            raise RuntimeError(f"{exc}\n{out}") from None
        return self

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None
        if self._own_data is not None:
            shutil.rmtree(self._own_data, ignore_errors=True)
            del self.env["KASHGAR_DATA_DIR"]
            self._own_data = None

    def __enter__(self) -> Gunicorn:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class FloorServer:
    """gunicorn serving the floor app (`lab.floor_app`: parse the body, answer a fixed JSON) with
    the settings `kashgar serve` gives the service: as many workers, gunicorn's threaded worker
    with as many threads, the same keep-alive and backlog (`kashgar bench service --floor`)."""

    def __init__(self, workers: int = 2, port: int | None = None, log_dir: str | None = None) -> None:
        self.port = port or free_port()
        self.workers = workers
        self.log_dir = log_dir
        self.proc: Proc | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def argv(self) -> list[str]:
        from service.gunicorn_worker import KEEPALIVE_S, THREADS

        return [sys.executable, "-m", "gunicorn", "--bind", f"127.0.0.1:{self.port}", "--workers",
                str(self.workers), "--worker-class", "gthread", "--threads", str(THREADS), "--keep-alive",
                str(KEEPALIVE_S), "--backlog", "2048", "--preload", "--log-level", "warning",
                "lab.floor_app:app"]

    def start(self, timeout: float = 60.0) -> FloorServer:
        self.proc = Proc(f"floor-{self.port}", self.argv(), log_dir=self.log_dir)

        def up() -> bool:
            if self.proc is not None and not self.proc.alive():
                raise ProcessExited("gunicorn exited")
            return http_json("GET", self.url + "/healthz", timeout=2.0)[0] == 200

        try:
            wait_until(up, timeout, interval=0.1, what="the floor app's /healthz")
        except (TimeoutError, RuntimeError) as exc:
            out = self.proc.output()[-3000:] if self.proc else ""
            self.stop()
            raise RuntimeError(f"{exc}\n{out}") from None
        return self

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def __enter__(self) -> FloorServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class Worker:
    """`kashgar worker` (an RQ worker that forks a work horse per part)."""

    def __init__(
        self,
        redis_url: str,
        env: Mapping[str, str] | None = None,
        log_dir: str | None = None,
        name: str | None = None,
        extra_args: list[str] | None = None,
    ) -> None:
        self.redis_url = redis_url
        self.env = dict(env or {})
        self.env["KASHGAR_REDIS_URL"] = redis_url
        self.log_dir = log_dir
        self.name = name or f"w{free_port()}"
        self.extra_args = extra_args or []
        self.proc: Proc | None = None

    def start(self) -> Worker:
        argv = [
            sys.executable,
            "-m",
            "kashgar_cli.main",
            "worker",
            "--url",
            self.redis_url,
            "--name",
            self.name,
            *self.extra_args,
        ]
        self.proc = Proc(f"worker-{self.name}", argv, env=self.env, log_dir=self.log_dir)
        return self

    def kill(self) -> None:
        """SIGKILL the worker and its work horse (RQ puts the horse in a session of its own):
        no cleanup, as when a machine dies."""
        if self.proc is not None:
            family = descendants(self.proc.pid)
            self.proc.kill_group(signal.SIGKILL)
            for pid in family:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            self.proc.popen.wait(10)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None

    def __enter__(self) -> Worker:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


@contextlib.contextmanager
def stack(
    workers: int = 1, web_workers: int = 2, env: Mapping[str, str] | None = None, log_dir: str | None = None,
    express_workers: int = 0,
) -> Iterator[tuple[RedisServer, Gunicorn, list[Worker]]]:
    """redis-server + gunicorn (Redis mode) + `workers` RQ workers (and `express_workers` more
    with `--express`, listed after them)."""
    with RedisServer(log_dir=log_dir) as redis_server:
        full_env = dict(env or {})
        full_env["KASHGAR_REDIS_URL"] = redis_server.url
        ws = [Worker(redis_server.url, env=full_env, log_dir=log_dir).start() for _ in range(workers)]
        ws += [Worker(redis_server.url, env=full_env, log_dir=log_dir, extra_args=["--express"]).start()
               for _ in range(express_workers)]
        try:
            with Gunicorn(env=full_env, workers=web_workers, log_dir=log_dir) as web:
                yield redis_server, web, ws
        finally:
            for w in ws:
                w.stop()
