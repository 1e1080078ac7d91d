"""The seeds the service makes survive a browser: a web page keeps numbers as doubles (exact only
below 2**53), and a game record that went through them still replays, at the table and in the
package; a seed the page could not keep exactly is refused at a new table, and a record that holds
one still loads when its text reaches the service as written."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from cryptography.fernet import Fernet
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine_ext
from engine_ext import record as records
from service import create_app, seeds
from service.table.play import SHUFFLE_BITS

#: The largest integer a double holds exactly, with every one below it.
EXACT = 2**53


@pytest.fixture(scope="module")
def app() -> Flask:
    key = Fernet.generate_key().decode("ascii")
    return create_app({"TESTING": True, "log_level": "WARNING", "table_key": key, "table_pause_ms": 0})


def through_doubles(doc: Any) -> Any:
    """`doc` as a page holds it: every number a double."""
    return json.loads(json.dumps(doc), parse_int=float)


def as_javascript_writes(doc: Any) -> Any:
    """A document of doubles as JSON.stringify writes it back: a whole number without a fraction."""
    if isinstance(doc, float) and doc.is_integer():
        return int(doc)
    if isinstance(doc, dict):
        return {k: as_javascript_writes(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [as_javascript_writes(v) for v in doc]
    return doc


def played(seed: int, rng: random.Random) -> dict[str, Any]:
    """The record of a whole game from `seed` as the table records one: seat 0's decisions each
    after a fresh shuffle of what no seat knows, every decision picked by `rng`."""
    game = engine_ext.new_game(players=2, seed=seed)
    moves: list[str] = []
    shuffles: list[int | None] = []
    while not game.is_terminal:
        shuffle = rng.getrandbits(SHUFFLE_BITS) if game.current_player == 0 else None
        if shuffle is not None:
            game.shuffle_unknown(shuffle)
        text = str(rng.choice(game.legal()))
        game.apply(text)
        moves.append(text)
        shuffles.append(shuffle)
    return records.record_from_moves(moves, players=2, seed=seed, levels=[None, "novice"], shuffles=shuffles)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.one_of(st.builds(seeds.random_seed), st.integers(0, seeds.DRAWN_SEEDS - 1)),
       moves=st.integers(0, 2**32))
def test_a_record_of_a_drawn_seed_replays_after_a_browser_held_its_numbers(app: Flask, seed: int,
                                                                             moves: int) -> None:
    assert 0 <= seed < EXACT and float(seed) == seed
    record = played(seed, random.Random(moves))
    end = records.replay(record).to_json()
    client: FlaskClient = app.test_client()
    for doc in (through_doubles(record), as_javascript_writes(through_doubles(record))):
        assert records.replay(doc).to_json() == end
        resp = client.post("/table/load", json={"record": doc})
        assert resp.status_code == 200, resp.get_json()
        assert resp.get_json()["result"]["seed"] == seed and resp.get_json()["decisions"] == len(record["moves"])


def test_the_service_draws_seeds_a_double_holds() -> None:
    assert seeds.DRAWN_SEEDS <= EXACT
    assert all(0 <= s < EXACT for s in (seeds.random_seed() for _ in range(1000)))


def test_a_seed_past_2_53_is_refused_at_a_new_table(app: Flask) -> None:
    client = app.test_client()
    resp = client.post("/table/new", json={"levels": ["novice"], "seed": EXACT})
    assert resp.status_code == 422 and resp.get_json()["pointer"] == "/seed"
    assert client.post("/table/new", json={"levels": ["novice"], "seed": EXACT - 1}).status_code == 200


def test_a_record_with_a_larger_seed_loads_as_its_text_names_it(app: Flask) -> None:
    """A record made elsewhere (`kashgar play --record` draws below 2**63) loads at the table, and
    its first moves give the table before the next one; rounded as a double it deals another game."""
    seed = 3627971415689683001
    assert float(seed) != seed
    record = played(seed, random.Random(1))
    client = app.test_client()
    resp = client.post("/table/load", data=json.dumps({"record": record}), content_type="application/json")
    assert resp.status_code == 200 and resp.get_json()["result"]["seed"] == seed
    cut = next(i for i, m in enumerate(record["moves"]) if i >= 3 and m["seat"] == 0)  # the person to decide
    part = client.post("/table/load", json={"record": record, "moves": cut})
    assert part.status_code == 200, part.get_json()
    body = part.get_json()
    assert body["decisions"] == cut and not body["is_terminal"] and "result" not in body
    assert record["moves"][cut]["decision"] in [d["text"] for d in body["legal"]]
    rounded = client.post("/table/load", json={"record": through_doubles(record)})
    assert rounded.status_code == 422 and rounded.get_json()["error"] == "record_does_not_replay"
