"""The API in words: every legal decision, alternative, step of a line and event has a
`description`; a card named by slug has its English name beside it."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from engine_ext.words import card_name
from service import create_app
from tests.service_helpers import TEST_CONFIG, Client, wait_job

CODE = re.compile(r"\bc[0-9]:|\bNone\b|\{|\}")


@pytest.fixture(scope="module")
def client() -> Client:
    return Client(create_app(TEST_CONFIG))


def _described(items: list[dict[str, Any]]) -> None:
    for item in items:
        said = item["description"]
        assert said and not CODE.search(said), item
        d = item["decision"]
        if d["kind"] in ("keep", "take"):
            assert item["card_name"] == card_name(d["card"])


def test_games_legal_and_apply_say_every_decision_and_event_in_words(client: Client) -> None:
    r = client.post("/games", json={"players": 3, "seed": 11, "variant": "all"})
    assert r.status_code == 200
    assert r.json["legal"][0]["description"].startswith("Patriarch, caravan 1: ")
    body, rng = r.json, random.Random(11)
    kinds: set[str] = set()
    for _ in range(80):
        if body["is_terminal"]:
            break
        _described(body["legal"])
        legal = client.post("/legal", json={"state": body["state"]})
        assert legal.json["legal"] == body["legal"]
        pick = rng.choice(body["legal"])
        r = client.post("/apply", json={"state": body["state"], "decision": pick["text"]})
        assert r.status_code == 200, r.json
        body = r.json
        assert body["decision"] == pick
        for e in body["events"]:
            kinds.add(e["event"])
            assert e["description"] and not CODE.search(e["description"]), e
            if e.get("card"):
                assert e["name"] == card_name(e["card"])
            if e.get("turned"):
                assert e["turned_name"] == card_name(e["turned"])
    assert {"card", "resource", "turn_end"} <= kinds


def _check_answer(a: dict[str, Any]) -> None:
    _described([{**a, "decision": a["decision"]}])
    _described(a["alternatives"])
    assert len(a["line_descriptions"]) == len(a["line"]) >= 1
    assert a["line_descriptions"][0] == a["description"]
    assert all(said and not CODE.search(said) for said in a["line_descriptions"])


def test_suggest_says_its_decision_alternatives_and_line_in_words(client: Client) -> None:
    view = client.post("/games", json={"players": 2, "seed": 7, "observer": 0}).json["state"]
    r = client.post("/suggest", json={"state": view, "iterations": 300, "seed": 1, "mode": "sync"})
    assert r.status_code == 200, r.json
    _check_answer(r.json)
    job = client.post("/suggest", json={"state": view, "iterations": 300, "seed": 1, "mode": "async"})
    assert job.status_code == 202, job.json
    done = wait_job(client, job.json["status_url"])
    assert done["status"] == "finished"
    _check_answer(done["result"])
