"""What the job tests share: the environment, a search spec, Redis bursts, one-part jobs."""

from __future__ import annotations

from typing import Any

from rq import SimpleWorker

from service import search
from service.config import Settings
from service.jobs import JobManager, build_manager
from service.jobs.model import JobStatus, job_status
from service.jobs.queue import RQQueue

ENV = {
    "KASHGAR_KEY_PREFIX": "kgtest",
    "KASHGAR_QUEUE_NAME": "kgtest",
    "KASHGAR_HEARTBEAT_INTERVAL": "0.05",
    "KASHGAR_HEARTBEAT_TIMEOUT": "1.0",
    "KASHGAR_LOG_LEVEL": "WARNING",
}
VOLATILE = {"elapsed_ms", "request_id", "mode"}



def spec_of(state: dict[str, Any], iterations: int = 120, seed: int = 9, parallel: int = 2) -> search.SearchSpec:
    return search.SearchSpec(state=state, level=None, iterations=iterations, time_ms=None, seed=seed, parallel=parallel)


def stable(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in VOLATILE}


def burst(settings: Settings, manager: JobManager) -> None:
    assert isinstance(manager.queue, RQQueue)
    SimpleWorker([settings.queue_name], connection=manager.queue.connection).work(burst=True, logging_level="WARNING")


def one_part_job(settings: Settings, state: dict[str, Any]) -> tuple[JobManager, RQQueue, dict[str, Any], str]:
    """A one-part job submitted on Redis: its manager, queue, record and the RQ id of attempt 1."""
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state, parallel=1), None)
    assert isinstance(manager.queue, RQQueue)
    return manager, manager.queue, rec, RQQueue.rq_job_id(rec["id"], 0, 1)


def run_to_the_end(settings: Settings, manager: JobManager, job_id: str) -> None:
    """A worker runs what is queued; the job must then be finished."""
    burst(settings, manager)
    done = manager.get(job_id)
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
