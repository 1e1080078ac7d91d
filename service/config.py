"""Service configuration: defaults, overridden by `KASHGAR_*` environment variables, then by the
mapping given to `create_app(config=...)` (keys are the field names in upper case)."""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Settings:
    """Every tunable of the service. The environment variable of `foo_bar` is `KASHGAR_FOO_BAR`."""

    #: Redis URL; set means async searches go through Redis and RQ workers, unset means embedded.
    redis_url: str | None = None
    #: RQ queue name the web enqueues on and `kashgar worker` listens to.
    queue_name: str = "kashgar"
    #: Prefix of every Redis key the service owns (RQ keeps its own `rq:` keys).
    key_prefix: str = "kashgar"
    #: SQLite file of the embedded job store (shared by all gunicorn workers of one `kashgar serve`).
    #: Unset: a fresh file in a temporary directory, private to this app object.
    jobs_db: str | None = None
    #: Threads per process that run embedded jobs.
    embedded_threads: int = 1
    #: Level used when a request gives neither a level nor a budget.
    default_level: str | None = None
    #: Largest budget a synchronous search may have (auto mode goes async above these).
    sync_max_iterations: int = 20_000
    sync_max_ms: int = 2_000
    #: Hard wall-clock cap of a synchronous search (ms); it stops early and says so.
    sync_timeout_ms: int = 20_000
    #: Largest budget any search may have.
    max_iterations: int = 10_000_000
    max_ms: int = 600_000
    #: Iterations per root-parallel part (an iteration budget is split into ceil(budget / this) parts).
    part_iterations: int = 20_000
    #: Most parts one search is split into.
    max_parts: int = 16
    #: Parts of an async time-budget search (each searches for the whole time, in parallel).
    time_parts: int = 4
    #: Seconds a finished, failed or cancelled job (and its result) is kept.
    result_ttl: int = 3_600
    #: Seconds an unfinished job is kept at most.
    job_ttl: int = 86_400
    #: Seconds without a heartbeat after which a running part's worker counts as dead.
    heartbeat_timeout: float = 15.0
    #: Seconds between heartbeats / progress writes of a running part.
    heartbeat_interval: float = 1.0
    #: Attempts per part before a job is marked failed (1 = no retry).
    max_attempts: int = 2
    #: Largest request body in bytes (413 above).
    max_body_bytes: int = 1_048_576
    #: Seconds each read or write of a client's socket may take (gunicorn worker; 408 for a body).
    client_timeout_s: float = 10.0
    #: Connections one client address may have in a web process's threads at once (read or served;
    #: the next is answered 429 and closed); 0: no bound. Off behind trusted proxies (one address).
    client_connections: int = 8
    #: Log level and whether logs are JSON lines.
    log_level: str = "INFO"
    log_json: bool = True
    #: Seconds a Redis command may take before the service answers 503.
    redis_timeout: float = 2.0
    #: Fernet key(s) of the web table's tokens (comma-separated: the first seals, all open). Unset:
    #: made at start (by gunicorn's master for all its web processes; `service.table`).
    table_key: str | None = dataclasses.field(default=None, repr=False)
    #: Milliseconds the web table's page waits between two of the bots' moves.
    table_pause_ms: int = 700
    #: Web origins whose pages may call the API from a browser (comma-separated; empty: no CORS).
    cors_origins: str = ""
    #: Directory of the embedded job store when KASHGAR_JOBS_DB is unset (`kashgar serve`): jobs,
    #: finished and queued, outlive a restart of the server. Unset: `$XDG_DATA_HOME/kashgar`
    #: (`~/.local/share/kashgar`).
    data_dir: str | None = None
    #: Work in flight, in search-seconds (core-seconds: time_ms x parts, or iterations at
    #: `admission_iterations_per_s`), per client and in total, synchronous and async (0: no limit).
    #: Past one: 429 naming it, with Retry-After.
    sync_client_seconds: float = 8.0
    sync_total_seconds: float = 0.0
    async_client_seconds: float = 3_600.0
    async_total_seconds: float = 28_800.0
    #: Iterations a core searches in a second, to count an iteration budget in search-seconds.
    admission_iterations_per_s: float = 20_000.0
    #: Requests per client (Flask-Limiter notation, e.g. "50/second;2000/minute"); empty: no limit.
    #: Counted in Redis when KASHGAR_REDIS_URL is set, else per web process.
    rate_limit: str = ""
    #: API keys, comma-separated; set (or a keys file), every endpoint but /healthz, /readyz and
    #: /metrics needs `Authorization: Bearer <key>`.
    api_keys: str = ""
    #: A TOML or JSON file of keys with per-key limits (`service/clients.py`).
    api_keys_file: str = ""
    #: Proxies in front of the server whose X-Forwarded-For is trusted (0: the peer address is the client).
    trusted_proxies: int = 0

    def __post_init__(self) -> None:
        """Refuse values the service cannot run with, naming the variable (a heartbeat timeout of
        0 reaps every running part; 0 threads or attempts run nothing)."""
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if not math.isfinite(value) or value < MINIMUM.get(f.name, 1):
                raise ValueError(f"KASHGAR_{f.name.upper()}={value!r}: want a number >= {MINIMUM.get(f.name, 1)}")
        from .cors import parse_origins

        parse_origins(self.cors_origins)  # ValueError naming KASHGAR_CORS_ORIGINS
        if self.heartbeat_interval >= self.heartbeat_timeout:
            raise ValueError(f"KASHGAR_HEARTBEAT_INTERVAL={self.heartbeat_interval!r}: want less than "
                             f"KASHGAR_HEARTBEAT_TIMEOUT ({self.heartbeat_timeout!r}), or every running part is "
                             "taken for dead between two heartbeats")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None) -> Settings:
        """Defaults, then `KASHGAR_<NAME>` variables, then `overrides` (`NAME` or `name` keys)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            raw = env.get("KASHGAR_" + f.name.upper())
            if raw is not None and raw != "":
                values[f.name] = _convert(f.name, f.type, raw)
        for key, value in (overrides or {}).items():
            name = key.lower()
            if name in {f.name for f in fields(cls)}:
                values[name] = value
        return dataclasses.replace(cls(), **values)


#: Where `kashgar serve` (gunicorn) listens unless KASHGAR_BIND or --host/--port say otherwise.
DEFAULT_BIND = "127.0.0.1:8000"


def web_workers(environ: Mapping[str, str]) -> int | None:
    """KASHGAR_WEB_WORKERS, the gunicorn config's web processes (not a Settings field: the config
    reads it before any app exists): None when unset or blank (one per core); ValueError for a
    value that is not a whole number >= 1 (0 would start a gunicorn that listens and never answers)."""
    raw = environ.get("KASHGAR_WEB_WORKERS", "")
    if not raw.strip():
        return None
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"KASHGAR_WEB_WORKERS={raw!r}: want a whole number of web worker processes >= 1 "
                         "(unset: one per core)")
    return count


def health_bind(environ: Mapping[str, str]) -> tuple[str, int] | None:
    """KASHGAR_HEALTH_BIND, where gunicorn's master answers health probes (`service.health_listener`;
    not a Settings field: the gunicorn config reads it): None when unset or blank; ValueError unless
    it is HOST:PORT with a port from 1 to 65535 (an IPv4 address or a host name)."""
    raw = environ.get("KASHGAR_HEALTH_BIND", "")
    if not raw.strip():
        return None
    host, sep, port = raw.strip().rpartition(":")
    if not sep or not host or not port.isdigit() or not 1 <= int(port) <= 65535 or "[" in host:
        raise ValueError(f"KASHGAR_HEALTH_BIND={raw!r}: want HOST:PORT (say 0.0.0.0:8001), with an IPv4 "
                         "address or a host name and a port from 1 to 65535")
    return host, int(port)


# The least value of each number (1 unless named here): times in seconds may be fractions.
MINIMUM: dict[str, float] = {"heartbeat_timeout": 0.1, "heartbeat_interval": 0.01, "client_timeout_s": 0.1,
                             "redis_timeout": 0.01, "table_pause_ms": 0, "sync_client_seconds": 0,
                             "sync_total_seconds": 0, "async_client_seconds": 0, "async_total_seconds": 0,
                             "trusted_proxies": 0, "client_connections": 0}


def _convert(name: str, type_name: Any, raw: str) -> Any:
    t = str(type_name)
    try:
        if t.startswith("bool"):
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        if t.startswith("int"):
            return int(raw)
        if t.startswith("float"):
            return float(raw)
    except ValueError as exc:
        raise ValueError(f"KASHGAR_{name.upper()}={raw!r}: {exc}") from None
    return raw
