"""Where job records live: Redis (shared by every web process and RQ worker) or a SQLite file
(the embedded default, shared by the gunicorn workers of one machine). Each store owns its keys.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, TypeVar

from .model import TERMINAL, UNKNOWN_PART_COST, JobStatus, Record, job_status

T = TypeVar("T")


class StoreUnavailable(RuntimeError):
    """The backing store cannot be reached (Redis down, database locked for too long)."""


class JobStore(ABC):
    """An atomic read-modify-write store of job records with expiry and outcome counters."""

    def __init__(self, result_ttl: int, job_ttl: int) -> None:
        self.result_ttl = result_ttl
        self.job_ttl = job_ttl

    @abstractmethod
    def now(self) -> float:
        """The store's clock (shared by every process that uses the store)."""

    @abstractmethod
    def create(self, rec: Record) -> None: ...

    @abstractmethod
    def load(self, job_id: str) -> Record | None: ...

    @abstractmethod
    def update(self, job_id: str, fn: Callable[[Record], T]) -> tuple[T, Record] | None:
        """Apply `fn` to the record atomically and store it; None if there is no such job.
        A job becoming terminal counts its outcome, leaves the active set and expires after
        `result_ttl`."""

    @abstractmethod
    def active_ids(self) -> list[str]:
        """The jobs not yet finished, failed or cancelled whose records still exist: a record that
        expired unfinished (no worker for `job_ttl`) or was evicted is no longer active."""

    @abstractmethod
    def incr_stat(self, name: str, n: int = 1) -> None: ...

    @abstractmethod
    def admit(self, kind: str, client: str, token: str, cost: float, client_limit: float, total_limit: float,
              ttl: float) -> tuple[str, float] | None:
        """Count `cost` search-seconds of `kind` (sync, async) in flight for `client` under `token`
        until `release(token)` or `ttl` seconds, unless that puts the client over `client_limit`
        or everyone over `total_limit` (0: none): then nothing is counted and the answer is the
        limit (`client` or `total`) with what was in flight under it. Atomic across processes."""

    @abstractmethod
    def release(self, token: str) -> None:
        """Stop counting `token` (nothing when it is not counted)."""

    @abstractmethod
    def claim_key(self, name: str, value: str, ttl: float) -> str | None:
        """Set `name` to `value` for `ttl` seconds unless it holds a value already: None when this
        call set it, else the value it holds (left as it was). Atomic across processes."""

    @abstractmethod
    def set_key(self, name: str, value: str, ttl: float) -> None: ...

    @abstractmethod
    def forget_key(self, name: str) -> None: ...

    @abstractmethod
    def stats(self) -> dict[str, int]: ...

    @abstractmethod
    def ping(self) -> None: ...

    @staticmethod
    def _transition(before: JobStatus, rec: Record) -> str | None:
        after = job_status(rec)
        if after.terminal and not before.terminal:
            rec["finished_at"] = rec.get("finished_at") or time.time()
            return after.value
        return None


# --------------------------------------------------------------------------------------- Redis


# Admission in Redis: `cost` maps a token to "kind|client|cost", `exp` orders tokens by expiry,
# `sum` holds the search-seconds in flight by "kind|client" and "kind|*".
_RELEASE_LUA = """
local function release(tok)
  local v = redis.call('HGET', KEYS[1], tok)
  if not v then return 0 end
  local kind, client, cost = string.match(v, '^([^|]*)|(.*)|([^|]*)$')
  cost = tonumber(cost)
  for _, f in ipairs({kind .. '|' .. client, kind .. '|*'}) do
    local left = tonumber(redis.call('HINCRBYFLOAT', KEYS[3], f, -cost))
    if left < 1e-6 then redis.call('HDEL', KEYS[3], f) end
  end
  redis.call('HDEL', KEYS[1], tok)
  redis.call('ZREM', KEYS[2], tok)
  return 1
end
"""
_ADMIT_LUA = _RELEASE_LUA + """
local kind, client, tok = ARGV[1], ARGV[2], ARGV[3]
local cost, climit, tlimit = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local now, ttl = tonumber(ARGV[7]), tonumber(ARGV[8])
for _, old in ipairs(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)) do release(old) end
local mine = tonumber(redis.call('HGET', KEYS[3], kind .. '|' .. client) or '0')
local all = tonumber(redis.call('HGET', KEYS[3], kind .. '|*') or '0')
if climit > 0 and mine + cost > climit then return {'client', tostring(mine)} end
if tlimit > 0 and all + cost > tlimit then return {'total', tostring(all)} end
release(tok)
redis.call('HSET', KEYS[1], tok, kind .. '|' .. client .. '|' .. ARGV[4])
redis.call('ZADD', KEYS[2], now + ttl, tok)
redis.call('HINCRBYFLOAT', KEYS[3], kind .. '|' .. client, cost)
redis.call('HINCRBYFLOAT', KEYS[3], kind .. '|*', cost)
return {'', '0'}
"""


class RedisStore(JobStore):
    """Keys: `<prefix>:job:<id>` (the record as JSON), `<prefix>:jobs:active` (set of unfinished
    job ids), `<prefix>:stats` (hash of outcome counters), `<prefix>:adm:*` (admission)."""

    def __init__(self, connection: Any, prefix: str = "kashgar", result_ttl: int = 3600, job_ttl: int = 86400) -> None:
        super().__init__(result_ttl, job_ttl)
        self.connection = connection
        self.prefix = prefix
        self._admit = connection.register_script(_ADMIT_LUA)
        self._release = connection.register_script(_RELEASE_LUA + "return release(ARGV[1])")

    @property
    def admission_keys(self) -> list[str]:
        return [f"{self.prefix}:adm:cost", f"{self.prefix}:adm:exp", f"{self.prefix}:adm:sum"]

    def job_key(self, job_id: str) -> str:
        return f"{self.prefix}:job:{job_id}"

    @property
    def active_key(self) -> str:
        return f"{self.prefix}:jobs:active"

    @property
    def stats_key(self) -> str:
        return f"{self.prefix}:stats"

    def _call(self, fn: Callable[[], T]) -> T:
        import redis

        try:
            return fn()
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError) as exc:
            raise StoreUnavailable(f"Redis unreachable: {exc}") from exc

    def now(self) -> float:
        sec, usec = self._call(lambda: self.connection.time())
        return float(sec) + float(usec) / 1e6

    def create(self, rec: Record) -> None:
        def go() -> None:
            pipe = self.connection.pipeline()
            pipe.set(self.job_key(rec["id"]), json.dumps(rec), ex=self.job_ttl)
            pipe.sadd(self.active_key, rec["id"])
            pipe.execute()

        self._call(go)

    def load(self, job_id: str) -> Record | None:
        raw = self._call(lambda: self.connection.get(self.job_key(job_id)))
        return None if raw is None else json.loads(raw)

    def update(self, job_id: str, fn: Callable[[Record], T]) -> tuple[T, Record] | None:
        import redis

        key = self.job_key(job_id)

        def go() -> tuple[T, Record] | None:
            while True:
                with self.connection.pipeline() as pipe:
                    try:
                        pipe.watch(key)
                        raw = pipe.get(key)
                        if raw is None:
                            pipe.unwatch()
                            if self.connection.srem(self.active_key, job_id):
                                pass
                            return None
                        rec = json.loads(raw)
                        before = job_status(rec)
                        ret = fn(rec)
                        outcome = self._transition(before, rec)
                        pipe.multi()
                        if outcome:
                            pipe.set(key, json.dumps(rec), ex=self.result_ttl)
                            pipe.srem(self.active_key, job_id)
                            pipe.hincrby(self.stats_key, f"jobs_{outcome}", 1)
                            self._release(keys=self.admission_keys, args=[job_id], client=pipe)
                        else:
                            pipe.set(key, json.dumps(rec), keepttl=True)
                        pipe.execute()
                        return ret, rec
                    except redis.WatchError:
                        continue

        return self._call(go)

    def active_ids(self) -> list[str]:
        def go() -> list[str]:
            ids = sorted(m.decode() if isinstance(m, bytes) else str(m)
                         for m in self.connection.smembers(self.active_key))
            with self.connection.pipeline(transaction=False) as pipe:
                for job_id in ids:
                    pipe.exists(self.job_key(job_id))
                present = pipe.execute()
            gone = [job_id for job_id, n in zip(ids, present, strict=True) if not n]
            if gone:  # the set has no TTL: prune ids whose record expired or was evicted
                self.connection.srem(self.active_key, *gone)
            return [job_id for job_id, n in zip(ids, present, strict=True) if n]

        return self._call(go)

    def incr_stat(self, name: str, n: int = 1) -> None:
        self._call(lambda: self.connection.hincrby(self.stats_key, name, n))

    def admit(self, kind: str, client: str, token: str, cost: float, client_limit: float, total_limit: float,
              ttl: float) -> tuple[str, float] | None:
        args = [kind, client, token, repr(cost), repr(client_limit), repr(total_limit), repr(self.now()), repr(ttl)]
        which, held = self._call(lambda: self._admit(keys=self.admission_keys, args=args))
        which = which.decode() if isinstance(which, bytes) else str(which)
        return (which, float(held)) if which else None

    def release(self, token: str) -> None:
        self._call(lambda: self._release(keys=self.admission_keys, args=[token]))

    def _key(self, name: str) -> str:
        return f"{self.prefix}:key:{name}"

    def claim_key(self, name: str, value: str, ttl: float) -> str | None:
        key = self._key(name)
        if self._call(lambda: self.connection.set(key, value, nx=True, ex=max(1, int(ttl)))):
            return None
        held = self._call(lambda: self.connection.get(key))
        if held is None:  # expired between the two calls: try once more
            return self.claim_key(name, value, ttl)
        return held.decode() if isinstance(held, bytes) else str(held)

    def set_key(self, name: str, value: str, ttl: float) -> None:
        self._call(lambda: self.connection.set(self._key(name), value, ex=max(1, int(ttl))))

    def forget_key(self, name: str) -> None:
        self._call(lambda: self.connection.delete(self._key(name)))

    def stats(self) -> dict[str, int]:
        raw = self._call(lambda: self.connection.hgetall(self.stats_key))
        return {(k.decode() if isinstance(k, bytes) else str(k)): int(v) for k, v in raw.items()}

    def ping(self) -> None:
        self._call(lambda: self.connection.ping())


# -------------------------------------------------------------------------------------- SQLite


def create_private(path: str) -> None:
    """Create the file at `path` readable and writable by its owner only (0600), unless it exists
    (SQLite gives its -wal and -shm files the mode of the database file)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))


class SqliteStore(JobStore):
    """Tables `jobs(id, doc, expires_at, active)` and `stats(name, value)` in one SQLite file
    (WAL mode), safe across the threads and processes of one machine. A file it creates is its
    owner's only (`create_private`)."""

    def __init__(self, path: str, result_ttl: int = 3600, job_ttl: int = 86400) -> None:
        super().__init__(result_ttl, job_ttl)
        self.path = path
        create_private(path)
        self._local = threading.local()
        self._last_purge = 0.0
        with self._tx() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, doc TEXT NOT NULL, "
                "expires_at REAL NOT NULL, active INTEGER NOT NULL)"
            )
            db.execute("CREATE TABLE IF NOT EXISTS stats (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
            db.execute(
                "CREATE TABLE IF NOT EXISTS inflight (token TEXT PRIMARY KEY, kind TEXT NOT NULL, "
                "client TEXT NOT NULL, cost REAL NOT NULL, expires_at REAL NOT NULL)"
            )
            db.execute("CREATE INDEX IF NOT EXISTS inflight_client ON inflight (kind, client)")
            # the embedded queue: parts waiting for a thread of any process, and when each client was last served
            db.execute(
                "CREATE TABLE IF NOT EXISTS queue (seq INTEGER PRIMARY KEY AUTOINCREMENT, job_id TEXT NOT NULL, "
                "idx INTEGER NOT NULL, attempt INTEGER NOT NULL, handbacks INTEGER NOT NULL, client TEXT NOT NULL)"
            )
            columns = [row[1] for row in db.execute("PRAGMA table_info(queue)")]
            if "cost" not in columns:  # a file made before it
                db.execute(f"ALTER TABLE queue ADD COLUMN cost REAL NOT NULL DEFAULT {UNKNOWN_PART_COST}")
            if "front" not in columns:  # 1: a part that ran before (retried, handed back), taken first
                db.execute("ALTER TABLE queue ADD COLUMN front INTEGER NOT NULL DEFAULT 0")
            db.execute("CREATE INDEX IF NOT EXISTS queue_job ON queue (job_id)")
            db.execute("CREATE INDEX IF NOT EXISTS queue_client ON queue (client, seq)")
            db.execute("CREATE TABLE IF NOT EXISTS turns (client TEXT PRIMARY KEY, turn INTEGER NOT NULL)")
            db.execute("CREATE TABLE IF NOT EXISTS keys (name TEXT PRIMARY KEY, value TEXT NOT NULL, "
                       "expires_at REAL NOT NULL)")

    def _db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None or getattr(self._local, "pid", None) != os.getpid():
            db = sqlite3.connect(self.path, timeout=30.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
            self._local.pid = os.getpid()
        return db

    class _Tx:
        def __init__(self, store: SqliteStore) -> None:
            self.db = store._db()

        def __enter__(self) -> sqlite3.Connection:
            try:
                self.db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreUnavailable(f"job database busy: {exc}") from exc
            return self.db

        def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")

    def _tx(self) -> SqliteStore._Tx:
        return SqliteStore._Tx(self)

    def now(self) -> float:
        return time.time()

    def _purge(self, db: sqlite3.Connection, now: float) -> None:
        if now - self._last_purge > 60.0:
            db.execute("DELETE FROM jobs WHERE expires_at < ?", (now,))
            db.execute("DELETE FROM keys WHERE expires_at < ?", (now,))
            self._last_purge = now

    def create(self, rec: Record) -> None:
        now = self.now()
        with self._tx() as db:
            self._purge(db, now)
            db.execute(
                "INSERT INTO jobs (id, doc, expires_at, active) VALUES (?, ?, ?, 1)",
                (rec["id"], json.dumps(rec), now + self.job_ttl),
            )

    def load(self, job_id: str) -> Record | None:
        row = (
            self._db().execute("SELECT doc FROM jobs WHERE id = ? AND expires_at >= ?", (job_id, self.now())).fetchone()
        )
        return None if row is None else json.loads(row[0])

    def update(self, job_id: str, fn: Callable[[Record], T]) -> tuple[T, Record] | None:
        with self._tx() as db:
            return self._update(db, job_id, fn)

    def claim_key(self, name: str, value: str, ttl: float) -> str | None:
        now = self.now()
        with self._tx() as db:
            db.execute("DELETE FROM keys WHERE name = ? AND expires_at < ?", (name, now))
            row = db.execute("SELECT value FROM keys WHERE name = ?", (name,)).fetchone()
            if row is not None:
                return str(row[0])
            db.execute("INSERT INTO keys (name, value, expires_at) VALUES (?, ?, ?)", (name, value, now + ttl))
            return None

    def set_key(self, name: str, value: str, ttl: float) -> None:
        with self._tx() as db:
            db.execute("INSERT INTO keys (name, value, expires_at) VALUES (?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                       "value = excluded.value, expires_at = excluded.expires_at", (name, value, self.now() + ttl))

    def forget_key(self, name: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM keys WHERE name = ?", (name,))

    def _update(self, db: sqlite3.Connection, job_id: str, fn: Callable[[Record], T]) -> tuple[T, Record] | None:
        now = self.now()
        row = db.execute("SELECT doc FROM jobs WHERE id = ? AND expires_at >= ?", (job_id, now)).fetchone()
        if row is None:
            return None
        rec = json.loads(row[0])
        before = job_status(rec)
        ret = fn(rec)
        outcome = self._transition(before, rec)
        if outcome:
            db.execute(
                "UPDATE jobs SET doc = ?, expires_at = ?, active = 0 WHERE id = ?",
                (json.dumps(rec), now + self.result_ttl, job_id),
            )
            self._incr(db, f"jobs_{outcome}", 1)
            db.execute("DELETE FROM inflight WHERE token = ?", (job_id,))
        else:
            db.execute("UPDATE jobs SET doc = ? WHERE id = ?", (json.dumps(rec), job_id))
        return ret, rec

    # ------------------------------------------------------------------ the embedded queue

    def queue_put(self, job_id: str, index: int, attempt: int, handbacks: int, client: str,
                  cost: float | None = None, front: bool = False) -> None:
        """Queue a part of `cost` search-seconds (None: as long as any); `front`: a part that ran
        before (retried, handed back), taken before every part that is not."""
        with self._tx() as db:
            db.execute("INSERT INTO queue (job_id, idx, attempt, handbacks, client, cost, front) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)",
                       (job_id, index, attempt, handbacks, client, UNKNOWN_PART_COST if cost is None else cost,
                        int(front)))

    def queue_take(self, claim: Callable[[Record, int, int], T],
                   max_cost: float | None = None) -> tuple[str, int, int, T, Record] | None:
        """Take the next part (of at most `max_cost` search-seconds; None: any): a part queued
        `front` first, then the clients in turn (the one served longest ago first, a new one before
        all; each client's parts in order), and
        `claim(record, index, attempt)` it in the same transaction: a part is either waiting here
        or claimed, never neither."""
        limit = UNKNOWN_PART_COST * 2 if max_cost is None else max_cost
        if self._db().execute("SELECT 1 FROM queue WHERE cost <= ? LIMIT 1", (limit,)).fetchone() is None:
            return None  # nothing waits: no write lock taken
        with self._tx() as db:
            row = db.execute(
                "SELECT q.seq, q.job_id, q.idx, q.attempt, q.client FROM queue q LEFT JOIN turns t "
                "ON t.client = q.client WHERE q.cost <= ? ORDER BY q.front DESC, COALESCE(t.turn, 0), q.seq LIMIT 1",
                (limit,)
            ).fetchone()
            if row is None:
                return None
            seq, job_id, index, attempt, client = row
            db.execute("DELETE FROM queue WHERE seq = ?", (seq,))
            turn = db.execute("SELECT COALESCE(MAX(turn), 0) + 1 FROM turns").fetchone()[0]
            db.execute("INSERT INTO turns (client, turn) VALUES (?, ?) ON CONFLICT(client) DO UPDATE SET turn = "
                       "excluded.turn", (client, turn))
            if turn % 1000 == 0:  # clients long gone are forgotten (one back comes first, as a new one)
                db.execute("DELETE FROM turns WHERE turn < ? AND client NOT IN (SELECT client FROM queue)",
                           (turn - 1000,))
            out = self._update(db, job_id, lambda rec: claim(rec, index, attempt))
            if out is None:
                return None
            return job_id, index, attempt, out[0], out[1]

    def queue_remove(self, job_id: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM queue WHERE job_id = ?", (job_id,))

    def queue_has(self, job_id: str, index: int, attempt: int, handbacks: int) -> bool:
        return self._db().execute(
            "SELECT 1 FROM queue WHERE job_id = ? AND idx = ? AND attempt = ? AND handbacks = ?",
            (job_id, index, attempt, handbacks),
        ).fetchone() is not None

    def queue_depth(self) -> int:
        return int(self._db().execute("SELECT COUNT(*) FROM queue").fetchone()[0])

    def active_ids(self) -> list[str]:
        rows = (
            self._db()
            .execute("SELECT id FROM jobs WHERE active = 1 AND expires_at >= ? ORDER BY id", (self.now(),))
            .fetchall()
        )
        return [r[0] for r in rows]

    @staticmethod
    def _incr(db: sqlite3.Connection, name: str, n: int) -> None:
        db.execute(
            "INSERT INTO stats (name, value) VALUES (?, ?) "
            "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
            (name, n),
        )

    def incr_stat(self, name: str, n: int = 1) -> None:
        with self._tx() as db:
            self._incr(db, name, n)

    def stats(self) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._db().execute("SELECT name, value FROM stats").fetchall()}

    def admit(self, kind: str, client: str, token: str, cost: float, client_limit: float, total_limit: float,
              ttl: float) -> tuple[str, float] | None:
        now = self.now()
        with self._tx() as db:
            db.execute("DELETE FROM inflight WHERE expires_at < ?", (now,))
            mine = db.execute("SELECT COALESCE(SUM(cost), 0) FROM inflight WHERE kind = ? AND client = ?",
                              (kind, client)).fetchone()[0]
            if client_limit > 0 and mine + cost > client_limit:
                return "client", float(mine)
            if total_limit > 0:
                everyone = db.execute("SELECT COALESCE(SUM(cost), 0) FROM inflight WHERE kind = ?",
                                      (kind,)).fetchone()[0]
                if everyone + cost > total_limit:
                    return "total", float(everyone)
            db.execute("INSERT OR REPLACE INTO inflight (token, kind, client, cost, expires_at) VALUES (?, ?, ?, ?, ?)",
                       (token, kind, client, cost, now + ttl))
        return None

    def release(self, token: str) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM inflight WHERE token = ?", (token,))

    def ping(self) -> None:
        self._db().execute("SELECT 1").fetchone()


def is_terminal(status: str) -> bool:
    return status in TERMINAL
