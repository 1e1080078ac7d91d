"""Information sets: a player's view hides what that player may not know, and the engine
plays from a view with the decks left out."""

from __future__ import annotations

from typing import Any

import pytest

from engine_ext import Engine
from tests.engine_helpers import random_walk


def test_view_hides_deck_order(engine: Engine) -> None:
    g = engine.new_game(3, seed=4)
    view = g.view(1)
    assert view["observer"] == 1 and "rng" not in view
    assert view["decks"]["standard"] == {"count": len(g.to_json()["decks"]["standard"]), "known": []}
    assert view["decks"]["contract"]["known"] == []


def test_cards_a_player_put_under_are_known_to_that_player_only(engine: Engine) -> None:
    # Kräuterfrau's parting action: draw 2 Special, keep 1, the other goes under the deck
    doc = engine.new_game(2, seed=0).to_json()
    assert "kraeuterfrau" not in [c for s in doc["seats"] for car in s["caravans"] for c in car]
    me = doc["turn_player"]
    doc["seats"][me]["caravans"][0] = ["kraeuterfrau"]  # dealt instead of that Start card
    doc["removed"].append("patriarch")  # and its Patriarch removed from the game
    g = engine.from_json(doc)
    g.apply("c0:part")
    assert g.to_json()["pending"]["wait"] == "keep" and g.current_player == me
    g.apply(g.legal()[0])
    mine = g.view(me)["decks"]["special"]
    other = g.view(1 - me)["decks"]["special"]
    assert len(mine["known"]) == 1 and mine["known"][0][0] == mine["count"] - 1
    assert other["known"] == []


def test_a_view_without_decks_is_playable(engine: Engine) -> None:
    g = random_walk(engine, 2, seed=21, steps=80)
    me = g.current_player
    view = g.view(me)
    view.pop("decks")
    g2 = engine.from_json(view)
    assert [str(d) for d in g2.legal()] == [str(d) for d in g.legal()]
    g2.state.playout(1)
    assert g2.is_terminal


def test_determinization_keeps_the_public_state(engine: Engine) -> None:
    g = random_walk(engine, 4, seed=5, steps=120)
    me = g.current_player
    for seed in range(5):
        det = g.determinize(me, seed)
        a, b = det.to_json(), g.to_json()
        for key in ("seats", "display", "discard", "removed", "turn", "turn_player"):
            assert a[key] == b[key]
        assert sorted(det.to_json()["decks"]["standard"]) == sorted(b["decks"]["standard"])


def test_determinizations_differ_by_seed(engine: Engine) -> None:
    g = engine.new_game(2, seed=2)
    decks = {tuple(g.determinize(0, s).to_json()["decks"]["standard"]) for s in range(8)}
    assert len(decks) == 8


def test_determinize_into_and_copy_from_match_the_allocating_calls(engine: Engine) -> None:
    g = random_walk(engine, 3, seed=12, steps=100)
    me = g.current_player
    dst = engine.new_game(2, seed=0).state  # any state: it is overwritten
    g.state.determinize_into(dst, me, 77)
    assert dst.fingerprint() == g.state.determinize(me, 77).fingerprint()
    copy = engine.new_game(4, seed=1).state
    copy.copy_from(g.state)
    assert copy.fingerprint() == g.state.fingerprint()


def test_playout_limit_stops(engine: Engine) -> None:
    g = engine.new_game(2, seed=3)
    assert g.state.playout_limit(5, 10) == 10
    assert not g.is_terminal
    rest = g.state.playout_limit(6, 100000)
    assert g.is_terminal and rest > 0


def test_a_view_for_no_seat_is_a_clear_error(engine: Engine) -> None:
    """A finished game's current player is -1; asking for that view names the problem."""
    g = random_walk(engine, 2, 5, 3)
    for bad in (-1, 2):
        with pytest.raises(ValueError, match="observer must be a seat from 0 to 1"):
            g.to_json(observer=bad)
    assert g.to_json(observer=1)["observer"] == 1


def test_a_draw_from_a_view_s_made_up_deck_order_is_marked_sampled(engine: Engine) -> None:
    """Applying a decision to a game loaded from a view draws from a deck order the view made up:
    every such card is marked `sampled`, a card whose place the seat knew is drawn as it knew it
    (unmarked, and the real card), and nothing is marked on the full state."""
    import random

    decks = ("standard deck", "special deck")
    marked = known = 0
    for seed in (3, 8, 11):  # 8 and 11: a seat draws Special cards it put under itself
        g = engine.new_game(players=2, seed=seed)
        rnd = random.Random(seed)
        while not g.is_terminal:
            view = engine.from_json(g.to_json(observer=g.current_player))
            d = rnd.choice(g.legal())
            real = g.apply(d)
            assert not any(e.get("sampled") for e in real)
            drawn = [e for e in view.apply(str(d)) if e["event"] == "card" and e["from"] in decks]
            real_cards = sorted(e["card"] for e in real if e["event"] == "card" and e["from"] in decks)
            marked += sum(1 for e in drawn if e.get("sampled"))
            for e in drawn:
                if not e.get("sampled"):
                    known += 1
                    assert e["card"] in real_cards, (seed, str(d), e)
    assert marked > 100 and known > 0


def _cards(deck: Any) -> int:
    """How many cards a full state's deck holds (a list, or {"cards": [...], "known_by": [...]})."""
    return len(deck["cards"]) if isinstance(deck, dict) else len(deck)


def test_a_view_s_made_up_refills_and_reshuffles_are_told_apart_from_real_outcomes(engine: Engine) -> None:
    """A fulfil refills the display from the contract deck, and an empty Standard deck is refilled
    by shuffling the discard pile: on a view both are made up, with no card event to mark them.
    `outcome_made_up` compares the outcome in other worlds that agree with the view; it is true
    for those, false on the full state and for decisions that draw nothing."""
    import random

    found = {"refill": 0, "reshuffle": 0, "nothing": 0}
    for seed in range(6):
        g = engine.new_game(4, seed=seed)
        rnd = random.Random(seed)
        while not g.is_terminal and min(found.values()) < 3:
            view = engine.from_json(g.to_json(observer=g.current_player))
            d = rnd.choice(g.legal())
            before = g.to_json()
            if view.hidden_from(view.observer):
                g.apply(d)
                continue
            made_up = view.outcome_made_up(str(d))
            assert not g.outcome_made_up(d)  # the full state's order is the real one
            events = g.apply(d)
            after = g.to_json()
            refill = _cards(before["decks"]["contract"]) > _cards(after["decks"]["contract"])
            drew = before["decks"] != after["decks"]  # a draw, even one put back (the Bauer's contracts)
            reshuffle = (any(e["event"] == "card" and e["from"] == "discard" and e["to"] == "drawn" for e in events)
                         and len(set(before["discard"])) >= 2)  # of one kind, every shuffle looks alike
            moved = any(e["event"] == "card" and e["from"] in ("standard deck", "special deck", "discard")
                        for e in events) or before["display"] != after["display"] or before["pending"] or drew
            if refill and "fulfil" in str(d):
                found["refill"] += 1
                assert made_up, (seed, str(d))
            elif reshuffle:
                found["reshuffle"] += 1
                assert made_up, (seed, str(d))
            elif not moved and not after["pending"]:
                found["nothing"] += 1
                assert not made_up, (seed, str(d))
    assert min(found.values()) >= 1, found
