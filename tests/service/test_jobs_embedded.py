"""The job machinery's plans and the embedded backend (the SQLite store and threads), with the real
engine and bots; the settings the service reads from its environment."""

from __future__ import annotations

import os
import socket
import threading
import time
from typing import Any

import pytest

from lab.serving import wait_until
from service import search
from service.config import Settings
from service.jobs import JobManager, SqliteStore, build_manager, runner
from service.jobs.model import JobStatus, job_status
from service.jobs.queue import EmbeddedQueue
from tests.service.jobs_helpers import spec_of

# ----------------------------------------------------------------------------- plans


def test_plan_splits_iterations_and_keeps_seed() -> None:
    spec = search.SearchSpec(state={}, level=None, iterations=10, time_ms=None, seed=4, parallel=3)
    parts = search.plan(spec)
    assert [p.iterations for p in parts] == [4, 3, 3]
    assert parts[0].seed == 4 and len({p.seed for p in parts}) == 3
    timed = search.SearchSpec(state={}, level=None, iterations=None, time_ms=100, seed=4, parallel=2)
    assert [p.time_ms for p in search.plan(timed)] == [100, 100]
    s = Settings(part_iterations=1000, max_parts=8, time_parts=4)
    assert search.default_parallel(2500, None, s, False) == 3
    assert search.default_parallel(10**9, None, s, True) == 8
    assert search.default_parallel(None, 500, s, False) == 1
    assert search.default_parallel(None, 500, s, True) == 4
    # the embedded queue runs as many parts at once as it has threads (one by default): a time
    # budget gets no more parts than that, as they would run one after the other
    assert search.default_parallel(None, 500, s, True, "embedded") == 1
    assert search.default_parallel(None, 500, Settings(embedded_threads=3), True, "embedded") == 3
    # on RQ, no more parts than there are workers to run them side by side (one worker ran 4 parts
    # of a 2.5 s budget one after the other: 10 s); none known: time_parts
    assert search.default_parallel(None, 500, s, True, "redis", workers=1) == 1
    assert search.default_parallel(None, 500, s, True, "redis", workers=2) == 2
    assert search.default_parallel(None, 500, s, True, "redis", workers=9) == 4
    assert search.default_parallel(None, 500, s, True, "redis", workers=0) == 1
    assert search.default_parallel(2500, None, s, True, "redis", workers=1) == 3  # iterations: split as ever


# ---------------------------------------------------------------------------- embedded


def test_embedded_store_reaps_parts_of_a_dead_process(
    env: dict[str, str], tmp_path: Any, state: dict[str, Any]
) -> None:
    s = Settings.from_env(overrides={"max_attempts": 2})
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)
    queue = EmbeddedQueue(store, s)
    manager = JobManager(store, queue, s)

    class NoRun(EmbeddedQueue):
        def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None,
                    client: str = "", handbacks: int = 0, cost: float | None = None) -> None:
            return None

        def owner(self) -> str | None:
            return f"{socket.gethostname()}:999999999"  # a pid no process has

    dead = JobManager(store, NoRun(store, s), s)
    rec = dead.submit(spec_of(state, iterations=40, parallel=2), None)  # held by a process that is gone
    seen = manager.get(rec["id"])
    assert seen is not None and all(p["attempt"] == 2 for p in seen["parts"])
    assert "is gone" in seen["parts"][0]["history"][0]["error"]
    queue.join()
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
    assert done["result"]["iterations"] == 40


def test_embedded_a_part_whose_claim_failed_runs_again(
    env: dict[str, str], tmp_path: Any, state: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread could not take a part (the job database locked past its timeout): taking and
    claiming are one transaction, so the part is still waiting, and runs without using an
    attempt (it stayed `queued` under a live owner for ever when the take and the claim were apart)."""
    from service.jobs.store import StoreUnavailable

    s = Settings.from_env(overrides={"heartbeat_timeout": 1.0, "heartbeat_interval": 0.2, "max_attempts": 3})
    manager = build_manager(s, str(tmp_path / "jobs.sqlite"))
    store = manager.store
    assert isinstance(store, SqliteStore)
    real = store.queue_take
    calls: list[int] = []

    def busy_once(claim: Any, max_cost: float | None = None) -> Any:
        calls.append(1)
        if len(calls) == 1:
            raise StoreUnavailable("job database busy: database is locked")
        return real(claim, max_cost)

    monkeypatch.setattr(store, "queue_take", busy_once)
    manager.start_reaper()
    rec = manager.submit(spec_of(state, iterations=30, parallel=1), None)

    def finished() -> bool:
        job = manager.store.load(rec["id"])
        return job is not None and job_status(job) == JobStatus.FINISHED

    wait_until(finished, 30.0, what="the part runs")
    part = manager.store.load(rec["id"])["parts"][0]  # type: ignore[index]
    assert len(calls) > 1 and part["attempt"] == 1 and part["history"] == []


def test_embedded_owner_is_told_apart_from_a_new_process_with_its_pid(tmp_path: Any) -> None:
    """A container restarted in place numbers its processes alike: a part held by the old
    process (its pid now another's) stayed queued forever, as the pid was alive."""
    s = Settings()
    queue = EmbeddedQueue(SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl), s)
    me = runner.process_id()
    host, pid, start = me.split(":")
    assert int(pid) == os.getpid() and start.isdigit()
    assert queue.owner_alive(me) is True
    assert queue.owner_alive(f"{host}:{pid}:{int(start) + 1}") is False  # same pid, another process
    assert queue.owner_alive(f"{host}:{pid}") is True  # the format of older records: by pid alone
    assert queue.owner_alive(f"{host}:999999999:1") is False
    assert queue.owner_alive(f"another-{host}:{pid}:{start}") is None


def test_embedded_reaper_runs_the_parts_of_a_dead_process_without_a_poll(
    env: dict[str, str], tmp_path: Any, state: dict[str, Any]
) -> None:
    """Nothing reaped embedded jobs unless their status was polled: a part of a process killed
    mid-search stayed `started` until the job expired (24 hours), never counted as failed."""
    s = Settings.from_env(overrides={"max_attempts": 2, "heartbeat_timeout": 0.6})
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)

    class Dead(EmbeddedQueue):
        def enqueue(self, job_id: str, index: int, attempt: int, timeout_s: int | None = None,
                    client: str = "", handbacks: int = 0, cost: float | None = None) -> None:
            return None

        def owner(self) -> str | None:
            return f"{socket.gethostname()}:999999999:1"

    rec = JobManager(store, Dead(store, s), s).submit(spec_of(state, iterations=40, parallel=2), None)
    store.update(rec["id"], lambda r: [p.update(status=JobStatus.STARTED.value, worker=p["owner"],
                                                 started_at=store.now(), heartbeat_at=store.now())
                                       for p in r["parts"]])
    queue = EmbeddedQueue(store, s)
    manager = JobManager(store, queue, s)
    manager.start_reaper()
    manager.start_reaper()  # once per process

    def finished() -> bool:
        loaded = store.load(rec["id"])  # a plain read: no poll through the manager, which reaps
        return loaded is not None and all(p["status"] == JobStatus.FINISHED.value for p in loaded["parts"])

    wait_until(finished, 30.0, what="the reaper to run the dead process's parts again")
    done = store.load(rec["id"])
    assert done is not None and all(p["attempt"] == 2 and "is gone" in p["history"][0]["error"]
                                    for p in done["parts"]), done
    assert [t.name for t in threading.enumerate()].count("kashgar-reaper") >= 1


def test_embedded_queue_depth_counts_every_process_s_parts(
    env: dict[str, str], tmp_path: Any, state: dict[str, Any]
) -> None:
    """`kashgar_queue_depth` read this process's in-memory queue: with two web processes it
    showed whichever answered the scrape."""
    s = Settings.from_env()
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)

    class Elsewhere(EmbeddedQueue):  # another process, whose threads are busy: its parts wait
        def start(self) -> None:
            return None

    other = JobManager(store, Elsewhere(store, s), s)
    for parallel in (2, 3):
        other.submit(spec_of(state, iterations=40, parallel=parallel), None)
    assert EmbeddedQueue(store, s).depth() == 5


def test_embedded_progress_then_cancel(
    env: dict[str, str], tmp_path: Any, state: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # not a reaping test: a heartbeat late by a second on a busy machine must not retry the part
    monkeypatch.setenv("KASHGAR_HEARTBEAT_TIMEOUT", "15")
    s = Settings.from_env()
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)
    manager = JobManager(store, EmbeddedQueue(store, s), s)
    rec = manager.submit(spec_of(state, iterations=5_000_000, parallel=1), None)
    deadline = time.monotonic() + 30
    seen: dict[str, Any] = {}
    while time.monotonic() < deadline:
        seen = manager.get(rec["id"]) or {}
        if seen["parts"][0]["progress"].get("iterations", 0) > 0:
            break
        time.sleep(0.05)
    progress = seen["parts"][0]["progress"]
    assert progress.get("iterations", 0) > 0, seen["parts"][0]
    # the part reports its current best decision while it runs
    assert isinstance(progress.get("best"), str) and progress["best"], progress
    manager.cancel(rec["id"])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        seen = manager.get(rec["id"]) or {}
        if seen["parts"][0]["status"] == "cancelled":
            break
        time.sleep(0.05)
    assert seen["parts"][0]["status"] == "cancelled", seen["parts"][0]
    assert seen["result"] is not None and seen["result"]["partial"] is True
    assert seen["result"]["iterations"] < 5_000_000


def test_a_short_job_runs_on_the_express_lane_beside_long_parts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, state: dict[str, Any]
) -> None:
    """Client A's long parts hold the queue's thread (and wait behind it); client B's short job
    runs at once on the express lane, which never takes a long part, and finishes within seconds."""
    monkeypatch.setenv("KASHGAR_HEARTBEAT_TIMEOUT", "15")
    s = Settings.from_env()
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)
    queue = EmbeddedQueue(store, s)
    manager = JobManager(store, queue, s)
    long = search.SearchSpec(state=state, level=None, iterations=None, time_ms=60_000, seed=9, parallel=1)
    long_jobs = [manager.submit(long, None, client="a", cost=60.0) for _ in range(2)]
    wait_until(lambda: (manager.get(long_jobs[0]["id"]) or {})["parts"][0]["status"] == "started", 30,
               what="A's first part started")
    t0 = time.monotonic()
    short = manager.submit(spec_of(state, iterations=100, parallel=1), None, client="b", cost=0.005)
    wait_until(lambda: job_status(manager.get(short["id"]) or short) == JobStatus.FINISHED, 30, interval=0.02,
               what="B's job finished")
    took = time.monotonic() - t0
    a = [manager.get(j["id"]) or {} for j in long_jobs]
    try:
        assert took < 5.0, took
        # A's second part still waits: the express lane does not take a long part
        assert [r["parts"][0]["status"] for r in a] == ["started", "queued"], a
    finally:
        for j in long_jobs:
            manager.cancel(j["id"])
        queue.stop()


def test_settings_from_env() -> None:
    s = Settings.from_env(
        {"KASHGAR_SYNC_MAX_MS": "750", "KASHGAR_LOG_JSON": "false", "KASHGAR_HEARTBEAT_TIMEOUT": "2.5"},
        {"RESULT_TTL": 5},
    )
    assert (s.sync_max_ms, s.log_json, s.heartbeat_timeout, s.result_ttl) == (750, False, 2.5, 5)
    with pytest.raises(ValueError, match="KASHGAR_SYNC_MAX_MS"):
        Settings.from_env({"KASHGAR_SYNC_MAX_MS": "lots"})


@pytest.mark.parametrize("env,name", [
    ({"KASHGAR_HEARTBEAT_TIMEOUT": "0"}, "KASHGAR_HEARTBEAT_TIMEOUT"),  # every running part reaped
    ({"KASHGAR_HEARTBEAT_TIMEOUT": "nan"}, "KASHGAR_HEARTBEAT_TIMEOUT"),
    ({"KASHGAR_HEARTBEAT_INTERVAL": "20"}, "KASHGAR_HEARTBEAT_INTERVAL"),  # above the 15 s timeout
    ({"KASHGAR_MAX_ATTEMPTS": "0"}, "KASHGAR_MAX_ATTEMPTS"),  # a part never runs
    ({"KASHGAR_EMBEDDED_THREADS": "0"}, "KASHGAR_EMBEDDED_THREADS"),
    ({"KASHGAR_RESULT_TTL": "-5"}, "KASHGAR_RESULT_TTL"),
    ({"KASHGAR_MAX_PARTS": "0"}, "KASHGAR_MAX_PARTS"),
])
def test_settings_refuse_values_the_service_cannot_run_with(env: dict[str, str], name: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=name):
        Settings.from_env(env)
    from kashgar_cli.main import main

    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        assert main(["serve", "--dry-run"]) == 2
    assert name in capsys.readouterr().err


def test_embedded_queue_serves_the_clients_in_turn(tmp_path: Any) -> None:
    """Client a queues three parts, then b one, then a another: b's part is taken second (a new
    client goes before a's backlog), and a's parts keep their order."""
    from service.jobs.model import new_record

    s = Settings.from_env()
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)
    for job_id, client, parts in (("a1", "a", 3), ("b1", "b", 1), ("a2", "a", 1)):
        store.create(new_record(job_id, {}, parts, store.now(), None, None, client))
        for i in range(parts):
            store.queue_put(job_id, i, 1, 0, client)
    order = []
    while (got := store.queue_take(lambda rec, i, a: "ok")) is not None:
        order.append(f"{got[0]}:{got[1]}")
    assert order == ["a1:0", "b1:0", "a1:1", "a1:2", "a2:0"], order
    assert store.queue_depth() == 0


def test_a_part_queued_again_goes_first_on_the_embedded_queue(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A retried part (`front`, as the reaper queues it) and one handed back at shutdown are taken
    before every part queued after their first attempt, whichever client's, as on Redis: they
    waited their turn once already."""
    from service.jobs.model import new_record

    s = Settings.from_env()
    store = SqliteStore(str(tmp_path / "jobs.sqlite"), s.result_ttl, s.job_ttl)
    queue = EmbeddedQueue(store, s)
    monkeypatch.setattr(queue, "start", lambda: None)  # no threads: the test takes the parts itself
    records = {}
    for job_id, client, parts in (("a1", "a", 2), ("b1", "b", 1), ("a2", "a", 1), ("c1", "c", 1)):
        records[job_id] = new_record(job_id, {}, parts, store.now(), None, None, client)
        store.create(records[job_id])
        for i in range(parts):
            queue.enqueue(job_id, i, 1, client=client)

    def take() -> str:
        got = store.queue_take(lambda rec, i, a: "ok")
        assert got is not None
        return f"{got[0]}:{got[1]}:a{got[2]}"

    assert [take(), take()] == ["a1:0:a1", "b1:0:a1"]
    queue.enqueue("a1", 0, 2, client="a", front=True)  # a1's part 0 retried: its worker died
    queue._requeue_for("b1", records["b1"])(0, 1, 1)  # b1's part 0 handed back by a stopping thread
    order = [take() for _ in range(store.queue_depth())]
    assert order == ["a1:0:a2", "b1:0:a1", "c1:0:a1", "a1:1:a1", "a2:0:a1"], order


def test_the_reaper_stops_when_its_job_store_is_removed(tmp_path: Any) -> None:
    """A server whose data directory is deleted under it: the reaper says so once and stops, rather
    than failing every few tenths of a second for the life of the process."""
    s = Settings.from_env(overrides={"heartbeat_timeout": 0.6, "heartbeat_interval": 0.1})
    folder = tmp_path / "data"
    folder.mkdir()
    store = SqliteStore(str(folder / "jobs.sqlite"), s.result_ttl, s.job_ttl)
    queue = EmbeddedQueue(store, s)
    before = set(threading.enumerate())
    JobManager(store, queue, s).start_reaper()
    queue.stop()
    reaper = next(t for t in set(threading.enumerate()) - before if t.name == "kashgar-reaper")
    for f in folder.iterdir():
        f.unlink()
    folder.rmdir()
    reaper.join(10.0)
    assert not reaper.is_alive()
