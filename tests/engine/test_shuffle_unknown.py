"""`Game.shuffle_unknown(seed)`: what no seat knows is shuffled afresh (both builds). What every
seat knows stays as it was, so no seat can tell; only what is to come changes."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

import engine_ext
from tests.builders import make_state


def _played(engine: Any, seed: int = 3, moves: int = 12) -> Any:
    g = engine.new_game(players=3, seed=seed)
    for _ in range(moves):
        g.apply(g.legal()[0])
    return g


def _deck(doc: dict[str, Any], name: str) -> list[Any]:
    deck = doc["decks"][name]
    return list(deck["cards"] if isinstance(deck, dict) else deck)


def test_no_seat_s_view_changes_and_what_is_to_come_does(engine: Any) -> None:
    g = _played(engine)
    before = g.to_json()
    views = [g.to_json(observer=p) for p in range(g.players)]
    g.shuffle_unknown(7)
    after = g.to_json()
    assert [g.to_json(observer=p) for p in range(g.players)] == views
    assert _deck(after, "standard") != _deck(before, "standard")
    assert Counter(_deck(after, "standard")) == Counter(_deck(before, "standard"))
    assert after["rng"] != before["rng"]
    assert {k: v for k, v in after.items() if k not in ("decks", "rng")} == {
        k: v for k, v in before.items() if k not in ("decks", "rng")}


def test_a_place_some_seat_knows_keeps_its_card(engine: Any) -> None:
    rest = [c for c in range(1, 41) if c not in (2, 10, 18, 5, 6, 7, 8)]
    known = [3, 0, 1, 2] + [0] * (len(rest) - 1)  # contracts 2, 18 and rest[0] are known to some seat
    doc = make_state(players=2, display=[5, 6, 7, 8],
                     decks={"contract": {"cards": [2, 10, 18, *rest], "known_by": known}})
    seen = set()
    for seed in range(20):
        g = engine.from_json(doc)
        g.shuffle_unknown(seed)
        deck = _deck(g.to_json(), "contract")
        assert [deck[i] for i, k in enumerate(known) if k] == [2, 18, rest[0]]
        assert Counter(deck) == Counter([2, 10, 18, *rest])
        seen.add(tuple(deck))
    assert len(seen) == 20  # the unknown places are shuffled, each seed otherwise


def test_a_seed_shuffles_alike_in_both_builds(compiled_engine: Any, interpreted_engine: Any) -> None:
    docs = []
    for engine in (compiled_engine, interpreted_engine):
        g = _played(engine, seed=11, moves=20)
        g.shuffle_unknown(12345)
        g.apply(g.legal()[0])
        docs.append(g.to_json())
    assert docs[0] == docs[1]


def test_a_view_cannot_be_shuffled() -> None:
    g = engine_ext.new_game(players=2, seed=1)
    view = engine_ext.from_json(g.to_json(observer=0))
    with pytest.raises(ValueError, match="full state"):
        view.shuffle_unknown(1)
