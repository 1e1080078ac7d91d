"""The load-test corpus: real states from every phase, 2 to 4 players, valid views with a legal
decision each, reproducible from its seeds."""

from __future__ import annotations

import json
from typing import Any

import pytest

import engine_ext
from loadtests import corpus


@pytest.fixture(scope="module")
def entries() -> list[dict[str, Any]]:
    return corpus.load()


def test_covers_players_phases_and_kinds(entries: list[dict[str, Any]]) -> None:
    s = corpus.summary(entries)
    assert set(s["players"]) == {"2", "3", "4"}
    assert set(s["phase"]) == set(corpus.PHASES)
    assert {"select", "choose", "keep", "fulfil", "take"} <= set(s["kind"])
    assert any(e["mid_turn"] for e in entries) and any(not e["mid_turn"] for e in entries)
    assert len({e["id"] for e in entries}) == len(entries)


def test_states_are_views_with_a_legal_decision(entries: list[dict[str, Any]]) -> None:
    for e in entries:
        doc = e["state"]
        engine_ext.validate(doc)
        game = engine_ext.from_json(doc)
        assert doc["observer"] == game.current_player, e["id"]
        assert not game.is_terminal
        legal = game.legal()
        assert len(legal) == e["legal_count"] >= 2, e["id"]
        assert engine_ext.Decision.from_json(e["decision"]) in legal, e["id"]
        assert str(engine_ext.Decision.from_json(e["decision"])) == e["decision_text"]


def test_regenerates_the_same_entries(entries: list[dict[str, Any]]) -> None:
    """One game of the stored corpus, replayed from its seed, gives the same entries."""
    seed = corpus.DEFAULT_SEEDS[1]
    players = corpus.PLAYERS[1]
    fresh = corpus.select(corpus.self_play(players, seed), players, seed)
    stored = [e for e in entries if e["seed"] == seed and e["players"] == players]
    assert fresh == stored


def test_stored_file_is_a_fresh_generation() -> None:
    """What `python -m loadtests.corpus --check` checks: the committed corpus is what the current
    engine and bots make from the default seeds (a rules fix that changes play makes it stale)."""
    stored = corpus.DEFAULT_PATH.read_text()
    fresh = corpus.generate()
    if stored != corpus.dumps(fresh):
        where = corpus.first_difference(json.loads(stored), fresh) or "formatting only"
        pytest.fail(
            f"{corpus.DEFAULT_PATH} is stale (first difference at {where}); regenerate with: python -m loadtests.corpus"
        )


def test_first_difference() -> None:
    a = {"entries": [{"turn": 75, "id": "x"}], "seeds": [1, 2]}
    assert corpus.first_difference(a, json.loads(json.dumps(a))) is None
    b = {**a, "entries": [{"turn": 83, "id": "x"}]}
    assert corpus.first_difference(a, b) == "/entries/0/turn (75 stored vs 83 fresh)"
    assert corpus.first_difference(a, {**a, "seeds": [1]}) == "/seeds (2 stored vs 1 fresh items)"
    assert corpus.first_difference(a, {"entries": a["entries"]}) == "/seeds (only in the stored one)"


def test_phase_of() -> None:
    assert corpus.phase_of(0, 100, False) == "opening"
    assert corpus.phase_of(50, 100, False) == "middle"
    assert corpus.phase_of(90, 100, False) == "late"
    assert corpus.phase_of(10, 100, True) == "final"
