"""A hint says why (`service/reasons.py`): one sentence from the search's own numbers and from what
its expected line does for the player to move."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from flask import Flask

import engine_ext
from engine_ext.decisions import Decision
from engine_ext.words import words
from service import create_app
from service.reasons import line_effects
from tests.builders import resources_dict, solo


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app({"TESTING": True, "log_level": "WARNING"})


def _view(seed: int, decisions: int) -> dict[str, Any]:
    game = engine_ext.new_game(2, seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        game.apply(rng.choice(game.legal_codes()))
    return game.view(game.current_player)


def _suggest(app: Flask, state: dict[str, Any], level: str) -> dict[str, Any]:
    r = app.test_client().post("/suggest", json={"state": state, "level": level, "seed": 3, "mode": "sync"})
    assert r.status_code == 200, r.get_json()
    return r.get_json()  # type: ignore[no-any-return]


@pytest.mark.parametrize("seed,decisions", [(102, 40), (103, 20)])
def test_a_hint_s_reason_names_the_decision_and_the_figures_of_the_next_best(app: Flask, seed: int,
                                                                              decisions: int) -> None:
    answer = _suggest(app, _view(seed, decisions), "expert")
    best = answer["alternatives"][0]
    runner = next(a for a in answer["alternatives"][1:] if a["visits"] > 0)
    assert best["decision_text"] == answer["decision_text"]
    said = answer["reason"]
    assert said.lower().startswith(answer["description"].lower()[:30]) and said.endswith(".")
    assert f"{100 * best['win_prob']:.0f}% to win against {100 * runner['win_prob']:.0f}%" in said
    assert f"{best['expected_vp']:.1f} VP expected against {runner['expected_vp']:.1f}" in said
    assert runner["description"] in said


def test_where_the_fit_cannot_tell_alternatives_apart_the_reason_gives_no_chance(app: Flask) -> None:
    answer = _suggest(app, _view(101, 0), "novice")
    assert all(a["win_prob"] is None for a in answer["alternatives"])
    assert "%" not in answer["reason"] and "VP expected against" in answer["reason"]


def test_the_line_s_effects_are_the_contract_it_fulfils_and_the_vp_it_scores() -> None:
    start = resources_dict(3, cinnamon=6, mules=3)
    game = engine_ext.from_json(solo("zimtfuerst", res0=start, display=[17, 1, 9, 29]))
    said = words(game.engine.data)
    played = game.clone()
    line = [Decision.parse(t) for t in ("c0:a", "fulfil 17")]
    for d in line:
        played.apply(d)
    while any(d.kind == "choose" for d in played.legal()):  # the substitutes, one at a time
        line.append(next(d for d in played.legal() if d.kind == "choose"))
        played.apply(line[-1])
    effects = line_effects(game, line, 0, said)
    assert effects[0] == f"fulfils {said.contract(17)}"
    assert re.fullmatch(r"scores \d+ VP", effects[-1])
    scored = int(effects[-1].split()[1])
    assert scored == played.vp(0) - game.vp(0) > 0
    # a line read on another state stops at its first step not legal there; the game is left as it was
    assert line_effects(game, [Decision.parse("fulfil 17"), *line], 0, said) == []
    assert game.to_json() == engine_ext.from_json(solo("zimtfuerst", res0=start, display=[17, 1, 9, 29])).to_json()


def test_a_view_s_line_never_names_a_card_it_would_draw() -> None:
    """On a view the deck order is made up: a kept card of a draw is not named; one taken from the
    discard pile, which the seat sees, is."""
    game = engine_ext.new_game(2, 7)
    rng = random.Random(7)
    checked = 0
    while not game.is_terminal and checked < 200:
        view = engine_ext.from_json(game.view(game.current_player))
        legal = view.legal()
        keeps = [d for d in legal if d.kind == "keep"]
        if keeps:
            assert line_effects(view, [keeps[0]], int(view.current_player), words(view.engine.data)) == []
            checked += 1
        game.apply(rng.choice(game.legal_codes()))
    assert checked > 0


def test_a_review_s_better_move_says_why_against_the_move_played() -> None:
    from service import review
    from tests.builders import random_record

    record = random_record(seed=33, moves=16, rng_seed=7, players=2)
    done = review.run_all(review.plan(record, "advanced", None, 4321))
    differing = [d for d in done["decisions"] if d["best"] != d["played"]]
    assert differing and all(d["reason"] is None for d in done["decisions"] if d["best"] == d["played"])
    for d in differing:
        assert d["reason"].endswith(".") and "for the move played" in d["reason"]
        if d["best_win_prob"] is not None and d["played_win_prob"] is not None:
            assert f"{100 * d['best_win_prob']:.0f}% to win against {100 * d['played_win_prob']:.0f}%" in d["reason"]
