"""A job is its client's: with API keys, another key's GET /jobs/<id>, its events and its DELETE
answer the 404 of an unknown id; a client is its whole key (two keys that begin alike are two
clients, for their Idempotency-Keys and their limits); an operator key sees every job. A
server's default job store is its own, its owner's only. The event streams of a process are
counted as they are admitted.

The embedded queue's threads are stopped in most of these apps (`idle_app`): the jobs stay
queued, as behind a busy server, and nothing searches."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from lab.serving import RedisServer
from service import create_app
from service.api import jobs as jobs_api
from service.clients import load_keys
from service.config import Settings
from tests.builders import bot_record
from tests.service_helpers import serve_app

KEY_A, KEY_B = "keyA1234567", "keyB1234567"
ALPHA, BRAVO = "teamkey-alpha-1111", "teamkey-bravo-2222"  # one 6-character prefix, two clients
LONG = {"time_ms": 60_000, "parallel": 1, "mode": "async", "seed": 1}


def idle_app(**config: Any) -> Any:
    """An app whose embedded threads take no part: its jobs wait in the queue."""
    app = create_app({"TESTING": True, "log_level": "WARNING", **config})
    app.extensions["kashgar_jobs"].queue.stop(timeout=1.0)
    return app


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    app = create_app({"TESTING": True, "log_level": "WARNING"})
    return dict(app.test_client().post("/games", json={"players": 2, "seed": 3, "observer": 0}).get_json()["state"])


def same_as_unknown(c: Any, method: str, path: str, job_id: str, key: str) -> None:
    """`method path` of job `job_id` with `key` is answered as for an id no job has: 404, and the
    same body but for the id and the request's own id."""
    unknown = "f" * 32
    got = c.open(path.format(job_id), method=method, headers=bearer(key))
    ref = c.open(path.format(unknown), method=method, headers=bearer(key))
    assert got.status_code == ref.status_code == 404, (got.get_json(), ref.get_json())

    def shape(body: dict[str, Any], job: str) -> str:
        return json.dumps({k: v for k, v in body.items() if k != "request_id"}).replace(job, "<id>")

    assert shape(got.get_json(), job_id) == shape(ref.get_json(), unknown), got.get_json()
    assert got.headers["Content-Type"] == ref.headers["Content-Type"]


def test_another_key_gets_the_404_of_an_unknown_job(state: dict[str, Any]) -> None:
    """Key B cannot read, follow nor cancel key A's long /suggest and review: each is a 404 exactly
    as for an unknown id. Key A still has both, uncancelled."""
    app = idle_app(api_keys=f"{KEY_A},{KEY_B}")
    c = app.test_client()
    search = c.post("/suggest", json={"state": state, **LONG}, headers=bearer(KEY_A))
    reviewed = c.post("/reviews", json={"record": bot_record(7, moves=12), "level": "novice"}, headers=bearer(KEY_A))
    assert search.status_code == reviewed.status_code == 202, (search.get_json(), reviewed.get_json())
    for job_id in (search.get_json()["job_id"], reviewed.get_json()["job_id"]):
        for method, path in (("GET", "/jobs/{}"), ("GET", "/jobs/{}/events"), ("DELETE", "/jobs/{}")):
            same_as_unknown(c, method, path, job_id, KEY_B)
        own = c.get(f"/jobs/{job_id}", headers=bearer(KEY_A))
        assert own.status_code == 200 and own.get_json()["status"] == "queued", own.get_json()
        stream = c.get(f"/jobs/{job_id}/events", headers=bearer(KEY_A), buffered=False)
        assert stream.status_code == 200 and stream.mimetype == "text/event-stream"
        stream.close()
        assert c.delete(f"/jobs/{job_id}", headers=bearer(KEY_A)).get_json()["status"] == "cancelled"


def test_an_operator_key_sees_and_cancels_every_job(state: dict[str, Any], tmp_path: Path) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[[keys]]\nname = "alice"\nkey = "{KEY_A}"\n\n[[keys]]\nname = "bob"\nkey = "{KEY_B}"\n\n'
                    '[[keys]]\nname = "ops"\nkey = "ops-key-0001"\noperator = true\n')
    app = idle_app(api_keys_file=str(keys))
    c = app.test_client()
    job_id = c.post("/suggest", json={"state": state, **LONG}, headers=bearer(KEY_A)).get_json()["job_id"]
    same_as_unknown(c, "GET", "/jobs/{}", job_id, KEY_B)
    seen = c.get(f"/jobs/{job_id}", headers=bearer("ops-key-0001"))
    assert seen.status_code == 200 and seen.get_json()["job_id"] == job_id
    stream = c.get(f"/jobs/{job_id}/events", headers=bearer("ops-key-0001"), buffered=False)
    assert stream.status_code == 200
    stream.close()
    gone = c.delete(f"/jobs/{job_id}", headers=bearer("ops-key-0001"))
    assert gone.status_code == 200 and gone.get_json()["status"] == "cancelled"
    assert c.get(f"/jobs/{job_id}", headers=bearer(KEY_A)).get_json()["status"] == "cancelled"


def test_without_keys_the_job_id_is_what_lets_one_in(state: dict[str, Any]) -> None:
    """No keys: another address that has the id reads and cancels the job."""
    app = idle_app()
    c = app.test_client()
    r = c.post("/suggest", json={"state": state, **LONG}, environ_base={"REMOTE_ADDR": "10.7.0.1"})
    other = {"REMOTE_ADDR": "10.7.0.2"}
    assert c.get(r.headers["Location"], environ_base=other).status_code == 200
    assert c.delete(r.headers["Location"], environ_base=other).get_json()["status"] == "cancelled"


def test_keys_that_begin_alike_are_two_clients(state: dict[str, Any]) -> None:
    """`teamkey-alpha-1111` and `teamkey-bravo-2222` were one client (`key:teamke`): bravo sending
    alpha's Idempotency-Key got alpha's job, and alpha's work put bravo over its limit."""
    keys = load_keys(Settings.from_env({}, {"api_keys": f"{ALPHA},{BRAVO}"}))
    assert keys[ALPHA].id != keys[BRAVO].id
    assert all("teamke" not in k.id and k.id.startswith("key:") for k in keys.values()), keys
    app = idle_app(api_keys=f"{ALPHA},{BRAVO}", async_client_seconds=100)
    c = app.test_client()
    body = {"state": state, **LONG}  # 60 search-seconds: one fits a client's 100, two do not
    headers = {**bearer(ALPHA), "Idempotency-Key": "nightly-1"}
    first = c.post("/suggest", json=body, headers=headers)
    theirs = c.post("/suggest", json=body, headers={**bearer(BRAVO), "Idempotency-Key": "nightly-1"})
    assert first.status_code == theirs.status_code == 202, (first.get_json(), theirs.get_json())
    assert theirs.get_json()["job_id"] != first.get_json()["job_id"] and "Idempotent-Replayed" not in theirs.headers
    again = c.post("/suggest", json=body, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true" and again.get_json()["job_id"] == first.get_json()["job_id"]
    over = c.post("/suggest", json=body, headers=bearer(ALPHA))
    err = over.get_json()
    assert over.status_code == 429 and err["error"] == "async_client_limit", err
    for key, r in ((ALPHA, first), (BRAVO, theirs)):
        assert c.delete(r.headers["Location"], headers=bearer(key)).status_code == 200
    rated = create_app({"TESTING": True, "log_level": "WARNING", "api_keys": f"{ALPHA},{BRAVO}",
                        "rate_limit": "1/minute"}).test_client()
    assert rated.get("/levels", headers=bearer(ALPHA)).status_code == 200
    over = rated.get("/levels", headers=bearer(ALPHA))
    err = over.get_json()
    assert over.status_code == 429 and err["error"] == "rate_limit" and keys[ALPHA].id in err["message"], err
    assert "teamke" not in err["message"]
    assert rated.get("/levels", headers=bearer(BRAVO)).status_code == 200  # a rate of its own


def test_a_keys_file_with_two_keys_of_one_name_is_refused(tmp_path: Path) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text('[[keys]]\nname = "team"\nkey = "k-one-11111"\n\n[[keys]]\nname = "team"\nkey = "k-two-22222"\n')
    with pytest.raises(ValueError, match=r"keys\[1\]: the client 'key:team' of .*keys\[0\] again") as err:
        load_keys(Settings.from_env({}, {"api_keys_file": str(keys)}))
    assert "k-one" not in str(err.value) and "k-two" not in str(err.value)
    keys.write_text('[[keys]]\nkey = "k-one-11111"\noperator = "yes"\n')
    with pytest.raises(ValueError, match=r"keys\[0\]\.operator must be true or false"):
        load_keys(Settings.from_env({}, {"api_keys_file": str(keys)}))
    with pytest.raises(ValueError, match="KASHGAR_API_KEYS key 2: the same key as KASHGAR_API_KEYS key 1"):
        load_keys(Settings.from_env({}, {"api_keys": "k-one-11111,k-one-11111"}))


def test_a_server_without_keys_does_not_serve_a_key_s_job(state: dict[str, Any], tmp_path: Path) -> None:
    """Two apps on one job store (one KASHGAR_JOBS_DB named for both): the one without keys
    answers 404 for the keyed one's job, and the keyed one 404 for a key that does not own it."""
    db = str(tmp_path / "shared.sqlite")
    keyed = idle_app(api_keys=KEY_A, jobs_db=db)
    job_id = keyed.test_client().post("/suggest", json={"state": state, **LONG},
                                      headers=bearer(KEY_A)).get_json()["job_id"]
    open_app = idle_app(jobs_db=db)
    assert open_app.test_client().get(f"/jobs/{job_id}").status_code == 404
    assert open_app.test_client().delete(f"/jobs/{job_id}").status_code == 404
    assert keyed.test_client().delete(f"/jobs/{job_id}", headers=bearer(KEY_A)).status_code == 200


# ------------------------------------------------------------------------- the default job store


@pytest.fixture()
def gunicorn_conf(tmp_path: Path) -> Any:
    """service/gunicorn_conf.py (loading it prepares a server's environment: here, one in
    `tmp_path`, for this test only)."""
    env = {"KASHGAR_DATA_DIR": str(tmp_path / "data"), "KASHGAR_JOBS_DB": "", "KASHGAR_REDIS_URL": "",
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics"), "KASHGAR_TABLE_KEY": "",
           "KASHGAR_SERVER_TEMP_DIRS": "", "KASHGAR_BIND": ""}
    with mock.patch.dict(os.environ, env):
        from service import gunicorn_conf

        yield gunicorn_conf


def test_two_servers_default_job_stores_differ_and_are_their_owner_s(gunicorn_conf: Any, tmp_path: Path) -> None:
    """`kashgar serve` at 127.0.0.1:8000 and at 127.0.0.1:8001, on one data directory: each its
    own job store (a job of one is unknown to the other), made readable by its owner only."""
    data = tmp_path / "data"
    apps = []
    stores = []
    for bind in ("127.0.0.1:8000", "127.0.0.1:8001"):
        os.environ.update(KASHGAR_BIND=bind, KASHGAR_JOBS_DB="", KASHGAR_SERVER_TEMP_DIRS="")
        gunicorn_conf.prepare_environment()
        stores.append(os.environ["KASHGAR_JOBS_DB"])
        apps.append(idle_app())
    assert [Path(s).name for s in stores] == ["jobs-127.0.0.1-8000.sqlite", "jobs-127.0.0.1-8001.sqlite"]
    assert all(Path(s).parent == data for s in stores)
    first, second = (a.test_client() for a in apps)
    game = first.post("/games", json={"players": 2, "seed": 3, "observer": 0}).get_json()["state"]
    made = first.post("/suggest", json={"state": game, **LONG})
    assert made.status_code == 202, made.get_json()
    assert second.get(made.headers["Location"]).status_code == 404
    assert first.delete(made.headers["Location"]).status_code == 200
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for s in stores:
        assert stat.S_IMODE(os.stat(s).st_mode) == 0o600, s
    for extra in data.iterdir():  # SQLite's -wal and -shm files: the database file's mode
        assert stat.S_IMODE(extra.stat().st_mode) == 0o600, extra


@pytest.mark.parametrize(("bind", "name"), [
    ("0.0.0.0:8000", "jobs-0.0.0.0-8000.sqlite"),
    ("[::1]:9000", "jobs-__1-9000.sqlite"),
    ("unix:/run/kashgar.sock", "jobs-unix-_run_kashgar.sock.sqlite"),
])
def test_the_default_store_is_named_for_the_address(gunicorn_conf: Any, bind: str, name: str) -> None:
    assert gunicorn_conf.default_jobs_db("/data", bind) == f"/data/{name}"


def test_a_store_named_by_kashgar_jobs_db_is_made_its_owner_s(tmp_path: Path) -> None:
    path = tmp_path / "explicit.sqlite"
    idle_app(jobs_db=str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# ------------------------------------------------------------------------- event streams


def test_thirty_streams_opened_at_once_admit_sixteen(state: dict[str, Any]) -> None:
    """30 opens of one job's events at the same moment on one process: MAX_STREAMS (16) are
    served, the others 503 `too_many_streams` (the check came before the count, which the stream
    itself made: 18 and 21 got through); all given back once the streams end."""
    app = idle_app(api_keys=KEY_A)

    @app.after_request
    def _a_loaded_process(response: Any) -> Any:  # time between a stream's admission and its first byte
        if response.mimetype == "text/event-stream":
            time.sleep(0.3)
        return response

    with serve_app(app=app) as url:
        req = urllib.request.Request(url + "/suggest", data=json.dumps({"state": state, **LONG}).encode(),
                                     headers={"Content-Type": "application/json", **bearer(KEY_A)}, method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            location = resp.headers["Location"]
        before = jobs_api.open_streams()
        start = threading.Barrier(30)
        lock = threading.Lock()
        served: list[Any] = []
        refused: list[tuple[int, dict[str, Any]]] = []

        def open_one() -> None:
            start.wait()
            try:
                stream = urllib.request.urlopen(urllib.request.Request(url + location + "/events",
                                                                       headers=bearer(KEY_A)), timeout=30)
                stream.readline()  # its first line: the stream is running
                with lock:
                    served.append(stream)
            except urllib.error.HTTPError as err:
                with lock:
                    refused.append((err.code, json.loads(err.read())))

        threads = [threading.Thread(target=open_one) for _ in range(30)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        try:
            assert len(served) == jobs_api.MAX_STREAMS - before, (len(served), refused)
            assert len(refused) == 30 - len(served)
            assert all(code == 503 and body["error"] == "too_many_streams" for code, body in refused), refused
            assert jobs_api.open_streams() == jobs_api.MAX_STREAMS
        finally:
            cancel = urllib.request.Request(url + location, method="DELETE", headers=bearer(KEY_A))
            urllib.request.urlopen(cancel, timeout=30).close()
            for stream in served:  # each ends with the job's `end`
                assert b"event: end" in stream.read()
                stream.close()
        deadline = time.monotonic() + 10
        while jobs_api.open_streams() > before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jobs_api.open_streams() == before


def test_a_head_of_the_events_holds_no_stream(state: dict[str, Any]) -> None:
    app = idle_app()
    c = app.test_client()
    location = c.post("/suggest", json={"state": state, **LONG}).headers["Location"]
    before = jobs_api.open_streams()
    r = c.head(location + "/events")
    assert r.status_code == 200 and r.mimetype == "text/event-stream" and jobs_api.open_streams() == before
    c.delete(location)


# ------------------------------------------------------------------------- Redis


@pytest.fixture(scope="module")
def redis_server() -> Any:
    with RedisServer() as server:
        yield server


def test_on_redis_another_key_gets_the_404_of_an_unknown_job(state: dict[str, Any], redis_server: RedisServer,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The same through the Redis queue (no worker listens: the job waits)."""
    import redis

    from tests.service.jobs_helpers import ENV

    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    redis.Redis.from_url(redis_server.url).flushall()
    app = create_app({"TESTING": True, "log_level": "WARNING", "redis_url": redis_server.url,
                      "api_keys": f"{KEY_A},{KEY_B}"})
    c = app.test_client()
    r = c.post("/suggest", json={"state": state, **LONG}, headers=bearer(KEY_A))
    assert r.status_code == 202 and r.get_json()["backend"] == "redis", r.get_json()
    job_id = r.get_json()["job_id"]
    for method, path in (("GET", "/jobs/{}"), ("GET", "/jobs/{}/events"), ("DELETE", "/jobs/{}")):
        same_as_unknown(c, method, path, job_id, KEY_B)
    assert c.get(f"/jobs/{job_id}", headers=bearer(KEY_A)).get_json()["status"] == "queued"
    assert c.delete(f"/jobs/{job_id}", headers=bearer(KEY_A)).get_json()["status"] == "cancelled"
