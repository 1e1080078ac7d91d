"""Information sets: a player's view hides what that player may not know, and the engine
plays from a view with the decks left out."""

from __future__ import annotations

import json
import random
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


# ---- what a view made up ------------------------------------------------------------------------

from engine_ext import core as L  # noqa: E402
from engine_ext.document.schema import StateError  # noqa: E402
from tests.builders import make_state  # noqa: E402

ADELIGE = [["adelige", "patriarch"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
HUFSCHMIED = [["hufschmied", "patriarch"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]


def test_a_draw_from_a_reshuffled_discard_pile_is_marked_sampled(engine: Engine) -> None:
    """The Standard deck is empty and the discard pile (7 Gewürzhändler, 1 Marktfrau) is
    reshuffled into it before a draw: on a view that draw is made up. It was unmarked, and
    `outcome_made_up`'s 9 worlds often all drew a Gewürzhändler too, so `/apply` said
    `sampled: false`."""
    base = engine.new_game(2, seed=0).to_json()
    pile = ["gewuerzhaendler"] * 3 + ["marktfrau"] + ["gewuerzhaendler"] * 4
    std = list(base["decks"]["standard"])
    for card in pile:
        std.remove(card)
    doc = dict(base, discard=pile, removed=std, decks=dict(base["decks"], standard=[]))
    g = engine.from_json(doc)
    view = engine.from_json(g.to_json(observer=g.current_player))
    events = view.apply("c0:a")
    drawn = [e for e in events if e["event"] == "card" and e["from"] == "discard" and e["to"] != "standard deck"]
    into_deck = [e for e in events if e["event"] == "card" and e["to"] == "standard deck"]
    assert drawn and all(e.get("sampled") for e in drawn), events
    assert into_deck and not any(e.get("sampled") for e in into_deck)  # the reshuffle itself is no draw
    # the same draw in the full state is the real one, and a pile of one kind makes nothing up
    assert not any(e.get("sampled") for e in engine.from_json(doc).apply("c0:a"))
    one_kind = dict(doc, discard=["gewuerzhaendler"] * 8, removed=[*std, "marktfrau"])
    one_kind["removed"].remove("gewuerzhaendler")
    g1 = engine.from_json(one_kind)
    assert not any(e.get("sampled") for e in engine.from_json(g1.to_json(observer=g1.current_player)).apply("c0:a"))


def test_a_draw_from_cards_of_one_kind_is_not_marked_sampled(engine: Engine) -> None:
    """A Special deck holding two Bootsmänner only: whatever the order, the Adelige draws both, so
    nothing is made up (`outcome_made_up` said so; the events said `sampled`)."""
    removed = [k for k in ("fahrender_haendler", "gildenherr", "haendlertochter", "hufschmied", "schneider")
               for _ in range(2)]
    doc = make_state(caravans=[ADELIGE, None], removed=removed, decks={"special": {"count": 2}})
    view = engine.from_json(engine.from_json(doc).to_json(observer=0))
    assert not view.outcome_made_up("c0:a")
    cards = [e for e in view.apply("c0:a") if e["event"] == "card"]
    assert [e["card"] for e in cards] == ["bootsmann", "bootsmann"] and not any(e.get("sampled") for e in cards)


def test_a_contract_the_hufschmied_draws_and_takes_at_once_is_marked_sampled(engine: Engine) -> None:
    """With one free contract among its three, the Hufschmied takes it without a pause: on a view
    that contract came from a made-up deck order, and its fulfil event named it unmarked."""
    doc = make_state(caravans=[HUFSCHMIED, None], contract_top=[1, 21, 20])  # 1 is small, 20 and 21 large
    g = engine.from_json(doc)
    assert [e for e in g.clone().apply("c0:a") if e["event"] == "fulfil"] == [
        {"event": "fulfil", "player": 0, "contract": 1, "vp": 2}]  # the real one, unmarked
    seen = 0
    rnd = random.Random(0)
    for _ in range(100):  # views that differ in public cards make up different orders: all marked
        pick = rnd.sample(range(1, 41), 4 + rnd.randrange(6))
        other = engine.from_json(make_state(caravans=[HUFSCHMIED, None], display=pick[:4], contracts=[[], pick[4:]]))
        fulfils = [e for e in engine.from_json(other.to_json(observer=0)).apply("c0:a") if e["event"] == "fulfil"]
        assert all(e.get("sampled") for e in fulfils), fulfils
        seen += len(fulfils)
    assert seen > 0  # some views took one at once


def test_outcome_made_up_refuses_a_hidden_choice(engine: Engine) -> None:
    """Seat 1's view while seat 0 keeps one of the Special cards it drew: `keep X` names a made-up
    card, illegal in most sampled worlds, where it was applied anyway (and wrote outside the card
    arrays in the compiled build)."""
    g = engine.from_json(make_state(caravans=[ADELIGE, None], special_top=["bootsmann", "gildenherr"]))
    g.apply("c0:a")
    view = engine.from_json(g.to_json(observer=1))
    assert view.hidden_from(1)
    for d in view.legal():
        with pytest.raises(StateError) as err:
            view.outcome_made_up(d)
        assert err.value.pointer == "/pending/drawn"


def test_a_sampled_world_s_drawn_cards_are_where_it_says(engine: Engine) -> None:
    """`determinize` swapped which Special cards (or contracts) were drawn without moving their
    places: a world's drawn cards still read as in the deck, and its events named a kept card as
    coming from the Special deck and dropped the one put back."""
    g = engine.from_json(make_state(caravans=[ADELIGE, None], special_top=["bootsmann", "gildenherr"]))
    g.apply("c0:a")
    for seed in range(1, 20):
        world = g.determinize(1, seed)
        d = world.state.export()
        drawn = [d[L.O_LIMBO + i] for i in range(d[L.S_LIMBO_N])]
        assert all(d[L.O_LOC + c] == L.L_LIMBO for c in drawn), seed
        in_deck = [d[L.O_SPC + ((d[L.S_SPC_TOP] + i) & (L.SPC_CAP - 1))] for i in range(d[L.S_SPC_N])]
        assert all(d[L.O_LOC + c] == L.L_SPC for c in in_deck), seed
        cards = [e for e in world.apply(str(world.legal()[0])) if e["event"] == "card"]
        assert sorted(e["from"] for e in cards) == ["drawn", "drawn"], cards
    g = engine.from_json(make_state(caravans=[[["bauer", "patriarch"], ["patriarch", "marktfrau"]], None],
                                    contract_top=[1, 2, 29]))
    g.apply("c0:a")
    for seed in range(1, 20):
        d = g.determinize(1, seed).state.export()
        assert all(d[L.O_CLOC + d[L.O_LIMBO + i]] == L.CL_LIMBO for i in range(d[L.S_LIMBO_N])), seed


@pytest.mark.parametrize(("drawn", "last", "n", "why"), [
    ([17, 18, 19], -1, 2, "only when at least 2 are free"),  # all large: play takes nothing, asks nothing
    ([1, 18, 19], -1, 2, "only when at least 2 are free"),  # one free: taken at once
    ([17, 18], 1, 1, "no free contract .not large. is left above contract 1"),  # after picking 1: step ends
])
def test_the_loader_refuses_hufschmied_pauses_play_never_makes(engine: Engine, drawn: list[int], last: int,
                                                               n: int, why: str) -> None:
    g = engine.from_json(make_state(caravans=[HUFSCHMIED, None], contract_top=[1, 2, 17], display=[4, 12, 20, 33]))
    g.apply("c0:a")
    doc = g.to_json()
    assert doc["pending"]["drawn"] == [1, 2, 17] and engine.from_json(doc).legal_codes() == g.legal_codes()
    bad = json.loads(json.dumps(doc))
    deck = bad["decks"]["contract"]
    cards = deck["cards"] if isinstance(deck, dict) else deck
    for c in [1, 2, 17]:  # the real draw goes back to the deck, the edited one comes out of it
        if c not in drawn:
            cards.append(c)
            if isinstance(deck, dict):
                deck["known_by"].append(1)
    for c in drawn:
        if c in cards:
            i = cards.index(c)
            cards.pop(i)
            if isinstance(deck, dict):
                deck["known_by"].pop(i)
    bad["pending"]["drawn"] = [c for c in drawn if c > last] if last > 0 else drawn
    bad["pending"]["registers"] = {"n": n, "last": last - 1 if last > 0 else -1}
    if last > 0:  # the first pick (contract `last`) was made and is the player's
        bad["seats"][0]["contracts"] = sorted([*bad["seats"][0]["contracts"], last])
        cards.remove(last) if last in cards else None
    with pytest.raises(StateError, match=why):
        engine.from_json(bad)


def test_outcome_made_up_refuses_an_illegal_decision(engine: Engine) -> None:
    """It answered True (made up) for a decision the view does not offer, where `apply` refuses."""
    from engine_ext import IllegalDecision

    g = engine.new_game(2, seed=3)
    view = engine.from_json(g.to_json(observer=g.current_player))
    illegal = next(d for d in ("c0:part", "c1:part", "c2:part") if d not in {str(x) for x in view.legal()})
    with pytest.raises(IllegalDecision, match="is not legal here"):
        view.outcome_made_up(illegal)


def test_a_full_state_without_its_reshuffle_seed_marks_a_reshuffle_made_up(engine: Engine) -> None:
    """A full state whose document leaves out `rng` (the seed of its own shuffles) gets one made
    up: a draw that reshuffles the discard pile into the Standard deck is one possible outcome;
    every other decision, with every deck's order given, is real."""
    rnd = random.Random(3)
    reshuffles = plain = 0
    for seed in range(10):
        g = engine.new_game(2, seed=seed)
        while not g.is_terminal and not (reshuffles and plain > 200):
            doc = g.to_json()
            del doc["rng"]
            unseeded = engine.from_json(doc)
            d = rnd.choice(g.legal())
            made_up = unseeded.outcome_made_up(d)
            events = g.apply(d)
            if any(e["event"] == "card" and e["from"] == "discard" and e["to"] == "drawn" for e in events) \
                    and len(set(doc["discard"])) >= 2:
                reshuffles += 1
                assert made_up, (seed, str(d))
            elif not g.is_terminal and not any(e["event"] == "card" and e["from"] == "discard" for e in events):
                plain += 1
                assert not made_up, (seed, str(d))
    assert reshuffles >= 1 and plain > 200


@pytest.mark.parametrize("left_out", ["standard", "special", "contract"])
def test_a_full_state_that_leaves_out_a_deck_marks_what_hangs_on_that_deck_only(compiled_engine: Engine,
                                                                                 left_out: str) -> None:
    """A full state that gives every deck but one: an outcome is made up exactly when other orders
    of that one deck (the rest as given) lead elsewhere. The worlds resampled every deck, so a draw
    from a deck the state gave was marked too (review of 2026-11-25: hundreds of false marks)."""
    import copy

    def cards(deck: Any) -> list[Any]:
        return list(deck["cards"] if isinstance(deck, dict) else deck)

    def outcome(doc: dict[str, Any], d: str) -> str:
        g = compiled_engine.from_json(doc)
        g.apply(d)
        return json.dumps({k: v for k, v in g.to_json().items() if k not in ("decks", "rng")}, sort_keys=True)

    rnd = random.Random(7)
    marked = {True: 0, False: 0}
    g = compiled_engine.new_game(3, seed=7)
    step = 0
    while not g.is_terminal:
        doc = g.to_json()
        d = str(rnd.choice(g.legal()))
        step += 1
        after = g.clone()
        after.apply(d)
        if step % 4 and after.to_json()["decks"][left_out] == doc["decks"][left_out]:
            g.apply(d)  # every decision that changes that deck, and every 4th of the others
            continue
        part = copy.deepcopy(doc)
        del part["decks"][left_out]
        made_up = compiled_engine.from_json(part).outcome_made_up(d)
        others = set()
        for _ in range(6):
            other = copy.deepcopy(doc)
            other["decks"][left_out] = rnd.sample(cards(doc["decks"][left_out]), len(cards(doc["decks"][left_out])))
            others.add(outcome(other, d))
        assert made_up == (len(others | {outcome(doc, d)}) > 1), (doc["turn"], d)
        marked[made_up] += 1
        g.apply(d)
    assert marked[True] >= 3 and marked[False] >= 50, marked
