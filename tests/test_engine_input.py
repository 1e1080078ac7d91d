"""Bad input: malformed, inconsistent or oversized states and decisions are rejected with a
StateError / DecisionError naming the field (a JSON pointer), never a crash."""

from __future__ import annotations

import copy
from typing import Any

import pytest

import engine_ext
from engine_ext import DecisionError, Engine, IllegalDecision, StateError


@pytest.fixture
def doc(engine: Engine) -> dict[str, Any]:
    return engine.new_game(2, seed=3).to_json()


def rejected(engine: Engine, doc: Any) -> StateError:
    with pytest.raises(StateError) as info:
        engine.from_json(doc)
    return info.value


@pytest.mark.parametrize("mutate,pointer", [
    (lambda d: d.pop("seats"), "/seats"),
    (lambda d: d.update(schema="kashgar/state@9"), "/schema"),
    (lambda d: d.update(players="two"), "/players"),
    (lambda d: d.update(players=5), "/players"),
    (lambda d: d["seats"][0]["resources"].update(gold=10), "/seats/0/resources/gold"),
    (lambda d: d["seats"][1]["resources"].update(mules=7), "/seats/1/resources/mules"),
    (lambda d: d["seats"][0]["resources"].update(ginger=-1), "/seats/0/resources/ginger"),
    (lambda d: d["seats"][0]["resources"].pop("pepper"), "/seats/0/resources/pepper"),
    (lambda d: d["seats"][0]["caravans"][0].append("dragon"), "/seats/0/caravans/0/2"),
    (lambda d: d["seats"][0]["caravans"][1].append("Recke!"), "/seats/0/caravans/1/2"),
    (lambda d: d.update(display=[1, 2, 3, 41]), "/display/3"),
    (lambda d: d.update(unknown_field=1), "/unknown_field"),
    (lambda d: d.update(turn_player=7), "/turn_player"),
    (lambda d: d.update(seats=d["seats"][:1]), "/seats"),
    (lambda d: d.update(turn=405, turn_limit=400), "/turn"),
])
def test_malformed_states_name_the_field(engine: Engine, doc: dict[str, Any], mutate: Any, pointer: str) -> None:
    bad = copy.deepcopy(doc)
    mutate(bad)
    err = rejected(engine, bad)
    assert err.pointer == pointer, err
    assert err.message


def test_not_an_object(engine: Engine) -> None:
    for bad in (None, [], "state", 3):
        assert rejected(engine, bad).pointer == ""


def test_more_copies_than_the_game_has(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][0]["caravans"][0] += ["recke", "recke", "recke"]
    err = rejected(engine, doc)
    assert err.pointer == "/seats/0/caravans/0/4" and "recke" in err.message


def test_counts_that_do_not_add_up(engine: Engine, doc: dict[str, Any]) -> None:
    doc["decks"]["standard"] = doc["decks"]["standard"][:-1]  # one card lost
    err = rejected(engine, doc)
    assert err.pointer == "/decks/standard" and "add up" in err.message


def test_contract_twice(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][1]["contracts"] = [doc["display"][0]]
    err = rejected(engine, doc)
    assert err.pointer.startswith("/display/") or err.pointer.startswith("/seats/1/contracts")
    assert "twice" in err.message


def test_additional_card_outside_the_variant(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][0]["caravans"][0].append("torwache")
    err = rejected(engine, doc)
    assert err.pointer == "/seats/0/caravans/0/2"


def test_start_card_in_the_discard(engine: Engine, doc: dict[str, Any]) -> None:
    start = doc["seats"][0]["caravans"][0].pop()
    doc["discard"].append(start)
    assert rejected(engine, doc).pointer == "/discard/0"


def test_oversized_state(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][0]["caravans"][0] = ["marktfrau"] * 60000
    err = rejected(engine, doc)
    assert err.pointer == "" and "larger" in err.message


def test_a_state_without_any_decision(engine: Engine, doc: dict[str, Any]) -> None:
    for seat in doc["seats"]:
        seat["caravans"] = [[], [], []]
    doc["decks"] = {}
    err = rejected(engine, doc)
    assert err.pointer == "/turn_player"


def test_bad_pending(engine: Engine, doc: dict[str, Any]) -> None:
    doc["pending"] = {"wait": "keep", "card": "patriarch", "caravan": 0, "position": 0, "action": "a", "step": 5}
    assert rejected(engine, doc).pointer == "/pending/step"
    doc["pending"] = {"wait": "keep", "card": "recke", "caravan": 0, "position": 0, "action": "a", "step": 0}
    assert rejected(engine, doc).pointer == "/pending/position"


@pytest.mark.parametrize("bad", ["", "c9:a", "c0:fly", "choose gold dust", "remove c0", {"kind": "x"},
                                 {"kind": "select", "caravan": "0", "option": "a"}, {"kind": "fulfil"}, 42.5])
def test_malformed_decisions(engine: Engine, bad: Any) -> None:
    g = engine.new_game(2, seed=1)
    with pytest.raises((DecisionError, IllegalDecision)):
        g.apply(bad)
    assert g.to_json() == engine.new_game(2, seed=1).to_json()  # nothing changed


def test_illegal_decision_lists_the_legal_ones(engine: Engine) -> None:
    g = engine.new_game(2, seed=1)
    with pytest.raises(IllegalDecision) as info:
        g.apply("c0:pass")  # a Patriarch cannot be passed
    assert "c0:a" in info.value.message


def test_validate_is_the_loader() -> None:
    doc = engine_ext.new_game(3, seed=9).to_json()
    engine_ext.validate(doc)
    doc["seats"][2]["resources"]["gold"] = 99
    with pytest.raises(StateError):
        engine_ext.validate(doc)
