"""`KashgarClient.events(job)`: a job followed through its Server-Sent Events on a real server, as
typed events, to the job's end: a search's progress and result, a review's every decision once."""

from __future__ import annotations

import pytest

from kashgar_client import Accepted, JobEvent, KashgarAPIError, KashgarClient
from kashgar_client.events import read_events
from tests.builders import random_record


def test_a_search_job_s_events_end_with_its_result(service_url: str) -> None:
    api = KashgarClient(service_url)
    state = api.new_game(players=2, seed=4, observer=0).state
    assert state is not None
    accepted = api.submit(state, iterations=400, seed=3, mode="async")
    assert isinstance(accepted, Accepted)
    seen = list(api.events(accepted, timeout=120))
    assert seen[-1].kind == "end" and {e.kind for e in seen[:-1]} <= {"progress"}
    end = seen[-1].job
    assert end is not None and end.status == "finished" and end.result is not None
    assert end.result.iterations == 400
    counts = [e.progress.iterations for e in seen if e.progress is not None]
    assert counts == sorted(counts) and counts[-1] == 400
    assert end.result.decision_text == api.suggest(state, iterations=400, seed=3, mode="sync").decision_text


def test_a_review_s_events_give_each_decision_once(service_url: str) -> None:
    api = KashgarClient(service_url)
    doc = api.request("POST", "/reviews", {"record": random_record(9, 24, rng_seed=2),
                                           "level": "novice", "seed": 1}).body
    events = list(api.events(doc["job_id"], timeout=120))
    decisions = [e.decision for e in events if e.kind == "decision"]
    end = events[-1]
    assert end.kind == "end" and end.job is not None and end.job.review is not None
    by_move = {d["move"]: d for d in end.job.review["decisions"]}
    moves_seen = [d["move"] for d in decisions if d is not None]
    assert len(moves_seen) == len(set(moves_seen)) == len(by_move) == end.job.review["reviewed"] > 0
    assert all(d == by_move[d["move"]] for d in decisions if d is not None)  # as the review has them


def test_an_unknown_job_s_events_are_a_404(service_url: str) -> None:
    with pytest.raises(KashgarAPIError) as err:
        next(KashgarClient(service_url).events("0" * 32))
    assert err.value.status == 404


def test_the_stream_is_read_field_by_field() -> None:
    lines = [b"retry: 2000\n", b"\n", b": keep-alive\n", b"id: 1\n", b"event: progress\n",
             b'data: {"status":"started","iterations":5,"parts_done":0,"parts_total":1}\n', b"\n",
             b"id: 2\n", b"event: decision\n", b'data: {"move":3}\n', b"\n"]
    got = list(read_events(lines))
    assert [(e.kind, e.id) for e in got] == [("progress", 1), ("decision", 2)]
    assert got[0].status == "started" and got[0].progress is not None and got[0].progress.iterations == 5
    assert got[1] == JobEvent("decision", 2, decision={"move": 3})
