"""Job functions RQ workers import (`service.jobs.tasks.run_part`)."""

from __future__ import annotations

import logging
from typing import Any

from rq import get_current_job

from ..config import Settings
from .model import part_cost
from .runner import execute_part
from .store import RedisStore, StoreUnavailable

log = logging.getLogger("kashgar.jobs")


def run_part(job_id: str, index: int, attempt: int, handbacks: int = 0, client: str = "") -> str:
    """Run one part of a search job; everything it produces goes to the job record in Redis. The
    part left the RQ queue: its client's next part may take its place there. A warm shutdown of
    the worker (SIGTERM) hands the part back to the queue with its attempt, at its front.

    The part talks to Redis on a connection of its own that fails fast (`KASHGAR_REDIS_TIMEOUT`),
    not the worker's (no timeout: it blocks on BLPOP), so that a Redis gone away costs it at most
    a late heartbeat: the search goes on, and what it writes waits for Redis to come back."""
    from .queue import RQQueue, redis_connection

    settings = Settings.from_env()
    current = get_current_job()
    if current is None and not settings.redis_url:
        raise RuntimeError("run_part needs an RQ worker or KASHGAR_REDIS_URL")
    connection = (redis_connection(settings.redis_url, settings.redis_timeout) if settings.redis_url
                  else current.connection)  # type: ignore[union-attr]
    stopping: Any = None
    worker = None if current is None else f"rq:{current.worker_name or ''}"
    if current is not None and current.worker_name:
        # RQ notes a warm shutdown in the worker's hash (the work horse is not signalled)
        worker_key = f"rq:worker:{current.worker_name}"

        def stopping() -> bool:
            try:
                return bool(connection.hexists(worker_key, "shutdown_requested_date"))
            except Exception:  # noqa: BLE001 - Redis away: no shutdown seen
                return False
    queue = RQQueue(connection, settings)
    try:
        queue.taken(client, job_id, index, attempt, handbacks)
    except StoreUnavailable as exc:  # the reaper's repair feeds the client's next part
        log.warning("could not free the client's turn: %s", exc, extra={"job_id": job_id, "part": index})
    store = RedisStore(connection, settings.key_prefix, settings.result_ttl, settings.job_ttl)
    timeout = int(current.timeout) if current is not None and current.timeout is not None else None

    def requeue(i: int, a: int, h: int) -> None:
        rec = store.load(job_id)
        queue.enqueue(job_id, i, a, timeout, client, h, cost=None if rec is None else part_cost(rec), front=True)

    def reconnected() -> None:
        try:
            queue.note_reachable()
        except StoreUnavailable as exc:
            log.warning("could not note the reconnect: %s", exc, extra={"job_id": job_id, "part": index})

    return execute_part(store, settings, job_id, index, attempt, worker=worker, stopping=stopping, requeue=requeue,
                        on_reconnect=reconnected)
