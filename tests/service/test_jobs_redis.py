"""The job machinery on Redis (a real `redis-server` on a free port) with RQ's SimpleWorker and
workers of its own, the real engine and bots: results, retries of parts whose worker died, cancels,
expiry, Redis restarts, and where RQ holds a part."""

from __future__ import annotations

import re
import time
from datetime import UTC
from types import SimpleNamespace
from typing import Any

import pytest
import redis
from rq import SimpleWorker

from lab.serving import RedisServer, Worker, free_port, wait_until
from service import create_app, search
from service.config import Settings
from service.jobs import build_manager
from service.jobs.model import JobStatus, job_status
from service.jobs.queue import RQQueue
from service.jobs.store import RedisStore
from tests.service.jobs_helpers import ENV, burst, one_part_job, run_to_the_end, spec_of, stable

# ------------------------------------------------------------------------------- Redis


def test_redis_job_equals_sync_search(settings: Settings, state: dict[str, Any]) -> None:
    manager = build_manager(settings)
    spec = spec_of(state)
    rec = manager.submit(spec, "req-1")
    assert manager.queue.depth() == 2
    assert job_status(manager.get(rec["id"]) or {}) == JobStatus.QUEUED
    burst(settings, manager)
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
    assert stable(done["result"]) == stable(search.run_sync(spec))
    assert manager.store.stats().get("jobs_finished") == 1
    ttl = manager.store.connection.ttl(manager.store.job_key(rec["id"]))  # type: ignore[attr-defined]
    assert 0 < ttl <= settings.result_ttl


def test_redis_dead_worker_part_is_retried(settings: Settings, state: dict[str, Any]) -> None:
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state, parallel=1), None)
    # A worker claims the part and dies: status started, heartbeat long gone, the RQ job consumed.
    manager.queue.rq_queue.empty()  # type: ignore[attr-defined]
    stale = manager.store.now() - 60

    def claim(r: dict[str, Any]) -> None:
        r["parts"][0].update(status="started", worker="rq:dead", started_at=stale, heartbeat_at=stale)

    manager.store.update(rec["id"], claim)
    seen = manager.get(rec["id"])  # reaps
    assert seen is not None and seen["parts"][0]["attempt"] == 2 and seen["parts"][0]["status"] == "queued"
    assert "no heartbeat" in seen["parts"][0]["history"][0]["error"]
    burst(settings, manager)
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
    assert done["result"]["iterations"] == 120
    assert manager.store.stats().get("parts_retried") == 1


def test_redis_queued_part_whose_queue_entry_vanished_runs_again(settings: Settings, state: dict[str, Any]) -> None:
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state, parallel=1), None)
    # still waiting in the queue: left alone, however long it waits
    old = manager.store.now() - 60
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(queued_at=old))
    seen = manager.get(rec["id"])
    assert seen is not None and seen["parts"][0]["attempt"] == 1 and seen["parts"][0]["history"] == []
    # the queue loses the entry (a Redis restart without it on disk): the part runs again, its
    # attempt kept (it never ran: no worker died of it)
    assert isinstance(manager.queue, RQQueue)
    manager.queue.rq_queue.empty()
    seen = manager.get(rec["id"])
    assert seen is not None and seen["parts"][0]["status"] == "queued", seen
    assert seen["parts"][0]["attempt"] == 1 and seen["parts"][0]["handbacks"] == 1
    assert seen["parts"][0]["history"] == [] and not manager.store.stats().get("parts_retried")
    burst(settings, manager)
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done


def test_redis_a_part_a_worker_has_taken_but_not_started_is_not_lost(settings: Settings, state: dict[str, Any]) -> None:
    """RQ moves a taken job to the queue's intermediate list (still QUEUED) until its work horse
    starts it; under a backlog longer than the heartbeat timeout such parts were called lost,
    retried, and after two such retries their job failed."""
    manager, queue, rec, rq_id = one_part_job(settings, state)
    conn = queue.connection
    assert conn.lmove(queue.rq_queue.key, queue.rq_queue.intermediate_queue_key) == rq_id.encode()  # as a worker does
    assert queue.entry_lost(rec["id"], 0, 1) is False
    old = manager.store.now() - 60  # waiting far longer than the heartbeat timeout
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(queued_at=old))
    seen = manager.get(rec["id"])
    assert seen is not None and seen["parts"][0]["attempt"] == 1 and seen["parts"][0]["history"] == [], seen
    conn.lmove(queue.rq_queue.intermediate_queue_key, queue.rq_queue.key)  # back, and run it
    run_to_the_end(settings, manager, rec["id"])


def test_redis_a_part_left_in_the_intermediate_list_runs_again(settings: Settings, state: dict[str, Any]) -> None:
    """A worker whose connection broke as it took a part (a Redis restart) leaves it in the
    intermediate list, which RQ cleans only every ten minutes: the part stayed queued past the
    faults run's settle time (1 of 200 jobs stuck). Seen there longer than the heartbeat timeout,
    it runs again, and the orphan leaves the list."""
    manager, queue, rec, rq_id = one_part_job(settings, state)
    conn = queue.connection
    conn.lmove(queue.rq_queue.key, queue.rq_queue.intermediate_queue_key)  # taken; the worker is gone
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(queued_at=manager.store.now() - 60))
    assert queue.entry_lost(rec["id"], 0, 1) is False  # first seen there: maybe being started now
    conn.set(f"{settings.key_prefix}:taken-since:{rq_id}", time.time() - 60)  # ... a minute ago
    seen = manager.get(rec["id"])
    assert seen is not None and seen["parts"][0]["attempt"] == 1 and seen["parts"][0]["handbacks"] == 1, seen
    assert conn.lpos(queue.rq_queue.intermediate_queue_key, rq_id) is None
    run_to_the_end(settings, manager, rec["id"])


def test_redis_a_part_started_by_rq_but_never_claimed_runs_again(settings: Settings, state: dict[str, Any]) -> None:
    """RQ marked the part's job started, but no work horse ever claimed the part (a horse that
    started around a Redis outage and died unrecorded): the part stayed queued forever (one of
    200 jobs in `python -m loadtests.faults --no-supervise`). Once RQ's start is older than the
    heartbeat timeout it runs again; a start just now is left alone."""
    from datetime import datetime, timedelta

    from rq.job import Job
    from rq.job import JobStatus as RQStatus

    manager, queue, rec, rq_id = one_part_job(settings, state)
    queue.connection.lrem(queue.rq_queue.key, 0, rq_id)  # taken by a worker, which started it ...
    job = Job.fetch(rq_id, connection=queue.connection)
    job.started_at = datetime.now(UTC)
    job.set_status(RQStatus.STARTED)
    job.save()
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(queued_at=manager.store.now() - 60))
    assert queue.entry_lost(rec["id"], 0, 1) is False  # just started: the horse is about to claim it
    job.started_at = datetime.now(UTC) - timedelta(seconds=60)  # ... long ago, never claimed
    job.save()
    seen = manager.get(rec["id"])
    assert seen is not None and seen["parts"][0]["attempt"] == 1 and seen["parts"][0]["handbacks"] == 1, seen
    assert seen["parts"][0]["status"] == "queued" and seen["parts"][0]["history"] == []
    run_to_the_end(settings, manager, rec["id"])


def test_redis_a_worker_restarted_under_the_name_of_a_dead_one_runs(settings: Settings, state: dict[str, Any]) -> None:
    """A worker SIGKILLed leaves its name registered; restarted under the same fixed name (as the
    systemd unit does) it exited with "There exists an active worker named ..." and looped."""
    from service.jobs.worker import run_worker

    manager = build_manager(settings)
    assert isinstance(manager.queue, RQQueue)
    SimpleWorker([settings.queue_name], connection=manager.queue.connection, name="wk0").register_birth()  # dead
    rec = manager.submit(spec_of(state, parallel=1), None)
    assert run_worker(settings, name="wk0", burst=True, simple=True, reaper=False) == 0
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
    assert done["parts"][0]["worker"].endswith("wk0-r1"), done["parts"][0]


def test_redis_a_worker_that_lost_redis_goes_on_under_one_registration(
    settings: Settings, state: dict[str, Any]
) -> None:
    """A worker whose connection breaks outside RQ's own retry (a heartbeat as Redis restarts)
    goes on under a new name; Redis that kept its data listed the old name too, as a second
    worker, until its key expired. Here the break is forced once, right after registering."""
    from rq import Worker as RQWorker

    from service.jobs.worker import run_worker

    class LosesRedisOnce(SimpleWorker):
        lost = False

        def work(self, burst: bool = False, logging_level: str = "INFO", **kw: Any) -> bool:  # type: ignore[override]
            if not LosesRedisOnce.lost:
                LosesRedisOnce.lost = True
                self.register_birth()
                raise redis.exceptions.ConnectionError("Connection closed by server.")
            return bool(super().work(burst=True, logging_level=logging_level, **kw))

    manager, queue, rec, _ = one_part_job(settings, state)
    assert run_worker(settings, name="wk1", worker_class=LosesRedisOnce, reaper=False, reconnect_timeout=5) == 0
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
    assert done["parts"][0]["worker"].endswith("wk1-r1")
    assert [w.name for w in RQWorker.all(connection=queue.connection)] == []  # both names gone


def test_redis_dead_worker_last_attempt_fails_visibly(settings: Settings, state: dict[str, Any]) -> None:
    manager = build_manager(Settings.from_env(overrides={"redis_url": settings.redis_url, "max_attempts": 1}))
    rec = manager.submit(spec_of(state, parallel=1), None)
    manager.queue.rq_queue.empty()  # type: ignore[attr-defined]
    stale = manager.store.now() - 60
    manager.store.update(
        rec["id"], lambda r: r["parts"][0].update(status="started", heartbeat_at=stale, started_at=stale)
    )
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FAILED
    assert "gave up after 1 attempt" in done["parts"][0]["error"]
    assert manager.store.stats().get("jobs_failed") == 1
    assert rec["id"] not in manager.store.active_ids()


def test_redis_a_cancelled_part_whose_worker_dies_ends_cancelled(settings: Settings, state: dict[str, Any]) -> None:
    """Cancelled while running, then its worker died before it noticed: the part stayed `started`
    forever (the reaper skipped cancelled jobs); now it ends cancelled, with the reason on record."""
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state, parallel=1), None)
    manager.queue.rq_queue.empty()  # type: ignore[attr-defined]  # taken by a worker ...
    now = manager.store.now()
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(status="started", heartbeat_at=now, started_at=now))
    out = manager.cancel(rec["id"])
    assert out is not None and out[0] is True and job_status(out[1]) == JobStatus.CANCELLED
    stale = now - 60  # ... which then died: no heartbeat since
    manager.store.update(rec["id"], lambda r: r["parts"][0].update(heartbeat_at=stale, started_at=stale))
    seen = manager.get(rec["id"])
    assert seen is not None and job_status(seen) == JobStatus.CANCELLED
    part = seen["parts"][0]
    assert part["status"] == "cancelled" and "no heartbeat" in part["history"][0]["error"], part


def test_redis_cancel_before_start(settings: Settings, state: dict[str, Any]) -> None:
    manager = build_manager(settings)
    rec = manager.submit(spec_of(state), None)
    out = manager.cancel(rec["id"])
    assert out is not None and out[0] is True and job_status(out[1]) == JobStatus.CANCELLED
    burst(settings, manager)  # the workers find the parts cancelled and skip them
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.CANCELLED
    assert all(p["status"] == "cancelled" and p["result"] is None for p in done["parts"])
    again = manager.cancel(rec["id"])
    assert again is not None and again[0] is False


def test_redis_results_expire(
    env: dict[str, str], redis_server: RedisServer, state: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KASHGAR_RESULT_TTL", "2")  # the worker that finishes the job reads it
    s = Settings.from_env(overrides={"redis_url": redis_server.url, "result_ttl": 2})
    manager = build_manager(s)
    rec = manager.submit(spec_of(state, iterations=20, parallel=1), None)
    # before it finishes, a job is kept for the job TTL (a day by default)
    conn = redis.Redis.from_url(redis_server.url)
    key = f"{ENV['KASHGAR_KEY_PREFIX']}:job:{rec['id']}"
    assert conn.ttl(key) > 60
    burst(s, manager)
    # once finished, only for the result TTL (read from Redis, not from a race with the clock)
    assert 0 < conn.ttl(key) <= 2 or conn.exists(key) == 0
    time.sleep(2.6)
    assert manager.get(rec["id"]) is None


def test_redis_an_unfinished_job_whose_record_expired_is_no_longer_active(
    settings: Settings, state: dict[str, Any]
) -> None:
    """The active set has no TTL: a job left unfinished past `job_ttl` (no worker) or evicted kept
    its id there, and /metrics' kashgar_jobs_active counted it forever."""
    from prometheus_client import generate_latest

    from service import metrics

    manager = build_manager(settings)
    gone = manager.submit(spec_of(state, iterations=20, parallel=1), None)
    kept = manager.submit(spec_of(state, iterations=20, parallel=1), None)
    conn = redis.Redis.from_url(settings.redis_url)
    store = manager.store
    assert isinstance(store, RedisStore)
    conn.delete(store.job_key(gone["id"]))  # as an expiry or an eviction would
    assert store.active_ids() == [kept["id"]]
    assert conn.smembers(store.active_key) == {kept["id"].encode()}
    manager.reap_all()
    assert store.active_ids() == [kept["id"]]
    app = SimpleNamespace(extensions={"kashgar_jobs": manager})
    text = generate_latest(metrics.JobsCollector(app)).decode()  # type: ignore[arg-type]
    assert 'kashgar_jobs_active{backend="redis"} 1.0' in text


def test_redis_a_worker_is_registered_again_after_redis_restarts_without_persistence(
    env: dict[str, str], state: dict[str, Any]
) -> None:
    """RQ reconnects after a Redis restart and goes on working, but an empty Redis no longer lists
    the worker: `Worker.all()`, and so `/readyz`'s `workers`, said 0 until the worker restarted.
    The worker's reaper thread now registers it again; a stopped worker is not brought back."""
    with RedisServer() as server:
        settings = Settings.from_env(overrides={"redis_url": server.url})
        queue = build_manager(settings).queue
        worker = Worker(server.url, env=env).start()
        try:
            wait_until(lambda: queue.workers() == 1, 30.0, what="the worker registers")
            server.stop()
            server.start()  # the same port, nothing kept
            assert queue.workers() == 0
            wait_until(lambda: queue.workers() == 1, 30.0, what="the worker registers again")
            manager = build_manager(settings)
            rec = manager.submit(spec_of(state, iterations=60, parallel=1), None)

            def finished() -> bool:
                job = manager.get(rec["id"])
                return job is not None and job_status(job) == JobStatus.FINISHED

            wait_until(finished, 60.0, what="the job runs on the worker")
        finally:
            worker.stop()
        assert queue.workers() == 0  # a stopped worker's reaper did not register it again


def test_redis_a_worker_stopping_while_it_is_registered_again_stays_unlisted(settings: Settings) -> None:
    """The reaper checks that Redis has forgotten a live worker, then writes it back. A worker that
    registers its death between the check and the write must not be listed again (for its key's
    8 minutes): the check and the write are one transaction."""
    from rq import Worker as RQWorker

    from service.jobs.worker import register_again

    conn = redis.Redis.from_url(settings.redis_url)
    wk = SimpleWorker([settings.queue_name], connection=conn, name="racer")
    wk.register_birth()
    wk.heartbeat()
    conn.flushall()  # Redis restarted without persistence: the worker is forgotten
    assert RQWorker.all(connection=conn) == []
    serialize = wk.serialize

    def dies_meanwhile() -> Any:  # called between the check and the write
        wk.register_death()
        return serialize()

    wk.serialize = dies_meanwhile  # type: ignore[method-assign]
    assert register_again(wk) is False
    assert RQWorker.all(connection=conn) == []
    wk.serialize = serialize  # type: ignore[method-assign]
    assert register_again(wk) is False  # dead: never listed again
    fresh = SimpleWorker([settings.queue_name], connection=conn, name="alive")
    fresh.register_birth()
    fresh.heartbeat()
    conn.flushall()
    assert register_again(fresh) is True
    assert [w.name for w in RQWorker.all(connection=conn)] == ["alive"]
    assert register_again(fresh) is False  # listed already


def test_redis_down_async_503_sync_works(env: dict[str, str], state: dict[str, Any]) -> None:
    app = create_app(
        {
            "redis_url": f"redis://127.0.0.1:{free_port()}/0",
            "redis_timeout": 0.5,
            "sync_max_iterations": 200,
            "log_level": "ERROR",
        }
    )
    c = app.test_client()
    t0 = time.monotonic()
    r = c.post("/suggest", json={"state": state, "iterations": 50, "mode": "async"})
    body: Any = r.get_json()
    assert r.status_code == 503 and body["error"] == "queue_unavailable", body
    assert r.headers["Retry-After"]
    assert c.post("/suggest", json={"state": state, "iterations": 500}).status_code == 503  # auto -> async
    assert c.get("/jobs/" + "a" * 32).status_code == 503
    assert time.monotonic() - t0 < 10
    r = c.post("/suggest", json={"state": state, "iterations": 50, "mode": "sync"})
    body = r.get_json()
    assert r.status_code == 200 and body["iterations"] == 50
    ready = c.get("/readyz")
    assert ready.status_code == 503 and ready.get_json()["error"] == "not_ready"
    assert c.get("/healthz").status_code == 200
    metrics = c.get("/metrics")
    text = metrics.get_data(as_text=True)
    assert metrics.status_code == 200 and 'kashgar_queue_up{backend="redis"} 0.0' in text
    counted = re.search(r'kashgar_request_errors_total\{error="not_ready",status="503"\} ([0-9.]+)', text)
    assert counted and float(counted.group(1)) >= 1


def test_faults_reads_where_rq_holds_a_part(settings: Settings, state: dict[str, Any]) -> None:
    """`loadtests.faults` records this for a stuck part before the stack goes away."""
    from loadtests.faults import rq_state

    manager, queue, rec, rq_id = one_part_job(settings, state)
    assert settings.redis_url
    seen = rq_state(settings.redis_url, settings.queue_name, rq_id)
    assert seen == {"rq_id": rq_id, "rq_status": "queued", "in_queue": True, "in_intermediate": False,
                    "in_started_registry": False, "in_failed_registry": False}
    queue.connection.lmove(queue.rq_queue.key, queue.rq_queue.intermediate_queue_key)
    seen = rq_state(settings.redis_url, settings.queue_name, rq_id)
    assert seen["in_queue"] is False and seen["in_intermediate"] is True
    assert rq_state(settings.redis_url, settings.queue_name, "nope-p0-a1")["rq_status"] is None


def test_redis_an_async_time_budget_gets_no_more_parts_than_there_are_workers(
    settings: Settings, state: dict[str, Any]
) -> None:
    """Every part of a time budget searches for the whole time: with fewer RQ workers than
    `time_parts`, the parts ran one after the other (a 2.5 s budget took 10 s on one worker).
    The parts are as many as the workers listening, `time_parts` at most."""
    app = create_app({"redis_url": settings.redis_url, "time_parts": 3, "log_level": "ERROR"})
    c = app.test_client()
    conn = redis.Redis.from_url(settings.redis_url)
    listening = []

    def parts() -> int:
        r = c.post("/suggest", json={"state": state, "time_ms": 50, "mode": "async"})
        assert r.status_code == 202, r.get_json()
        return int(r.get_json()["parts"])

    assert parts() == 1  # no worker yet: one part, run when one comes
    for n in (1, 2, 4):
        while len(listening) < n:
            wk = SimpleWorker([settings.queue_name], connection=conn, name=f"w{len(listening)}")
            wk.register_birth()
            listening.append(wk)
        assert parts() == min(n, 3)
    asked = c.post("/suggest", json={"state": state, "time_ms": 50, "mode": "async", "parallel": 4})
    assert asked.get_json()["parts"] == 4  # a request that names its parts gets them
    for wk in listening:
        wk.register_death()


def test_redis_admission_counts_search_seconds_until_the_job_ends(settings: Settings, state: dict[str, Any]) -> None:
    """The search-seconds of an async job count for its client from acceptance until it is
    cancelled (or ends); a client over its limit is refused, naming the limit; others are not."""
    manager = build_manager(settings)
    store = manager.store
    spec = spec_of(state, parallel=1)
    jobs = [manager.submit(spec, None, "a", admit=lambda job_id: store.admit("async", "a", job_id, 2.0, 5.0, 100.0,
                                                                                 60.0) and None)
            for _ in range(2)]
    assert store.admit("async", "a", "one-more", 2.0, 5.0, 100.0, 60.0) == ("client", 4.0)
    assert store.admit("async", "b", "other", 2.0, 5.0, 5.0, 60.0) == ("total", 4.0)
    assert store.admit("async", "b", "other", 1.0, 5.0, 5.0, 60.0) is None
    out = manager.cancel(jobs[0]["id"])
    assert out is not None and out[0]
    assert store.admit("async", "a", "one-more", 2.0, 5.0, 100.0, 60.0) is None  # the cancelled job's freed
    assert manager.queue.depth() == 1  # the cancelled job's part left the queue at once
    store.release("one-more")
    store.release("one-more")  # twice: nothing more
    assert store.admit("async", "a", "x", 3.0, 5.0, 100.0, 60.0) is None
    assert store.admit("sync", "a", "s", 5.0, 5.0, 0.0, 0.01) is None  # sync counts apart
    time.sleep(0.05)
    assert store.admit("sync", "a", "t", 5.0, 5.0, 0.0, 60.0) is None  # "s" expired
