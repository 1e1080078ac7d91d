"""Job functions RQ workers import (`service.jobs.tasks.run_part`)."""

from __future__ import annotations

from typing import Any

from rq import get_current_job

from ..config import Settings
from .model import part_cost
from .runner import execute_part
from .store import RedisStore


def run_part(job_id: str, index: int, attempt: int, handbacks: int = 0, client: str = "") -> str:
    """Run one part of a search job; everything it produces goes to the job record in Redis. The
    part left the RQ queue: its client's next part may take its place there. A warm shutdown of
    the worker (SIGTERM) hands the part back to the queue with its attempt."""
    from .queue import RQQueue, redis_connection

    settings = Settings.from_env()
    current = get_current_job()
    stopping: Any = None
    if current is None:  # called directly, outside a worker
        if not settings.redis_url:
            raise RuntimeError("run_part needs an RQ worker or KASHGAR_REDIS_URL")
        connection = redis_connection(settings.redis_url, settings.redis_timeout)
        worker = None
    else:
        connection = current.connection
        worker = f"rq:{current.worker_name or ''}"
        if current.worker_name:
            # RQ notes a warm shutdown in the worker's hash (the work horse is not signalled)
            worker_key = f"rq:worker:{current.worker_name}"

            def stopping() -> bool:
                return bool(connection.hexists(worker_key, "shutdown_requested_date"))
    queue = RQQueue(connection, settings)
    queue.taken(client, job_id, index, attempt, handbacks)
    store = RedisStore(connection, settings.key_prefix, settings.result_ttl, settings.job_ttl)
    timeout = int(current.timeout) if current is not None and current.timeout is not None else None

    def requeue(i: int, a: int, h: int) -> None:
        rec = store.load(job_id)
        queue.enqueue(job_id, i, a, timeout, client, h, cost=None if rec is None else part_cost(rec))

    return execute_part(store, settings, job_id, index, attempt, worker=worker, stopping=stopping, requeue=requeue)
