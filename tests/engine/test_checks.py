"""The bookkeeping checks (`engine_ext.checks`) find each kind of broken state they name."""

from __future__ import annotations

import copy
from typing import Any

from engine_ext import Engine
from engine_ext.checks import doc_problems, problems
from tests.engine_helpers import random_walk


def _game_doc(engine: Engine) -> tuple[dict[str, Any], list[int]]:
    g = random_walk(engine, 3, 11, 120)
    assert problems(g) == []
    return g.to_json(), [g.vp(p) for p in range(3)]


def test_a_consistent_state_has_no_problem(engine: Engine) -> None:
    doc, vps = _game_doc(engine)
    assert doc_problems(doc, vps) == []


def test_a_card_in_two_places_is_found(engine: Engine) -> None:
    doc, vps = _game_doc(engine)
    bad = copy.deepcopy(doc)
    bad["discard"].append("marktfrau")
    [msg] = doc_problems(bad)
    assert "person cards not each in one place" in msg and "extra ['marktfrau']" in msg


def test_a_lost_or_doubled_contract_is_found(engine: Engine) -> None:
    doc, vps = _game_doc(engine)
    bad = copy.deepcopy(doc)
    gone = bad["display"].pop()
    assert doc_problems(bad) == [f"contracts not each in one place: twice [], missing [{gone}]"]
    bad["display"].append(gone)
    bad["display"].append(gone)
    probs = doc_problems(bad)
    assert f"contracts not each in one place: twice [{gone}], missing []" in probs


def test_resources_out_of_bounds_and_wrong_vp_are_found(engine: Engine) -> None:
    doc, vps = _game_doc(engine)
    bad = copy.deepcopy(doc)
    bad["seats"][1]["resources"]["mules"] = 7
    bad["seats"][2]["resources"]["gold"] = -1
    wrong = list(vps)
    wrong[0] += 1
    assert doc_problems(bad, wrong) == [  # in words: the JSON's seats 0, 1 and 2 are seats 1, 2 and 3
        f"seat 1 has {vps[0] + 1} VP, its cards and contracts are worth {vps[0]}",
        "seat 2 has 7 mules (allowed 0 to 6)",
        "seat 3 has -1 gold (allowed 0 to 9)",
    ]


def test_a_start_card_created_is_found(engine: Engine) -> None:
    doc, vps = _game_doc(engine)
    bad = copy.deepcopy(doc)
    in_play = {s for seat in doc["seats"] for car in seat["caravans"] for s in car}
    start = next(k.slug for k in engine.data.kinds if k.deck == "start" and k.slug in in_play)
    bad["seats"][0]["caravans"][0].append(start)
    probs = doc_problems(bad)
    assert any("Start cards in play, want 9" in p for p in probs)
    assert f"Start cards in two places: {start}" in probs
