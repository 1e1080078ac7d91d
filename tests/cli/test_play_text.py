"""`kashgar play` in words: every card step, decision and event the engine produces is described."""

from __future__ import annotations

import io
import random
from typing import Any

import engine_ext
from kashgar_cli import play
from kashgar_cli.play_text import CardText, step_text
from service import engine as service_engine


def _words() -> CardText:
    return CardText(service_engine.cards())


def test_every_step_of_the_card_data_is_put_in_words() -> None:
    data = service_engine.cards()
    steps = {s for c in data["cards"] for action in (c["caravan"] or []) + [c["parting"] or []] for s in action}
    assert len(steps) > 40
    unknown = sorted(s for s in steps if step_text(s) == s)
    assert unknown == [], f"steps with no words in kashgar_cli/play_text.py: {unknown}"


def test_known_cards_and_contracts_read_as_the_data_says() -> None:
    words = _words()
    assert words.action("patriarch", "a") == "draw 2 from the standard deck, keep 1"
    assert words.action("patriarch", "b") == "turn this card over"
    assert words.action("patriarch", "part") == ""  # no parting action
    assert words.action("adelige", "a") == "pay 1 gold, draw 2 from the special deck, keep 1"
    assert words.action("adelige", "part") == "+2 gold"
    assert words.action("bettler", "a") == "every opponent: -2 gold, then, if an opponent has no gold: set gold to 6"
    assert words.action("boettcher", "a") == "choose a spice or gold, set it to 4, +1 mules"
    assert words.action("geldeintreiber", "a") == "+1 gold per contract you hold, +1 pepper per contract you hold"
    assert step_text("fulfil free small") == "fulfil a contract (for free, a small one)"
    assert step_text("bogus 3") == "bogus 3"  # unknown: shown as written
    assert words.contract(1) == "#1 2 VP: pay ginger 4; needs 1 mules"
    assert words.action("patriarch", "pass") == "no action, it goes to the back of its caravan"
    assert "Nobles, 1 VP" in words.card("adelige")
    assert words.contract(999) == "#999" and words.card("nobody") == "nobody"


def _random_decisions(seeds: range) -> list[tuple[dict[str, Any], dict[str, Any], int, list[Any]]]:
    """(decision, state, player, events of applying it) over random variant games."""
    out = []
    for seed in seeds:
        g = engine_ext.new_game(players=2 + seed % 3, seed=seed, variant="all")
        rng = random.Random(seed)
        while not g.state.is_terminal():
            state = g.to_json()
            player = int(g.current_player)
            choice = rng.choice(service_engine.legal(g))
            out.append((choice["decision"], state, player, list(g.apply(choice["text"]) or [])))
    return out


def test_decisions_and_events_of_real_games_are_described() -> None:
    words = _words()
    kinds: set[str] = set()
    for decision, state, player, events in _random_decisions(range(6)):
        kinds.add(decision["kind"])
        text = words.decision(decision, state, player)
        if decision["kind"] == "select":
            front = state["seats"][player]["caravans"][decision["caravan"]][0]
            assert text.startswith(words.cards[front]["english"]), (decision, text)
            assert ": " in text and not text.endswith(": ")
        elif decision["kind"] == "fulfil":
            assert text.startswith(f"#{decision['contract']} ") and " VP: " in text
        elif decision["kind"] in ("keep", "take"):
            assert text.startswith(words.cards[decision["card"]]["english"])
        for event in events:
            said = words.event(event)
            assert said and not said.startswith("{"), event
    assert {"select", "keep", "fulfil", "choose"} <= kinds


def test_the_terminal_game_shows_contracts_and_what_each_decision_does() -> None:
    answers = iter(["0", "0", "q"])
    out = io.StringIO()
    args = play.argparse.Namespace(players=2, seat=0, level="novice", seed=5, url=None, auto=False,
                                   max_decisions=0)
    assert play.play(args, play.LocalTable(), lambda prompt: next(answers), out) == 0
    text = out.getvalue()
    state = engine_ext.new_game(players=2, seed=5).to_json()
    words = _words()
    for number in state["display"]:
        assert words.contract(number) in text
    assert "c0:a" in text and "Patriarch: draw 2 from the standard deck, keep 1" in text
    assert "{'event'" not in text
