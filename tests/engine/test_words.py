"""The renderer (`engine_ext.words`): every card step, decision and event the engine produces is
described in English from the card data, without codes."""

from __future__ import annotations

import random
import re
from typing import Any

import engine_ext
from engine_ext import words as W
from engine_ext.carddata import load_text
from engine_ext.game import seen_by
from engine_ext.words import Words, step_text

CODE = re.compile(r"\bc[0-9]:|\bNone\b|\{|\}|\bremove c[0-9]|\broute [0-9]")


def _words() -> Words:
    return W.words()


def test_every_step_of_the_card_data_is_put_in_words() -> None:
    data = engine_ext.cards()
    effects = {s for c in data["cards"] for action in (c["caravan"] or []) + [c["parting"] or []] for s in action}
    assert len(effects) > 40
    unknown = sorted(s for s in effects if step_text(s) == s)
    assert unknown == [], f"steps with no words in engine_ext/words.py: {unknown}"


def test_known_cards_and_contracts_read_as_the_data_says() -> None:
    words = _words()
    assert words.action("patriarch", "a") == "draw 2 Standard cards and keep one"
    assert words.action("patriarch", "b") == "turn this card over"
    assert words.action("patriarch", "part") == ""  # no parting action
    assert words.action("adelige", "a") == "pay 1 gold, draw 2 Special cards and keep one"
    assert words.action("adelige", "part") == "+2 gold"
    assert words.action("bettler", "a") == "every opponent: -2 gold, then, if an opponent has no gold: set gold to 6"
    assert words.action("boettcher", "a") == "choose a spice or gold, set it to 4, +1 mules"
    assert words.action("geldeintreiber", "a") == "+1 gold per contract you hold, +1 pepper per contract you hold"
    assert step_text("draw special N:contracts") == "draw 1 Special card per contract you hold and keep one"
    assert step_text("draw standard 5 front") == "draw 5 Standard cards and keep one (at the front)"
    assert step_text("fulfil free small") == "fulfil a contract (for free, a small one)"
    assert step_text("bogus 3") == "bogus 3"  # unknown: shown as written
    assert words.contract(1) == "contract #1 (2 VP; costs 4 ginger; needs 1 mule)"
    assert words.action("patriarch", "pass") == "no action, it goes to the back of its caravan"
    assert words.contract(999) == "contract #999" and words.card("nobody") == "nobody"


def test_the_public_functions_name_cards_in_english() -> None:
    assert W.card_name("zigeuner") == "Traveller"
    assert W.card_name("adelige") == "Nobles"
    assert W.card_effect_text("adelige") == ("1 VP; action: pay 1 gold, draw 2 Special cards and keep one; "
                                             "parting: +2 gold")
    assert W.card_effect_text("patriarch") == ("action 1: draw 2 Standard cards and keep one; "
                                               "action 2: turn this card over")
    state = engine_ext.new_game(players=2, seed=7).to_json()
    assert W.decision_words("c0:a", state) == "Patriarch, caravan 1: draw 2 Standard cards and keep one"
    assert W.decision_words({"kind": "select", "caravan": 0, "option": "b"}, state) == (
        "Patriarch, caravan 1: turn this card over")
    # words count seats from 1: the JSON's next_player 1 is "seat 2"
    assert W.event_text({"event": "turn_end", "next_player": 1, "game_over": False}) == "turn ends; seat 2 to play"
    assert W.event_text({"event": "resource", "player": 0, "resource": "gold", "from": 3, "to": 5},
                        seats=["you", "seat 2"]) == "you: +2 gold (now 5)"


def test_words_count_seats_caravans_and_turns_from_1() -> None:
    """The convention (docs/engine-api.md): words count from 1, JSON and codes from 0."""
    assert W.seat_words(0) == "seat 1" and W.seat_words(3) == "seat 4"
    assert W.caravan_words(0) == "caravan 1" and W.caravan_words(2, "c2:a") == "caravan 3 (c2:a)"
    assert W.turn_words(0) == "turn 1"
    assert W.seat_words(None) == "a seat" and W.caravan_words(True) == "a caravan"
    assert W.no_seat(4, 2) == "no seat of index 4 in a 2-player game (0 to 1)"
    turned = {"event": "card", "card": "patriarch", "from": {"player": 1, "caravan": 1},
              "to": {"player": 1, "caravan": 1}, "turned": "matriarch"}
    assert W.event_text(turned) == "seat 2: Patriarch in caravan 2 turned over, now Matriarch"


def test_the_farmer_s_vp_and_a_deck_read_in_words() -> None:
    """No field of the card data is shown as written: the Bauer's `vp = "wheat"`, a deck's name."""
    assert W.vp_text("wheat") == "1 VP per wheat-field contract" and W.vp_text(-1) == "-1 VP"
    assert W.vp_text(0) == "" and W.vp_text(None) == ""
    assert W.card_effect_text("bauer").startswith("1 VP per wheat-field contract; ")
    assert step_text("shuffle special") == "shuffle the Special deck"
    assert W.words().code_shown("keep bauer") == "" and W.words().code_shown("c2:a") == "c2:a"


def test_the_words_follow_the_card_data_given() -> None:
    text = engine_ext.carddata.resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
    data = load_text(text.replace('english = "Nobles"', 'english = "Noblemen"'))
    assert W.card_name("adelige", data) == "Noblemen"
    assert W.card_name("adelige", engine_ext.cards()) == "Nobles"  # the JSON of GET /cards works too


def _random_decisions(seeds: range) -> list[tuple[Any, dict[str, Any], list[Any], list[dict[str, Any]]]]:
    """(decision played, state, its legal decisions, events of applying it as each seat sees them)
    over random variant games."""
    out = []
    for seed in seeds:
        g = engine_ext.new_game(players=2 + seed % 3, seed=seed, variant="all")
        rng = random.Random(seed)
        while not g.is_terminal:
            state = g.to_json()
            legal = g.legal()
            choice = rng.choice(legal)
            tp = g.turn_player
            events = list(g.apply(choice))
            seen = [e for p in range(g.players) for e in seen_by(events, p, tp)]
            out.append((choice, state, legal, seen))
    return out


def test_every_decision_and_event_of_real_games_is_in_words_without_codes() -> None:
    words = _words()
    kinds: set[str] = set()
    events: set[str] = set()
    for decision, state, legal, seen in _random_decisions(range(6)):
        for d in legal:
            kinds.add(d.kind)
            text = words.decision(d, state)
            assert text and not CODE.search(text), (str(d), text)
        if decision.kind == "select":
            seat = state["turn_player"]
            front = state["seats"][seat]["caravans"][decision.args[0]][0]
            assert words.decision(decision, state).startswith(W.card_name(front) + ", caravan ")
        for event in seen:
            events.add(event["event"])
            said = words.event(event)
            assert said and not CODE.search(said) and "happened" not in said, (event, said)
    assert kinds == {"select", "keep", "take", "fulfil", "choose", "remove", "skip", "pay", "route"}
    assert events == {"card", "resource", "fulfil", "turn_end"}


def test_a_hidden_card_is_a_card() -> None:
    said = W.event_text({"event": "card", "card": None, "from": "special deck", "to": "drawn"})
    assert said == "a card is drawn from the Special deck"


def test_a_decision_without_its_state_is_still_in_words() -> None:
    """A step of a search's line that cannot be played out (a skipped turn) is said without the state."""
    assert W.decision_words("c1:a", {}) == "Caravan 2: its front card's first action"
    assert W.decision_words("c0:part", {}) == "Caravan 1: its front card's parting action (it leaves the game)"
    assert W.decision_words("keep adelige", {}) == "keep " + W.words().card("adelige")
    assert W.decision_words("fulfil 1", {}) == "fulfil contract #1 (2 VP; costs 4 ginger; needs 1 mule)"


def test_a_card_going_to_a_seat_s_caravan_names_whose_in_english() -> None:
    """The person is "you": a card goes to "your caravan 1" and "you keep" it; another seat's is
    "novice's", and "novice keeps"."""
    said = W.words(engine_ext.get_engine().data)
    to = {"player": 0, "caravan": 0}
    event = {"event": "card", "card": "nomade", "from": "standard", "to": to}
    assert "to your caravan 1" in said.event(event, ["you", "novice"])
    moved = {"event": "card", "card": "nomade", "from": {"player": 1, "caravan": 2}, "to": to}
    assert said.event(moved, ["you", "novice"]).endswith("from novice's caravan 3 to your caravan 1")
    kept = {"event": "card", "card": "nomade", "from": "drawn", "to": to}
    assert said.event(kept, ["you", "novice"]).startswith("you keep ")
    assert said.event(kept, ["novice", "you"]).startswith("novice keeps ")
