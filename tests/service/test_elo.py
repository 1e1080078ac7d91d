"""POST /suggest with `elo` instead of a level, over HTTP: the range in GET /levels, the level
drawn per decision (same seed, same answer), the 422s naming /elo, the job, the client."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

import engine_ext
from bots.base import position_key
from bots.strength import elo_range, mix_for
from kashgar_client import KashgarClient
from lab.serving import http_json
from tests.service_helpers import serve_app


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with serve_app() as base:
        yield base


@pytest.fixture(scope="module")
def view() -> dict[str, Any]:
    return dict(engine_ext.new_game(players=2, seed=3).to_json(observer=0))


def test_levels_say_the_range_and_mark_the_default(url: str) -> None:
    status, doc = http_json("GET", url + "/levels")
    assert status == 200
    assert doc["elo"] == {"min": doc["levels"][0]["elo"], "max": doc["levels"][-1]["elo"]}
    assert [lv["name"] for lv in doc["levels"] if lv["default"]] == [doc["default"]] == ["expert"]


def test_an_elo_is_answered_by_the_level_drawn_for_the_seed_and_position(url: str, view: dict[str, Any]) -> None:
    mix = mix_for(530)
    key = position_key(engine_ext.from_json(view).state)
    seen = set()
    for seed in range(8):
        status, a = http_json("POST", url + "/suggest", {"state": view, "elo": 530, "seed": seed})
        assert status == 200, a
        drawn = mix.draw(seed, key).name
        assert a["level"] == drawn and a["elo"] == 530
        status, same = http_json("POST", url + "/suggest", {"state": view, "level": drawn, "seed": seed})
        assert same["decision_text"] == a["decision_text"] and same["alternatives"] == a["alternatives"]
        assert "elo" not in same
        seen.add(drawn)
    assert seen == {"club", "skilled"}
    _, again = http_json("POST", url + "/suggest", {"state": view, "elo": 530, "seed": 3})
    _, first = http_json("POST", url + "/suggest", {"state": view, "elo": 530, "seed": 3})
    assert {k: v for k, v in again.items() if k not in ("elapsed_ms", "request_id")} == \
        {k: v for k, v in first.items() if k not in ("elapsed_ms", "request_id")}


LO, HI = elo_range() or (0.0, 0.0)
RANGE = f"elo must be from {LO:g} to {HI:g}"


@pytest.mark.parametrize("body, code, words", [
    ({"elo": 5000}, "elo_out_of_range", RANGE),
    ({"elo": -10}, "elo_out_of_range", RANGE),
    ({"elo": 500, "level": "club"}, "level_and_elo", "not both"),
    ({"elo": 500, "iterations": 100}, "budget_and_elo", "without iterations"),
    ({"elo": "strong"}, "validation_error", ""),
])
def test_a_wrong_elo_is_a_422_naming_it(url: str, view: dict[str, Any], body: dict[str, Any], code: str,
                                        words: str) -> None:
    status, err = http_json("POST", url + "/suggest", {"state": view, **body})
    assert status == 422 and err["error"] == code and err["pointer"] == "/elo", err
    assert words in err["message"]


def test_an_elo_as_a_job_says_the_level_and_the_elo(url: str, view: dict[str, Any]) -> None:
    status, acc = http_json("POST", url + "/suggest", {"state": view, "elo": 950, "seed": 4, "mode": "async"})
    assert status == 202, acc
    deadline = time.monotonic() + 60
    while True:
        _, job = http_json("GET", url + acc["status_url"])
        if job["status"] in ("finished", "failed") or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert job["status"] == "finished", job
    drawn = mix_for(950).draw(4, position_key(engine_ext.from_json(view).state)).name
    assert job["request"]["elo"] == 950 and job["request"]["level"] == drawn
    assert job["result"]["elo"] == 950 and job["result"]["level"] == drawn


def test_the_client_asks_for_an_elo(url: str, view: dict[str, Any]) -> None:
    api = KashgarClient(url)
    assert api.elo_range() == (LO, HI)
    s = api.suggest(view, elo=200, seed=2)
    assert s.elo == 200 and s.level in ("beginner", "casual")
