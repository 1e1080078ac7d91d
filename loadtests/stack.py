"""Shared helpers of the load and reliability scripts: a stack on loopback (redis-server, gunicorn,
RQ workers; the process classes of `lab.serving`), a bounded headless locust run with its
CSV/HTML reports, and RSS sampling of the stack's processes."""

from __future__ import annotations

import contextlib
import csv
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from lab.serving import Gunicorn, RedisServer, Worker, descendants
from loadtests.env import async_timeout_s

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LOCUSTFILE = HERE / "locustfile.py"
DEFAULT_REPORTS = HERE / "reports"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}

#: Service settings for the load runs: fast dead-worker detection (faults); the sync limits are
#: the service's defaults.
STACK_ENV: dict[str, str] = {
    "KASHGAR_HEARTBEAT_INTERVAL": "0.5",
    "KASHGAR_HEARTBEAT_TIMEOUT": "5.0",
    "KASHGAR_MAX_ATTEMPTS": "2",
    "KASHGAR_REDIS_TIMEOUT": "2.0",
    "KASHGAR_LOG_LEVEL": "WARNING",
    # the load generator is one address: its many connections are the load, not one client's abuse
    "KASHGAR_CLIENT_CONNECTIONS": "0",
}


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def is_loopback(url: str) -> bool:
    return (urlparse(url).hostname or "") in LOOPBACK


@dataclass
class Stack:
    """A running stack: `url` of gunicorn, the Redis server (None when embedded), the RQ workers."""

    web: Gunicorn
    redis: RedisServer | None
    workers: list[Worker] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    log_dir: str = ""

    @property
    def url(self) -> str:
        return self.web.url

    def add_worker(self) -> Worker:
        assert self.redis is not None
        w = Worker(self.redis.url, env=self.env, log_dir=self.log_dir).start()
        self.workers.append(w)
        return w

    def web_pids(self) -> list[int]:
        """The gunicorn master and its worker processes."""
        if self.web.proc is None or not self.web.proc.alive():
            return []
        return [self.web.proc.pid, *descendants(self.web.proc.pid)]

    def worker_pids(self) -> list[int]:
        """The RQ worker processes (not their short-lived work horses)."""
        return [w.proc.pid for w in self.workers if w.proc is not None and w.proc.alive()]


@contextlib.contextmanager
def start_stack(
    *,
    web_workers: int | None = None,
    rq_workers: int = 1,
    redis: bool = True,
    env: Mapping[str, str] | None = None,
    log_dir: str | Path | None = None,
) -> Iterator[Stack]:
    """redis-server (unless `redis=False`: the embedded queue) + `rq_workers` RQ workers +
    gunicorn with `web_workers` processes (default: one per core), all on free loopback ports."""
    logs = str(log_dir or DEFAULT_REPORTS / "logs")
    Path(logs).mkdir(parents=True, exist_ok=True)
    full_env = dict(STACK_ENV)
    full_env.update(env or {})
    server = RedisServer(log_dir=logs).start() if redis else None
    workers: list[Worker] = []
    web: Gunicorn | None = None
    try:
        if server is not None:
            full_env["KASHGAR_REDIS_URL"] = server.url
            workers = [Worker(server.url, env=full_env, log_dir=logs).start() for _ in range(rq_workers)]
        web = Gunicorn(env=full_env, workers=web_workers or cores(), log_dir=logs).start()
        yield Stack(web=web, redis=server, workers=workers, env=full_env, log_dir=logs)
    finally:
        if web is not None:
            web.stop()
        for w in workers:
            w.stop()
        if server is not None:
            server.stop()


@dataclass
class LocustResult:
    returncode: int
    rows: dict[str, dict[str, str]]
    csv_prefix: Path
    html: Path
    output: str

    @property
    def total(self) -> dict[str, str]:
        return self.rows.get("Aggregated", {})

    def count(self, name: str = "Aggregated") -> int:
        return int(self.rows.get(name, {}).get("Request Count", 0) or 0)

    def failures(self, name: str = "Aggregated") -> int:
        return int(self.rows.get(name, {}).get("Failure Count", 0) or 0)

    def figure(self, column: str, name: str = "Aggregated") -> float:
        value = self.rows.get(name, {}).get(column, "") or "0"
        return float(value) if value != "N/A" else 0.0


def read_stats(csv_prefix: Path) -> dict[str, dict[str, str]]:
    path = Path(f"{csv_prefix}_stats.csv")
    if not path.exists():
        return {}
    with path.open() as f:
        return {row["Name"]: row for row in csv.DictReader(f)}


def run_locust(
    host: str,
    *,
    users: int,
    spawn_rate: float,
    run_time: str,
    name: str,
    reports: str | Path = DEFAULT_REPORTS,
    tags: list[str] | None = None,
    env: Mapping[str, str] | None = None,
    shape: bool = False,
    timeout: float | None = None,
) -> LocustResult:
    """`locust --headless` against `host`, bounded by `run_time` (and `timeout` seconds of wall
    time); CSV as `<reports>/<name>_*.csv`, HTML as `<reports>/<name>.html`."""
    out = Path(reports)
    out.mkdir(parents=True, exist_ok=True)
    prefix = out / name
    html = out / f"{name}.html"
    argv = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(LOCUSTFILE),
        "--headless",
        "--host",
        host,
        "--csv",
        str(prefix),
        "--html",
        str(html),
        "--only-summary",
        "--stop-timeout",  # long enough for the async jobs in flight to end and be counted
        str(int(async_timeout_s()) + 10),
        "--loglevel",
        "WARNING",
    ]
    if not shape:
        argv += ["-u", str(users), "-r", str(spawn_rate), "-t", run_time]
    if tags:
        argv += ["--tags", *tags]
    full_env = dict(os.environ)
    full_env.update(env or {})
    if shape:
        full_env["KASHGAR_LOAD_SHAPE"] = "step"
    else:
        full_env.pop("KASHGAR_LOAD_SHAPE", None)
    limit = timeout or (_seconds(run_time) + 90 if not shape else 3600)
    proc = subprocess.run(argv, cwd=str(REPO), env=full_env, capture_output=True, text=True, timeout=limit, check=False)
    return LocustResult(proc.returncode, read_stats(prefix), prefix, html, proc.stdout + proc.stderr)


def _seconds(run_time: str) -> float:
    """`90`, `90s`, `2m`, `1h30m` -> seconds."""
    total, num = 0.0, ""
    for ch in run_time:
        if ch.isdigit() or ch == ".":
            num += ch
        else:
            total += float(num or 0) * {"h": 3600, "m": 60, "s": 1}[ch]
            num = ""
    return total + float(num or 0)


def rss_kib(pid: int) -> int:
    """Resident set size of a process in KiB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def sample_rss(stack: Stack) -> dict[str, Any]:
    """One sample: time, RSS per web and worker process (KiB)."""
    return {
        "t": time.time(),
        "web": {str(p): rss_kib(p) for p in stack.web_pids()},
        "workers": {str(p): rss_kib(p) for p in stack.worker_pids()},
    }
