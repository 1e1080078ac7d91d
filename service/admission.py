"""Admission control: a bound on the search work in flight, per client and in total, counted in
search-seconds (core-seconds) in the job store the web processes share (SQLite or Redis).

A search costs `time_ms / 1000` for each part of a time budget, or its iterations at
`admission_iterations_per_s`. A synchronous search counts from its admission, while it waits for
its process and while it runs, so a client's waiting requests count against it as its running
ones do; an async job counts from its acceptance until it finishes, fails, is cancelled or expires
(`JobStore.update` releases it). Past a limit: 429 with Retry-After, its `error` naming the limit
(`sync_client_limit`, `sync_total_limit`, `async_client_limit`, `async_total_limit`).

A synchronous search costing more than SHARED_MAX_S has its process to itself: one such search runs
at a time in a process (a search holds the GIL, letting go of it every few ms: two would each get
half a core), the others wait for it. A cheaper one, and every request that does not search (health,
metrics, a job's status), runs beside it at once.

A synchronous search costing at most SHARED_MAX_S (the cheap levels: about a millisecond) is not
counted in the store: counting it (a write to the shared store as it starts and another as it
ends) took longer than the search itself. What such searches can hold is bounded without it: each
costs at most SHARED_MAX_S, and a client has at most `KASHGAR_CLIENT_CONNECTIONS` connections per
address in a process and its request rate (`KASHGAR_RATE_LIMIT`)."""

from __future__ import annotations

import logging
import math
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from .clients import Client
from .config import Settings
from .errors import APIError
from .jobs import JobManager, StoreUnavailable
from .search import SearchSpec, plan

log = logging.getLogger("kashgar.service")

#: Search-seconds above which a synchronous search waits for its process to itself.
SHARED_MAX_S = 0.05
_exclusive = threading.Lock()  # held by this process's one running search over SHARED_MAX_S


def cost_seconds(spec: SearchSpec, settings: Settings) -> float:
    """The search-seconds of `spec`: every part's time budget, or all its iterations at the
    configured rate (a budget of both counts the smaller)."""
    by_time = None if spec.time_ms is None else spec.time_ms / 1000.0 * len(plan(spec))
    by_iterations = None if spec.iterations is None else spec.iterations / settings.admission_iterations_per_s
    known = [c for c in (by_time, by_iterations) if c is not None]
    return min(known) if known else 0.0


def _denied(kind: str, which: str, held: float, cost: float, limit: float, parallelism: int) -> APIError:
    """429 naming the limit; Retry-After: the excess at `parallelism` cores, 1 s at least."""
    name = f"{kind}_{which}"
    whose = "this client's" if which == "client" else "the server's"
    if cost > limit:
        message = (f"this search is {cost:.1f} search-seconds, over {whose} {kind} limit of {limit:g} "
                   f"({name}): ask for a smaller budget or fewer parts")
    else:
        message = (f"{whose} {kind} searches in flight ({held:.1f} search-seconds) and this one ({cost:.1f}) "
                   f"would pass the limit of {limit:g} ({name}); retry when some have finished")
    retry = max(1, math.ceil((held + cost - limit) / max(1, parallelism)))
    return APIError(429, f"{name}_limit", message, "", headers={"Retry-After": str(min(retry, 3600))})


def admit_async(manager: JobManager, client: Client, job_id: str, cost: float) -> None:
    """Count an async job's cost for `client` under its id, or raise 429 (StoreUnavailable: 503)."""
    settings = manager.settings
    out = manager.store.admit("async", client.id, job_id, cost, client.async_seconds, settings.async_total_seconds,
                              settings.job_ttl)
    if out is not None:
        which, held = out
        limit = client.async_seconds if which == "client" else settings.async_total_seconds
        raise _denied("async", which, held, cost, limit, manager.queue.workers() or settings.embedded_threads)


@contextmanager
def sync_search(manager: JobManager, client: Client, cost: float, web_workers: int = 1) -> Iterator[None]:
    """Count a synchronous search while it runs, or raise 429. Its store unreachable, the search
    runs uncounted (synchronous searches answer while Redis is down)."""
    settings = manager.settings
    if cost <= SHARED_MAX_S:  # not counted (above); it runs beside the others
        yield
        return
    token = "sync-" + uuid.uuid4().hex
    ttl = settings.sync_timeout_ms / 1000.0 + 60.0
    try:
        out = manager.store.admit("sync", client.id, token, cost, client.sync_seconds, settings.sync_total_seconds,
                                  ttl)
    except StoreUnavailable as exc:
        log.warning("synchronous search not counted: %s", exc)
        with _process(cost, settings):
            yield
        return
    if out is not None:
        which, held = out
        limit = client.sync_seconds if which == "client" else settings.sync_total_seconds
        raise _denied("sync", which, held, cost, limit, web_workers)
    try:
        with _process(cost, settings):
            yield
    finally:
        try:
            manager.store.release(token)
        except StoreUnavailable as exc:  # it expires after ttl
            log.warning("synchronous search not released: %s", exc)


@contextmanager
def _process(cost: float, settings: Settings) -> Iterator[None]:
    """The process to itself for a search over SHARED_MAX_S (waiting at most the synchronous
    timeout, else 503 with Retry-After); nothing for a cheaper one."""
    if cost <= SHARED_MAX_S:
        yield
        return
    wait_s = settings.sync_timeout_ms / 1000.0
    if not _exclusive.acquire(timeout=wait_s):
        raise APIError(503, "busy", f"this process's searches did not leave it free within {wait_s:g} s; "
                       "retry, or ask for a job (mode async)", "",
                       headers={"Retry-After": str(max(1, math.ceil(cost)))})
    try:
        yield
    finally:
        _exclusive.release()
