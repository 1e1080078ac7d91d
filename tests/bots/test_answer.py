"""The typed answer of a search (bots/answer.py): its JSON read back is the answer written, a merge
adds up by decision, a calibrated answer has chances only where its fit gives them."""

from __future__ import annotations

import json

import pytest

import engine_ext
from bots import suggest
from bots.answer import Answer
from engine_ext.decisions import Decision


def _position(level: str = "club", players: int = 3, moves: int = 9) -> suggest.Position:
    g = engine_ext.new_game(players=players, seed=11)
    for _ in range(moves):
        g.apply(g.legal_codes()[-1])
    return suggest.Position.of(engine_ext.from_json(g.view(g.current_player)), level)


@pytest.mark.parametrize("level", ["novice", "club", "expert"])
def test_an_answer_read_back_from_its_json_is_the_answer(level: str) -> None:
    position = _position(level)
    for answer in (suggest.search(position, suggest.Budget(90, None, 4)),
                   suggest.suggest(position, [suggest.Budget(60, None, s) for s in (1, 2, 3)])):
        doc = json.loads(json.dumps(answer.to_json(), allow_nan=False))  # JSON-safe: no NaN anywhere
        assert Answer.from_json(doc, position) == answer
        assert answer.level is position.level and doc["level"] == level


def test_an_answer_s_decisions_are_decisions_of_its_position() -> None:
    position = _position()
    answer = suggest.search(position, suggest.Budget(120, None, 2))
    legal = dict(zip(position.game.legal_codes(), position.game.legal(), strict=True))
    assert answer.code in legal and legal[answer.code] == answer.decision
    assert {a.code: a.decision for a in answer.alternatives} == legal
    assert answer.chosen.decision == answer.decision and answer.expected_vp == answer.chosen.expected_vp
    assert all(isinstance(d, Decision) for d in answer.line) and answer.line[0] == answer.decision
    assert answer.parts == 1 and answer.bot == "club" and answer.player == position.game.current_player
    for alt in answer.alternatives:  # a figure is a number, or None where the search has none
        assert (alt.mean_reward is None) == (alt.visits == 0) == (alt.expected_vp is None)


def test_a_finished_answer_of_parts_names_no_bot_and_counts_its_parts() -> None:
    position = _position()
    whole = suggest.suggest(position, [suggest.Budget(50, None, s) for s in (7, 8)])
    doc = whole.to_json()
    assert whole.parts == doc["parts"] == 2 and whole.workers == 2 and whole.seed == 7
    assert whole.bot is None and "bot" not in doc and "player" not in doc  # as the merged answer always said
    one = suggest.suggest(position, [suggest.Budget(50, None, 7)])
    assert one.parts == 1 and one.to_json()["bot"] == "club"
