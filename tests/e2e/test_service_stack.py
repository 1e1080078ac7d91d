"""End to end on the real stack, started here on free loopback ports: `redis-server`, gunicorn
(`kashgar serve`, two web workers) and `kashgar worker` processes (RQ, forking a work horse)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from lab.serving import Gunicorn, RedisServer, Worker, http_json, stack, wait_until

pytestmark = pytest.mark.e2e

ENV = {
    "KASHGAR_HEARTBEAT_INTERVAL": "0.2",
    "KASHGAR_HEARTBEAT_TIMEOUT": "2.0",
    "KASHGAR_MAX_ATTEMPTS": "2",
    "KASHGAR_SYNC_MAX_ITERATIONS": "2000",
    "KASHGAR_SYNC_MAX_MS": "1000",
    "KASHGAR_REDIS_TIMEOUT": "1.0",
    "KASHGAR_LOG_LEVEL": "INFO",
}
VOLATILE = {"elapsed_ms", "request_id", "mode"}
TERMINAL = ("finished", "failed", "cancelled")


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    return dict(engine_ext.new_game(players=3, seed=21).to_json(observer=1))


@pytest.fixture(scope="module")
def redis_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RedisServer, Gunicorn, list[Worker]]]:
    logs = str(tmp_path_factory.mktemp("stack-logs"))
    with stack(workers=1, web_workers=2, env=ENV, log_dir=logs) as s:
        yield s


def poll(url: str, until: Any, timeout: float = 60.0) -> dict[str, Any]:
    def check() -> Any:
        status, body = http_json("GET", url)
        assert status == 200, body
        return body if until(body) else None

    return wait_until(check, timeout, interval=0.1, what=url)  # type: ignore[no-any-return]


def test_async_job_equals_sync_search(redis_stack: Any, state: dict[str, Any]) -> None:
    _, web, _ = redis_stack
    body = {"state": state, "iterations": 240, "seed": 17, "parallel": 3}
    status, sync = http_json("POST", web.url + "/suggest", dict(body, mode="sync"))
    assert status == 200, sync
    status, accepted = http_json("POST", web.url + "/suggest", dict(body, mode="async"))
    assert status == 202 and accepted["backend"] == "redis" and accepted["parts"] == 3, accepted
    job = poll(web.url + accepted["status_url"], lambda j: j["status"] in TERMINAL)
    assert job["status"] == "finished", job
    assert {k: v for k, v in job["result"].items() if k not in VOLATILE} == {
        k: v for k, v in sync.items() if k not in VOLATILE
    }
    status, ready = http_json("GET", web.url + "/readyz")
    assert status == 200 and ready["checks"]["queue"] == "ok"
    status, text = http_json("GET", web.url + "/metrics")
    assert 'kashgar_job_outcomes_total{backend="redis",outcome="finished"}' in text


def test_worker_killed_mid_job(redis_stack: Any, state: dict[str, Any]) -> None:
    redis_server, web, workers = redis_stack
    status, accepted = http_json(
        "POST", web.url + "/suggest", {"state": state, "time_ms": 2500, "seed": 3, "parallel": 1, "mode": "async"}
    )
    assert status == 202, accepted
    url = web.url + accepted["status_url"]
    running = poll(url, lambda j: j["parts"][0]["status"] == "started", timeout=30)
    assert running["status"] == "started"
    time.sleep(0.5)
    workers[0].kill()  # SIGKILL the worker and its work horse, mid-search
    replacement = Worker(redis_server.url, env=ENV, log_dir=str(Path(workers[0].proc.log_path).parent)).start()
    workers.append(replacement)
    job = poll(url, lambda j: j["status"] in TERMINAL, timeout=60)
    part = job["parts"][0]
    assert part["history"], job  # the dead attempt is on record
    assert "heartbeat" in part["history"][0]["error"] or "gone" in part["history"][0]["error"]
    if job["status"] == "finished":
        assert job["retried"] and part["attempt"] == 2 and job["result"]["iterations"] > 0
    else:
        assert job["status"] == "failed" and job["error"], job


def _short_record(moves: int, seed: int) -> dict[str, Any]:
    """The record of a game's first `moves` decisions, chosen at random from the deal of `seed`."""
    import random

    from engine_ext import record as records

    game = engine_ext.new_game(players=2, seed=seed)
    rng = random.Random(seed)
    played = []
    for _ in range(moves):
        text = str(rng.choice(game.legal()))
        game.apply(text)
        played.append(text)
    return records.record_from_moves(played, players=2, seed=seed)


def test_a_review_survives_its_worker_killed(redis_stack: Any) -> None:
    """SIGKILL the only worker while it reviews a part of a game: that part is taken again by a
    new worker and the review ends with every decision, nothing lost."""
    redis_server, web, workers = redis_stack
    status, accepted = http_json("POST", web.url + "/reviews",
                                 {"record": _short_record(14, seed=61), "level": "master", "seed": 2})
    assert status == 202, accepted
    url = web.url + accepted["status_url"]
    running = poll(url, lambda j: any(p["status"] == "started" for p in j["parts"]), timeout=60)
    assert running["status"] == "started", running
    workers[-1].kill()  # SIGKILL the worker and its work horse, mid-part
    replacement = Worker(redis_server.url, env=ENV, log_dir=str(Path(workers[-1].proc.log_path).parent)).start()
    workers.append(replacement)
    job = poll(url, lambda j: j["status"] in TERMINAL, timeout=180)
    assert job["status"] == "finished", job
    assert job["progress"]["decisions_done"] == job["progress"]["decisions_total"] > 0, job["progress"]
    retried = [p for p in job["parts"] if p["history"]]
    assert retried and all(p["attempt"] == 2 for p in retried), job["parts"]
    reviewed = [d["move"] for d in job["result"]["decisions"]]
    assert len(reviewed) == job["progress"]["decisions_total"] and reviewed == sorted(set(reviewed))


def test_cancel_running_job(redis_stack: Any, state: dict[str, Any]) -> None:
    _, web, _ = redis_stack
    status, accepted = http_json(
        "POST", web.url + "/suggest", {"state": state, "time_ms": 20_000, "seed": 3, "parallel": 1, "mode": "async"}
    )
    assert status == 202, accepted
    url = web.url + accepted["status_url"]
    poll(url, lambda j: j["parts"][0]["status"] == "started", timeout=30)
    t0 = time.monotonic()
    status, cancelled = http_json("DELETE", url)
    assert status == 200 and cancelled["status"] == "cancelled"
    job = poll(url, lambda j: j["parts"][0]["status"] == "cancelled", timeout=15)
    assert time.monotonic() - t0 < 10  # the search stopped long before its 20 s budget
    assert job["result"] is None or job["result"]["partial"] is True


def test_redis_stopped_async_503_sync_answers(state: dict[str, Any], tmp_path: Path) -> None:
    with stack(workers=1, web_workers=1, env=ENV, log_dir=str(tmp_path)) as (redis_server, web, _):
        status, _ = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 50, "mode": "async"})
        assert status == 202
        redis_server.stop()
        t0 = time.monotonic()
        status, body = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 50, "mode": "async"})
        assert status == 503 and body["error"] == "queue_unavailable", body
        assert time.monotonic() - t0 < 5
        status, body = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 50, "mode": "sync"})
        assert status == 200 and body["iterations"] == 50, body
        assert http_json("GET", web.url + "/readyz")[0] == 503
        assert http_json("GET", web.url + "/healthz")[0] == 200


def test_embedded_default_under_gunicorn(state: dict[str, Any], tmp_path: Path) -> None:
    """No Redis: async jobs on the embedded queue, visible from every gunicorn worker."""
    env = {k: v for k, v in ENV.items()}
    with Gunicorn(env=env, workers=2, log_dir=str(tmp_path)) as web:
        status, health = http_json("GET", web.url + "/healthz")
        assert health["backend"] == "embedded"
        body = {"state": state, "iterations": 150, "seed": 8, "parallel": 2}
        status, accepted = http_json("POST", web.url + "/suggest", dict(body, mode="async"))
        assert status == 202, accepted
        seen = [poll(web.url + accepted["status_url"], lambda j: j["status"] in TERMINAL) for _ in range(4)]
        assert all(j["status"] == "finished" for j in seen), seen
        status, sync = http_json("POST", web.url + "/suggest", dict(body, mode="sync"))
        assert seen[0]["result"]["decision_text"] == sync["decision_text"]
        assert seen[0]["result"]["alternatives"] == sync["alternatives"]


def test_worker_survives_a_redis_restart(state: dict[str, Any], tmp_path: Path) -> None:
    """Redis goes away and comes back on the same port: `kashgar worker` waits for it instead of
    exiting, and runs the jobs accepted afterwards."""
    with stack(workers=1, web_workers=1, env=ENV, log_dir=str(tmp_path)) as (redis_server, web, ws):
        worker = ws[0]
        assert worker.proc is not None
        status, accepted = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 60, "mode": "async"})
        assert status == 202, accepted
        poll(web.url + accepted["status_url"], lambda j: j["status"] == "finished")
        redis_server.stop()
        time.sleep(3.0)
        assert worker.proc.alive(), worker.proc.output()[-2000:]
        redis_server.start()
        status, accepted = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 60, "mode": "async"})
        assert status == 202, accepted
        job = poll(web.url + accepted["status_url"], lambda j: j["status"] in TERMINAL)
        assert job["status"] == "finished", job
        assert worker.proc.alive(), worker.proc.output()[-2000:]


def test_worker_started_before_redis_waits_for_it(state: dict[str, Any], tmp_path: Path) -> None:
    """`kashgar worker` started while Redis is down waits for it (it exited with a traceback),
    then runs the jobs accepted once Redis is up."""
    redis_server = RedisServer(log_dir=str(tmp_path))  # its port chosen, not started yet
    env = dict(ENV, KASHGAR_REDIS_URL=redis_server.url)
    with Worker(redis_server.url, env=env, log_dir=str(tmp_path)) as worker:
        assert worker.proc is not None
        wait_until(lambda: "waiting for it" in worker.proc.output(), 30.0, what="the worker to wait")  # type: ignore[union-attr]
        assert worker.proc.alive(), worker.proc.output()[-2000:]
        with redis_server, Gunicorn(env=env, workers=1, log_dir=str(tmp_path)) as web:
            body = {"state": state, "iterations": 60, "mode": "async"}
            status, accepted = http_json("POST", web.url + "/suggest", body)
            assert status == 202, accepted
            job = poll(web.url + accepted["status_url"], lambda j: j["status"] in TERMINAL)
            assert job["status"] == "finished", job
            assert worker.proc.alive(), worker.proc.output()[-2000:]


def test_worker_waiting_for_redis_stops_on_sigterm(tmp_path: Path) -> None:
    """A worker waiting for Redis ends at once on SIGTERM, as a supervisor expects."""
    import signal

    url = RedisServer(log_dir=str(tmp_path)).url  # never started
    worker = Worker(url, env=dict(ENV), log_dir=str(tmp_path)).start()
    proc = worker.proc
    assert proc is not None
    try:
        wait_until(lambda: "waiting for it" in proc.output(), 30.0, what="the worker to wait")
        t0 = time.monotonic()
        proc.popen.send_signal(signal.SIGTERM)
        assert proc.popen.wait(10) == 0, proc.output()[-2000:]
        assert time.monotonic() - t0 < 5.0
    finally:
        worker.stop()


def test_wait_for_redis(tmp_path: Path) -> None:
    """The worker's reconnect wait: False when Redis stays away (bounded), True once it is back."""
    import redis as redis_lib

    from service.jobs.worker import wait_for_redis

    server = RedisServer(log_dir=str(tmp_path))
    conn = redis_lib.Redis(host="127.0.0.1", port=server.port, socket_connect_timeout=0.5)
    t0 = time.monotonic()
    assert wait_for_redis(conn, 1.5) is False
    assert time.monotonic() - t0 < 10.0  # bounded (generous: the machine may be busy)
    with server:
        assert wait_for_redis(conn, 5.0) is True


def test_a_backlog_longer_than_the_heartbeat_timeout_retries_nothing(tmp_path: Path) -> None:
    """Parts that wait behind busy workers, or that a worker has taken but not yet started, are
    not lost: no retry, every job finished (they were retried, and some jobs failed)."""
    from loadtests.backlog import run

    out = run(jobs=12, parts=16, workers=2, heartbeat_timeout=2.0, log_dir=str(tmp_path))
    assert out["outcomes"] == {"finished": 12} and out["part_retries"] == 0, out
    assert out["backlog_s"] > 2.0, out  # the backlog did outlast the heartbeat timeout
