"""`kashgar play` in words: the contracts on display, what each decision does, what happened."""

from __future__ import annotations

import io

import engine_ext
from engine_ext import words as W
from kashgar_cli import play


def test_the_terminal_game_shows_contracts_and_what_each_decision_does() -> None:
    answers = iter(["0", "0", "q"])
    out = io.StringIO()
    args = play.argparse.Namespace(players=2, seat=0, level="novice", seed=5, url=None, auto=False,
                                   max_decisions=0)
    assert play.play(args, play.LocalTable(), lambda prompt: next(answers), out) == 0
    text = out.getvalue()
    state = engine_ext.new_game(players=2, seed=5).to_json()
    for number in state["display"]:
        assert W.contract_text(number) in text
    assert "c0:a" in text and "Patriarch, caravan 1: draw 2 Standard cards and keep one" in text
    assert "{'event'" not in text
