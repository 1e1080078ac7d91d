"""Game reviews (`POST /reviews`, service/review.py): a job of the same queue, each decision searched
from the seat's own view, its progress, its events, bad records refused; on the embedded queue and
on a real Redis with RQ workers."""

from __future__ import annotations

import copy
import json
import random
import threading
import time
import urllib.request
from typing import Any

import pytest
import redis

import engine_ext
from engine_ext import record as records
from lab.serving import RedisServer
from service import create_app, review
from service.config import Settings
from service.jobs import build_manager
from service.jobs.model import JobStatus, job_status
from tests.builders import bot_record
from tests.service.jobs_helpers import ENV, burst
from tests.service_helpers import REFUSED_RECORDS, serve_app

LEVEL = "advanced"  # a real search on every decision, cheap enough for tests




@pytest.fixture(scope="module")
def record() -> dict[str, Any]:
    return bot_record(21, moves=40)


def _app(**config: Any) -> Any:
    return create_app({"TESTING": True, "log_level": "WARNING", **config})


def _wait(client: Any, url: str, timeout: float = 120.0) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        body = client.get(url).get_json()
        if body["status"] in ("finished", "failed", "cancelled") and (body["result"] or body["status"] == "failed"):
            return body  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"the review did not finish: {body}")


def _events(url: str) -> list[tuple[str, Any]]:
    """The (event, data) of a job's event stream, up to its `end`."""
    events: list[tuple[str, Any]] = []
    name = ""
    with urllib.request.urlopen(url, timeout=120) as stream:
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        assert stream.headers["X-Accel-Buffering"] == "no"
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                events.append((name, json.loads(line[6:])))
                if name == "end":
                    break
    return events


# ------------------------------------------------------------------------- what is reviewed


def test_only_decisions_with_a_choice_of_the_asked_seats_are_reviewed(record: dict[str, Any]) -> None:
    spec = review.plan(record, LEVEL, [1], 0)
    steps = list(records.Replay(record))
    for step in steps:
        n = len(engine_ext.from_json(step.before).legal())
        assert (step.number in spec.moves) == (step.move["seat"] == 1 and n > 1), step.number
    assert spec.parts == -(-len(spec.moves) // review.DECISIONS_PER_PART)
    assert sorted(m for i in range(spec.parts) for m in spec.part_moves(i)) == spec.moves


def _permute_future(rec: dict[str, Any], upto: int) -> dict[str, Any]:
    """The record's first `upto` moves from an initial state whose decks differ below the cards those
    moves drew (the hidden future): the same game so far, another deck order from then on."""
    initial = dict(engine_ext.new_game(players=rec["players"], seed=rec["seed"]).to_json())
    first = {k: v for k, v in rec.items() if k != "result"}
    steps = list(records.Replay({**first, "moves": rec["moves"][:upto]}))
    later = steps[-1].before["decks"]
    changed = copy.deepcopy(initial)
    touched = 0
    for name, deck in initial["decks"].items():
        left = later[name]
        assert isinstance(deck, list) and isinstance(left, list)
        if len(left) > 1 and deck[len(deck) - len(left):] == left:  # drawn from the front: the rest is a suffix
            rest = left[:]
            random.Random(7).shuffle(rest)
            changed["decks"][name] = deck[:len(deck) - len(left)] + rest
            touched += rest != left
        elif len(left) > 1 and deck[:len(left)] == left:  # drawn from the end: the rest is a prefix
            rest = left[:]
            random.Random(7).shuffle(rest)
            changed["decks"][name] = rest + deck[len(left):]
            touched += rest != left
    assert touched, "no deck's hidden order changed"
    moves = [{"seat": m["seat"], "decision": m["decision"]} for m in rec["moves"][:upto]]
    return {"schema": records.SCHEMA_ID, "players": rec["players"], "seed": None, "initial_state": changed,
            "moves": moves}


def test_a_decision_s_review_does_not_change_with_the_record_s_hidden_future(record: dict[str, Any]) -> None:
    upto = 24
    other = _permute_future(record, upto)
    spec_a = review.plan(record, LEVEL, None, 3)
    spec_b = review.plan(other, LEVEL, None, 3)
    shared = [m for m in spec_a.moves if m <= upto]
    assert shared == spec_b.moves and len(shared) >= 10
    a = {d["move"]: d for i in range(spec_a.parts) for d in review.run_part(spec_a.to_dict(), i)["decisions"]}
    b = {d["move"]: d for i in range(spec_b.parts) for d in review.run_part(spec_b.to_dict(), i)["decisions"]}
    assert {m: a[m] for m in shared} == b
    # and the hidden future did differ: the full states before the last shared move are not alike
    before_a = list(records.Replay(record))[upto - 1].before["decks"]
    before_b = list(records.Replay(other))[upto - 1].before["decks"]
    assert before_a != before_b


def test_the_review_judges_each_decision_in_words(record: dict[str, Any]) -> None:
    spec = review.plan(record, LEVEL, None, 0)
    out = review.run_all(spec)
    assert out["reviewed"] == out["total"] == len(spec.moves) > 20
    for d in out["decisions"]:
        assert d["played"] == record["moves"][d["move"] - 1]["decision"]
        assert d["played_words"] and d["best_words"]
        assert d["loss"] is None or (d["loss"] >= 0 and d["class"] == review.judging.classify(d["loss"]))
        assert d["best_win_prob"] is not None and 0 <= d["best_win_prob"] <= 1
    seats = {s["seat"]: s for s in out["seats"]}
    assert set(seats) == {0, 1}
    assert sum(s["decisions"] for s in seats.values()) == out["reviewed"]
    # club (seat 0) plays better than novice (seat 1): it loses less
    assert seats[0]["mean_loss"] < seats[1]["mean_loss"]


# ------------------------------------------------------------------------- the API, embedded


def test_a_review_is_a_job_followed_to_its_end(record: dict[str, Any]) -> None:
    app = _app()
    c = app.test_client()
    r = c.post("/reviews", json={"record": record, "level": LEVEL, "seats": [0]})
    assert r.status_code == 202, r.get_json()
    body = r.get_json()
    assert r.headers["Location"] == body["status_url"] and body["parts"] >= 2
    done = _wait(c, r.headers["Location"])
    assert done["status"] == "finished" and done["kind"] == "review"
    spec = review.plan(record, LEVEL, [0], 0)
    assert done["progress"]["decisions_done"] == done["progress"]["decisions_total"] == len(spec.moves)
    assert done["request"] == {"level": LEVEL, "seats": [0], "seed": 0, "moves": len(spec.moves)}
    assert done["result"].pop("elapsed_ms") > 0
    assert done["result"] == review.run_all(spec)  # the job's review is the one done in one go


@pytest.mark.parametrize(("mutate", "status", "pointer"), [
    (lambda r: {**r, "moves": r["moves"][:5] + [{"seat": r["moves"][5]["seat"], "decision": "fulfil 40"}]},
     422, "/record/moves/5"),
    (lambda r: {**r, "moves": [r["moves"][1]] + r["moves"]}, 422, "/record/moves/0"),
    (lambda r: {}, 422, "/record"),
    (lambda r: {**r, "moves": r["moves"] * 20}, 413, "/record/moves"),
])
def test_a_record_that_does_not_replay_is_refused_naming_the_move(record: dict[str, Any], mutate: Any, status: int,
                                                                  pointer: str) -> None:
    r = _app().test_client().post("/reviews", json={"record": mutate(record), "level": LEVEL})
    assert r.status_code == status, r.get_json()
    assert r.get_json()["pointer"].startswith(pointer)


@pytest.mark.parametrize(("mutate", "error", "pointer"), REFUSED_RECORDS)
def test_a_refused_record_is_named_by_its_field(record: dict[str, Any], mutate: Any, error: str,
                                                pointer: str) -> None:
    """Not a record (`invalid_record`) or one that does not replay: the pointer names the field."""
    r = _app().test_client().post("/reviews", json={"record": mutate(record), "level": LEVEL})
    body = r.get_json()
    assert r.status_code == 422 and body["error"] == error, body
    assert body["pointer"] == pointer or body["pointer"].startswith(pointer + "/"), body


def test_an_unknown_level_or_seat_is_refused(record: dict[str, Any]) -> None:
    c = _app().test_client()
    assert c.post("/reviews", json={"record": record, "level": "nobody"}).get_json()["pointer"] == "/level"
    r = c.post("/reviews", json={"record": record, "seats": [0, 3], "level": LEVEL})
    assert r.status_code == 422 and r.get_json()["pointer"] == "/seats/1"


def test_a_review_past_the_client_s_allowance_is_429(record: dict[str, Any]) -> None:
    r = _app(async_client_seconds=1.0).test_client().post("/reviews", json={"record": record, "level": "master"})
    assert r.status_code == 429 and r.get_json()["error"] == "async_client_limit"
    assert int(r.headers["Retry-After"]) >= 1


def test_a_review_can_be_cancelled(record: dict[str, Any]) -> None:
    c = _app().test_client()
    r = c.post("/reviews", json={"record": bot_record(22), "level": "master"})
    assert r.status_code == 202
    gone = c.delete(r.headers["Location"])
    assert gone.status_code == 200 and gone.get_json()["status"] == "cancelled"


def test_the_event_stream_tells_each_decision_and_the_end(record: dict[str, Any]) -> None:
    with serve_app() as url:
        req = urllib.request.Request(url + "/reviews", data=json.dumps({"record": record, "level": LEVEL}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            location = resp.headers["Location"]
        events = _events(url + location + "/events")
    names = [n for n, _ in events]
    assert names[0] == "progress" and names[-1] == "end"
    moves = [d["move"] for n, d in events if n == "decision"]
    total = review.plan(record, LEVEL, None, 0).moves
    assert sorted(moves) == total and len(set(moves)) == len(moves)  # each decision once
    assert events[-1][1]["status"] == "finished" and events[-1][1]["result"]["reviewed"] == len(total)


def test_a_client_that_leaves_the_stream_frees_its_place(record: dict[str, Any]) -> None:
    from service.api import jobs as jobs_api

    with serve_app() as url:
        req = urllib.request.Request(url + "/reviews",
                                     data=json.dumps({"record": bot_record(23), "level": "master"}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            location = resp.headers["Location"]
        before = jobs_api._open[0]
        stream = urllib.request.urlopen(url + location + "/events", timeout=30)
        stream.readline()
        deadline = time.monotonic() + 10
        while jobs_api._open[0] == before and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jobs_api._open[0] == before + 1
        stream.close()  # the client goes away
        deadline = time.monotonic() + jobs_api.KEEPALIVE_S + 5
        while jobs_api._open[0] > before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert jobs_api._open[0] == before  # noticed at the next write: the stream ended
        urllib.request.urlopen(urllib.request.Request(url + location, method="DELETE"), timeout=30).close()


# ------------------------------------------------------------------------- Redis and RQ workers


@pytest.fixture(scope="module")
def redis_server() -> Any:
    with RedisServer() as server:
        yield server


def test_a_review_on_rq_workers_equals_the_review_done_here(record: dict[str, Any], redis_server: RedisServer,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    redis.Redis.from_url(redis_server.url).flushall()
    settings = Settings.from_env(overrides={"redis_url": redis_server.url, "max_attempts": 2})
    manager = build_manager(settings)
    spec = review.plan(record, LEVEL, None, 5)
    rec = manager.submit_parts(spec.to_dict(), spec.parts)
    assert manager.queue.depth() == spec.parts
    # a worker takes part 0 and dies: the part is retried, nothing is lost
    stale = manager.store.now() - 60

    def claim(r: dict[str, Any]) -> None:
        r["parts"][0].update(status="started", worker="rq:dead", started_at=stale, heartbeat_at=stale)

    manager.store.update(rec["id"], claim)
    manager.get(rec["id"])  # reaps: attempt 2 queued again
    burst(settings, manager)
    done = manager.get(rec["id"])
    assert done is not None and job_status(done) == JobStatus.FINISHED, done
    assert done["parts"][0]["attempt"] == 2
    assert {k: v for k, v in done["result"].items() if k != "elapsed_ms"} == review.run_all(spec)


def test_stream_and_poll_agree_while_a_review_runs(record: dict[str, Any]) -> None:
    """Polling GET /jobs/<id> while the job runs sees the decisions done rise to the total."""
    app = _app()
    c = app.test_client()
    r = c.post("/reviews", json={"record": record, "level": LEVEL})
    seen: list[int] = []
    stop = threading.Event()
    end = time.monotonic() + 120
    while not stop.is_set() and time.monotonic() < end:
        body = c.get(r.headers["Location"]).get_json()
        seen.append(body["progress"]["decisions_done"])
        if body["status"] == "finished":
            break
        time.sleep(0.05)
    assert seen == sorted(seen) and seen[-1] == body["progress"]["decisions_total"]


def test_a_long_suggest_s_events_tell_its_progress_and_its_answer() -> None:
    """The event stream serves any job: a search's progress (iterations, the best so far) and its end."""
    state = dict(engine_ext.new_game(players=2, seed=3).to_json(observer=0))
    with serve_app() as url:
        req = urllib.request.Request(url + "/suggest", data=json.dumps(
            {"state": state, "iterations": 30000, "seed": 1, "mode": "async", "parallel": 2}).encode(),
            headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=30) as resp:
            location = resp.headers["Location"]
        events = _events(url + location + "/events")
    names = [n for n, _ in events]
    assert names[0] == "progress" and names[-1] == "end" and "decision" not in names
    progress = [d for n, d in events if n == "progress"]
    assert [p["iterations"] for p in progress] == sorted(p["iterations"] for p in progress)
    end = events[-1][1]
    assert end["status"] == "finished" and end["kind"] == "search" and end["result"]["iterations"] == 30000
