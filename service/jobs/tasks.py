"""Job functions RQ workers import (`service.jobs.tasks.run_part`)."""

from __future__ import annotations

from rq import get_current_job

from ..config import Settings
from .runner import execute_part
from .store import RedisStore


def run_part(job_id: str, index: int, attempt: int) -> str:
    """Run one part of a search job; everything it produces goes to the job record in Redis."""
    settings = Settings.from_env()
    current = get_current_job()
    if current is None:  # called directly, outside a worker
        from .queue import redis_connection

        if not settings.redis_url:
            raise RuntimeError("run_part needs an RQ worker or KASHGAR_REDIS_URL")
        connection = redis_connection(settings.redis_url, settings.redis_timeout)
        worker = None
    else:
        connection = current.connection
        worker = f"rq:{current.worker_name or ''}"
    store = RedisStore(connection, settings.key_prefix, settings.result_ttl, settings.job_ttl)
    return execute_part(store, settings, job_id, index, attempt, worker=worker)
