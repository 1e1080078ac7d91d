"""One client cannot take the service down, on the real stack (gunicorn from `kashgar serve`,
`redis-server`, `kashgar worker`): admission in search-seconds and request rates (429 naming the
limit, Retry-After), API keys, clients served in turn, cancel emptying the queue, restarts that
keep jobs and their attempts. Clients are told apart by X-Forwarded-For from a trusted proxy."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

import engine_ext
from lab.serving import Gunicorn, Worker, free_port, http_json, stack, wait_until

pytestmark = pytest.mark.e2e

ENV = {
    "KASHGAR_HEARTBEAT_INTERVAL": "0.2",
    "KASHGAR_HEARTBEAT_TIMEOUT": "3.0",
    "KASHGAR_MAX_ATTEMPTS": "2",
    "KASHGAR_LOG_LEVEL": "WARNING",
    "KASHGAR_TRUSTED_PROXIES": "1",
}
TERMINAL = ("finished", "failed", "cancelled")


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    return dict(engine_ext.new_game(players=2, seed=5).to_json(observer=0))


def as_client(name: str) -> dict[str, str]:
    return {"X-Forwarded-For": name}


def post(url: str, body: dict[str, Any], client: str, seen: dict[str, str] | None = None) -> tuple[int, Any]:
    return http_json("POST", url + "/suggest", body, headers=as_client(client), response_headers=seen)


def poll(url: str, until: Any, timeout: float = 60.0) -> dict[str, Any]:
    def check() -> Any:
        status, body = http_json("GET", url)
        assert status == 200, body
        return body if until(body) else None

    return wait_until(check, timeout, interval=0.1, what=url)  # type: ignore[no-any-return]


def overtaken_by(backlog: list[dict[str, Any]], job: dict[str, Any]) -> int:
    """How many of the backlog's jobs finished between `job`'s acceptance and its end."""
    return sum(1 for b in backlog if b["finished_at"] and job["created_at"] < b["finished_at"] < job["finished_at"])


# ------------------------------------------------------------------------------ embedded


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    logs = str(tmp_path_factory.mktemp("admission-logs"))
    env = dict(ENV, KASHGAR_ASYNC_CLIENT_SECONDS="6.0")
    with Gunicorn(env=env, workers=1, log_dir=logs) as web:
        yield web


def test_a_flood_gets_429_while_another_client_is_served_first(embedded: Gunicorn, state: dict[str, Any]) -> None:
    """One client's async jobs past its 6 search-seconds get 429 (the limit named, Retry-After);
    another client's job, sent after the flood, runs after at most the part that was running."""
    url = embedded.url
    job = {"state": state, "time_ms": 2000, "parallel": 1, "mode": "async"}
    accepted: list[str] = []
    refused: list[tuple[dict[str, Any], dict[str, str]]] = []
    statuses: list[int] = []
    # 3 x 2 s fit in 6 s, a 4th not. The jobs run one at a time meanwhile, each that finishes while
    # the flood is sent freeing its 2 s (how many are refused depends on how fast the machine
    # answers). The flood is 12 requests and ends on a 429, when the other client comes: the
    # flood's 6 s are then held, one part running and two waiting, which served first-come would
    # run before the other client's.
    while len(statuses) < 12 or statuses[-1] != 429:
        assert len(statuses) < 40, statuses
        headers: dict[str, str] = {}
        status, body = post(url, job, "10.0.0.1", headers)
        statuses.append(status)
        if status == 202:
            accepted.append(body["status_url"])
        else:
            assert status == 429, body
            refused.append((body, headers))
    assert statuses[:3] == [202] * 3 and statuses[-1] == 429, statuses
    body, headers = refused[0]
    assert body["error"] == "async_client_limit" and "retry" in body["message"], body
    assert int(headers["Retry-After"]) >= 1
    status, other = post(url, {"state": state, "iterations": 100, "mode": "async"}, "10.0.0.2")
    assert status == 202, other
    done = poll(url + other["status_url"], lambda j: j["status"] in TERMINAL)
    assert done["status"] == "finished", done
    backlog = [poll(url + u, lambda j: j["status"] in TERMINAL) for u in accepted]
    # the part running when it came ends before it; one more may have been taken in the moment
    # between its acceptance being stamped and its part being queued; first-come would be three
    assert overtaken_by(backlog, done) <= 2, (done, backlog)
    # the backlog done, its search-seconds are free again
    assert post(url, job, "10.0.0.1")[0] == 202


def test_health_is_never_limited(tmp_path: Path) -> None:
    """Past its rate (10 a minute), a client gets 429 `rate_limit`; /healthz, /readyz and
    /metrics answer it all the same."""
    with Gunicorn(env=dict(ENV, KASHGAR_RATE_LIMIT="10/minute"), workers=1, log_dir=str(tmp_path)) as web:
        url = web.url
        statuses = [http_json("GET", url + "/levels", headers=as_client("10.0.0.3"))[0] for _ in range(12)]
        assert statuses == [200] * 10 + [429] * 2, statuses
        headers: dict[str, str] = {}
        status, body = http_json("GET", url + "/levels", headers=as_client("10.0.0.3"), response_headers=headers)
        assert status == 429 and body["error"] == "rate_limit" and int(headers["Retry-After"]) >= 1, body
        for path in ("/healthz", "/readyz", "/metrics") * 10:
            assert http_json("GET", url + path, headers=as_client("10.0.0.3"))[0] == 200, path
        assert http_json("GET", url + "/levels", headers=as_client("10.0.0.4"))[0] == 200  # another client


def test_api_keys(state: dict[str, Any], tmp_path: Path) -> None:
    """With a keys file: no key 401 (WWW-Authenticate: Bearer), an unknown one 403, a known one
    200, each key with its own limits; health and metrics need none."""
    keys = tmp_path / "keys.toml"
    keys.write_text('[[keys]]\nname = "alice"\nkey = "alice-key"\n\n'
                    '[[keys]]\nname = "bob"\nkey = "bob-key"\nasync_seconds = 4.5\n')
    env = dict(ENV, KASHGAR_API_KEYS_FILE=str(keys))
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path)) as web:
        headers: dict[str, str] = {}
        status, body = http_json("GET", web.url + "/levels", response_headers=headers)
        assert status == 401 and body["error"] == "unauthorized" and headers["WWW-Authenticate"].startswith("Bearer")
        status, body = http_json("GET", web.url + "/levels", headers={"Authorization": "Bearer nobody"})
        assert status == 403 and body["error"] == "forbidden", body
        assert http_json("GET", web.url + "/levels", headers={"Authorization": "Bearer alice-key"})[0] == 200
        for path in ("/healthz", "/readyz", "/metrics"):
            assert http_json("GET", web.url + path)[0] == 200, path
        status, spec = http_json("GET", web.url + "/openapi.json", headers={"Authorization": "Bearer bob-key"})
        assert spec["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
        assert spec["paths"]["/suggest"]["post"]["security"] == [{"bearer": []}]
        # 3 s jobs: the first is still in flight when the second comes, however slow a loaded machine
        job = {"state": state, "time_ms": 3000, "parallel": 1, "mode": "async"}
        bob = {"Authorization": "Bearer bob-key"}
        assert http_json("POST", web.url + "/suggest", job, headers=bob)[0] == 202
        status, body = http_json("POST", web.url + "/suggest", job, headers=bob)  # 6 s in flight > 4.5
        assert status == 429 and body["error"] == "async_client_limit", body
        alice = {"Authorization": "Bearer alice-key"}
        assert http_json("POST", web.url + "/suggest", job, headers=alice)[0] == 202  # the default limit


def test_two_restarts_during_a_long_job_keep_its_attempts(state: dict[str, Any], tmp_path: Path) -> None:
    """`kashgar serve` stopped (SIGTERM) twice while a job runs: each time the running part goes
    back to the queue with its attempt, the next server (same data directory) runs it, and the
    job finishes on its first attempt, with no retry on record. (Two web processes: one searches,
    the other answers the polls at once. At one address: the default job store is the address's.)"""
    env = dict(ENV, KASHGAR_DATA_DIR=str(tmp_path / "data"))
    port = free_port()
    body = {"state": state, "time_ms": 4000, "parallel": 1, "seed": 4, "mode": "async"}
    with Gunicorn(env=env, workers=2, port=port, log_dir=str(tmp_path)) as web:
        status, small = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 50, "mode": "async"})
        poll(web.url + small["status_url"], lambda j: j["status"] == "finished")
        status, accepted = http_json("POST", web.url + "/suggest", body)
        assert status == 202, accepted
        path = accepted["status_url"]
        poll(web.url + path, lambda j: j["parts"][0]["status"] == "started", timeout=30)
    for _ in range(2):
        with Gunicorn(env=env, workers=2, port=port, log_dir=str(tmp_path)) as web:
            status, job = http_json("GET", web.url + path)
            assert status == 200 and job["status"] in ("queued", "started"), job  # handed back, not finished
            assert job["parts"][0]["attempt"] == 1 and not job["parts"][0]["history"], job
            poll(web.url + path, lambda j: j["parts"][0]["status"] == "started", timeout=30)
            time.sleep(0.5)
    with Gunicorn(env=env, workers=2, port=port, log_dir=str(tmp_path)) as web:
        job = poll(web.url + path, lambda j: j["status"] in TERMINAL, timeout=60)
        assert job["status"] == "finished" and job["parts"][0]["attempt"] == 1 and not job["retried"], job
        assert job["result"]["iterations"] > 0
        status, earlier = http_json("GET", web.url + small["status_url"])
        assert status == 200 and earlier["status"] == "finished", earlier  # results outlive restarts


def test_sigterm_lets_a_running_sync_search_answer(state: dict[str, Any], tmp_path: Path) -> None:
    """SIGTERM to `kashgar serve` while a synchronous search runs: the server stops accepting,
    and the search still answers 200 before the server exits."""
    import signal
    import threading

    web = Gunicorn(env=dict(ENV), workers=1, log_dir=str(tmp_path)).start()
    answers: list[tuple[int, Any]] = []
    body = {"state": state, "time_ms": 1500, "mode": "sync"}
    asking = threading.Thread(target=lambda: answers.append(http_json("POST", web.url + "/suggest", body)))
    try:
        asking.start()
        time.sleep(0.7)  # the search is running
        assert web.proc is not None
        web.proc.popen.send_signal(signal.SIGTERM)
        asking.join(20)
        assert answers and answers[0][0] == 200 and answers[0][1]["iterations"] > 0, answers
        assert web.proc.popen.wait(20) == 0
    finally:
        web.stop()


# --------------------------------------------------------------------------------- Redis


@pytest.fixture(scope="module")
def redis_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    logs = str(tmp_path_factory.mktemp("admission-redis-logs"))
    with stack(workers=1, web_workers=2, env=ENV, log_dir=logs) as s:
        yield s


def fair_depth(redis_url: str) -> int:
    """Parts waiting: in the RQ queue and in the clients' lists (the test env's names)."""
    conn = redis.Redis.from_url(redis_url)
    return (int(conn.llen("rq:queue:kashgar")) + int(conn.llen("rq:queue:kashgar-express"))
            + int(conn.hlen("kashgar:fair:parts")))


def test_redis_a_backlog_does_not_delay_another_client(redis_stack: Any, state: dict[str, Any]) -> None:
    redis_server, web, _ = redis_stack
    job = {"state": state, "time_ms": 300, "parallel": 1, "mode": "async"}
    backlog = [post(web.url, job, "10.1.0.1")[1]["status_url"] for _ in range(10)]
    poll(web.url + backlog[0], lambda j: j["status"] == "started", timeout=30)
    status, other = post(web.url, {"state": state, "iterations": 100, "mode": "async"}, "10.1.0.2")
    assert status == 202, other
    done = poll(web.url + other["status_url"], lambda j: j["status"] in TERMINAL)
    assert done["status"] == "finished", done
    finished = [poll(web.url + u, lambda j: j["status"] in TERMINAL) for u in backlog]
    assert overtaken_by(finished, done) <= 1, (done, finished)
    assert fair_depth(redis_server.url) == 0


def test_redis_a_short_job_waits_for_no_long_part(tmp_path: Path, state: dict[str, Any]) -> None:
    """Client A's long parts hold the one worker (and its second waits); client B's short job runs on
    the express worker (`kashgar worker --express`) at once, and A's waiting part stays queued: the
    express worker takes no long part."""
    with stack(workers=1, web_workers=1, env=ENV, log_dir=str(tmp_path), express_workers=1) as (_, web, _w):
        long = {"state": state, "time_ms": 60_000, "parallel": 1, "mode": "async"}
        a = [post(web.url, long, "10.4.0.1")[1]["status_url"] for _ in range(2)]
        poll(web.url + a[0], lambda j: j["status"] == "started", timeout=30)
        t0 = time.monotonic()
        status, b = post(web.url, {"state": state, "iterations": 100, "mode": "async"}, "10.4.0.2")
        assert status == 202, b
        done = poll(web.url + b["status_url"], lambda j: j["status"] in TERMINAL, timeout=30)
        took = time.monotonic() - t0
        assert done["status"] == "finished" and took < 5.0, (took, done)
        assert http_json("GET", web.url + a[1])[1]["status"] == "queued"
        for u in a:
            http_json("DELETE", web.url + u)


def test_redis_cancelling_500_queued_jobs_empties_the_queue_at_once(redis_stack: Any,
                                                                     state: dict[str, Any]) -> None:
    redis_server, web, _ = redis_stack
    busy = post(web.url, {"state": state, "time_ms": 60_000, "parallel": 1, "mode": "async"}, "10.2.0.1")[1]
    poll(web.url + busy["status_url"], lambda j: j["status"] == "started", timeout=30)
    job = {"state": state, "iterations": 100, "parallel": 1, "mode": "async"}
    urls = []
    for _ in range(500):
        status, body = post(web.url, job, "10.2.0.1")
        assert status == 202, body
        urls.append(body["status_url"])
    assert fair_depth(redis_server.url) == 500
    for u in urls:
        status, body = http_json("DELETE", web.url + u)
        assert status == 200 and body["status"] == "cancelled", body
    assert fair_depth(redis_server.url) == 0  # at once: no worker has had to skip them
    status, other = post(web.url, {"state": state, "iterations": 100, "mode": "async"}, "10.2.0.2")
    assert http_json("DELETE", web.url + busy["status_url"])[0] == 200
    done = poll(web.url + other["status_url"], lambda j: j["status"] in TERMINAL)
    assert done["status"] == "finished", done


def test_redis_warm_shutdown_hands_the_part_back(redis_stack: Any, state: dict[str, Any], tmp_path: Path) -> None:
    """SIGTERM to `kashgar worker` mid-part: the part goes back to the queue with its attempt and
    another worker runs it to the end."""
    redis_server, web, workers = redis_stack
    status, accepted = post(web.url, {"state": state, "time_ms": 2500, "parallel": 1, "mode": "async"}, "10.3.0.1")
    url = web.url + accepted["status_url"]
    poll(url, lambda j: j["parts"][0]["status"] == "started", timeout=30)
    time.sleep(0.5)
    workers[0].stop()  # SIGTERM: RQ's warm shutdown
    job = poll(url, lambda j: j["parts"][0]["status"] == "queued", timeout=15)
    assert job["parts"][0]["attempt"] == 1 and not job["parts"][0]["history"], job
    env = dict(ENV, KASHGAR_REDIS_URL=redis_server.url)
    workers.append(Worker(redis_server.url, env=env, log_dir=str(tmp_path)).start())
    job = poll(url, lambda j: j["status"] in TERMINAL, timeout=60)
    assert job["status"] == "finished" and job["parts"][0]["attempt"] == 1 and not job["retried"], job
