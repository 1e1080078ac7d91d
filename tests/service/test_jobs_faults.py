"""What faults leave of a job, on a real `redis-server` with RQ's SimpleWorker: a part that fails
for good leaves the others' work in the job's result (a review: every decision reviewed, the
missing ones named); a heartbeat gap that reaches past a Redis outage is no dead worker; a part
queued again goes first."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

import engine_ext
from engine_ext import record as records
from lab.serving import wait_until
from service import review
from service.config import Settings
from service.jobs import build_manager
from service.jobs.model import JobStatus, job_status
from service.jobs.queue import RQQueue
from tests.service.jobs_helpers import burst, spec_of

LEVEL = "advanced"  # a real search on every decision, cheap enough for tests


@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    """A 2-player game's first 24 decisions, chosen at random from the deal of seed 61."""
    game = engine_ext.new_game(players=2, seed=61)
    rng = random.Random(61)
    played = []
    for _ in range(24):
        text = str(rng.choice(game.legal()))
        game.apply(text)
        played.append(text)
    return records.record_from_moves(played, players=2, seed=61)


def _last_attempt_dies(manager: Any, job_id: str, index: int, progress: dict[str, Any] | None = None) -> None:
    """Part `index` taken by a worker that died long ago, on its last attempt, having reported
    `progress`."""
    stale = manager.store.now() - 60

    def died(r: dict[str, Any]) -> None:
        r["parts"][index].update(status="started", worker="rq:dead", started_at=stale, heartbeat_at=stale,
                                 attempt=manager.settings.max_attempts, progress=progress or {})

    manager.store.update(job_id, died)


def test_a_review_whose_part_fails_for_good_keeps_every_decision_reviewed(
        settings: Settings, record: dict[str, Any]) -> None:
    """The job fails (its part's error visible) with every decision the other parts reviewed,
    and those the failed part reported before its worker died, the rest named `missing`: a failed
    review kept nothing (`result: null`)."""
    manager = build_manager(settings)
    spec = review.plan(record, LEVEL, None, 5)
    assert spec.parts >= 3
    rec = manager.submit_parts(spec.to_dict(), spec.parts)
    failing = 1
    mine = spec.part_moves(failing)
    done_before = review.run_part(spec.to_dict(), failing, should_stop=_after(1))  # one decision, then dead
    assert [d["move"] for d in done_before["decisions"]] == mine[:1]
    _last_attempt_dies(manager, rec["id"], failing, review.progress_summary(done_before))
    burst(settings, manager)  # the other parts run (the dead part's queue entry is stale)
    job = manager.get(rec["id"])  # reaps: the part fails for good
    assert job is not None and job_status(job) == JobStatus.FAILED, job
    assert job["parts"][failing]["status"] == "failed" and "gave up" in job["parts"][failing]["error"]
    result = job["result"]
    assert result is not None and result["partial"] is True
    assert result["missing"] == mine[1:]
    assert result["reviewed"] == len(spec.moves) - len(mine) + 1 and result["total"] == len(spec.moves)
    whole = {d["move"]: d for d in review.run_all(spec)["decisions"]}
    assert [d["move"] for d in result["decisions"]] == [m for m in spec.moves if m not in mine[1:]]
    assert all(d == whole[d["move"]] for d in result["decisions"])  # the same reviews as one run's
    assert {s["seat"] for s in result["seats"]} == set(spec.seats)


def test_a_partial_review_is_what_the_document_describes(settings: Settings, record: dict[str, Any]) -> None:
    """A failed review's job, as GET /jobs/<id> shows it, validates against /openapi.json's JobView,
    and its result names no field the document's ReviewResult does not describe (`missing`,
    `partial`, ...): a client generated from the document reads the moves not reviewed."""
    import jsonschema

    from service.api.jobs import view
    from service.openapi import build_spec

    manager = build_manager(settings)
    spec = review.plan(record, LEVEL, None, 5)
    rec = manager.submit_parts(spec.to_dict(), spec.parts)
    mine = spec.part_moves(0)
    done_before = review.run_part(spec.to_dict(), 0, should_stop=_after(2))
    _last_attempt_dies(manager, rec["id"], 0, review.progress_summary(done_before))
    burst(settings, manager)
    job = manager.get(rec["id"])
    assert job is not None and job_status(job) == JobStatus.FAILED, job
    shown = view(job, manager.queue.backend)
    result = shown["result"]
    assert result["partial"] is True and result["missing"] == mine[2:] and result["reviewed"] == len(spec.moves) - 2

    schemas = build_spec()["components"]["schemas"]
    described = schemas["ReviewResult"]
    assert {"missing", "partial"} <= set(described["properties"]) and "missing" in described["required"]
    assert described["properties"]["missing"]["type"] == "array"
    assert set(result) <= set(described["properties"]), set(result) - set(described["properties"])
    for decision in result["decisions"]:
        assert set(decision) <= set(schemas["ReviewDecision"]["properties"]), decision
    closed = {**described, "additionalProperties": False}  # nothing but what the document says
    for schema, doc in ((closed, result), ({"$ref": "#/components/schemas/JobView"}, shown)):
        jsonschema.Draft202012Validator({**schema, "components": {"schemas": schemas}}).validate(doc)


def test_a_search_whose_part_fails_for_good_keeps_the_merge_of_the_others(
        settings: Settings, state: dict[str, Any]) -> None:
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state, iterations=120, parallel=2), None)
    _last_attempt_dies(manager, rec["id"], 1, {"iterations": 30, "best": "x"})
    burst(settings, manager)
    job = manager.get(rec["id"])
    assert job is not None and job_status(job) == JobStatus.FAILED, job
    result = job["result"]
    assert result is not None and result["partial"] is True
    assert result["iterations"] == job["parts"][0]["result"]["iterations"] == 60  # part 0's alone


def test_a_job_with_a_failed_part_is_failed_once_its_other_parts_are_done(
        settings: Settings, record: dict[str, Any]) -> None:
    """While other parts run, the job reads `started`: a client that stops at `failed` gets what
    the job keeps."""
    manager = build_manager(settings)
    spec = review.plan(record, LEVEL, None, 5)
    rec = manager.submit_parts(spec.to_dict(), spec.parts)
    _last_attempt_dies(manager, rec["id"], 0)
    job = manager.get(rec["id"])
    assert job is not None and job["parts"][0]["status"] == "failed"
    assert job_status(job) == JobStatus.STARTED and job["result"] is None
    burst(settings, manager)
    job = manager.get(rec["id"])
    assert job is not None and job_status(job) == JobStatus.FAILED and job["result"]["partial"] is True
    assert job["result"]["missing"] == spec.part_moves(0)


def test_a_heartbeat_gap_over_a_redis_outage_is_no_dead_worker(settings: Settings, state: dict[str, Any]) -> None:
    """A part silent since before a process noted Redis back (a restart, a lost connection) is
    timed from then: left alone for the heartbeat timeout (its worker beats again, or announced
    itself), then taken for dead."""
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state, parallel=1), None)
    stale = manager.store.now() - 60
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(status="started", worker="rq:w", started_at=stale,
                                                                    heartbeat_at=stale))
    manager.queue.note_reachable()
    seen = manager.get(rec["id"])
    assert seen is not None and seen["parts"][0]["status"] == "started" and seen["parts"][0]["attempt"] == 1, seen
    t0 = time.monotonic()

    def reaped() -> dict[str, Any] | None:
        job = manager.get(rec["id"])
        return job if job is not None and job["parts"][0]["attempt"] == 2 else None

    job = wait_until(reaped, 30.0, interval=0.1, what="the part reaped")
    assert time.monotonic() - t0 >= settings.heartbeat_timeout * 0.9
    assert "since the job store came back" in job["parts"][0]["history"][0]["error"]


def test_a_part_queued_again_goes_first(settings: Settings, state: dict[str, Any]) -> None:
    """A retried part goes before its client's parts queued after it, and to the front of the RQ
    queue: it waited behind every part queued since its first attempt."""
    manager = build_manager(settings)
    queue = manager.queue
    assert isinstance(queue, RQQueue)
    first = manager.submit(spec_of(state, parallel=2), None, client="a")
    later = manager.submit(spec_of(state, parallel=2), None, client="a")
    other = manager.submit(spec_of(state, parallel=1), None, client="b")
    queue.enqueue(first["id"], 1, 2, client="a", front=True)  # part 1 of the first job, retried
    pending = [e.decode() for e in queue.connection.lrange(queue.pending_prefix + "a", 0, -1)]
    assert pending[0] == RQQueue.entry(first["id"], 1, 2)
    assert later["id"] in pending[-1]
    waiting = RQQueue.rq_job_id(other["id"], 0, 1)  # b's part, fed to RQ before the retry
    assert waiting.encode() in queue.connection.lrange(queue.rq_queue.key, 0, -1)
    queue.taken("a", first["id"], 0, 1)  # a's fed part taken: the retried one is fed next, at the front
    rq_ids = [j.decode() for j in queue.connection.lrange(queue.rq_queue.key, 0, -1)]
    assert rq_ids[0] == RQQueue.rq_job_id(first["id"], 1, 2), rq_ids
    assert rq_ids.index(waiting) > 0
    assert not queue.connection.sismember(queue.front_key, RQQueue.entry(first["id"], 1, 2))


def _after(n: int) -> Any:
    """A `should_stop` that says stop after `n` calls."""
    calls = [0]

    def stop() -> bool:
        calls[0] += 1
        return calls[0] > n

    return stop
