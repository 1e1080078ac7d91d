"""The final choice's margin: a sampled choice is drawn only among the most visited move and the
moves whose mean reward is at most `margin` log-odds below it, so a small budget's flat visits
never make a level play a move its own search saw to be clearly worse, whatever the score."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import engine_ext
from bots import suggest
from bots.answer import AlternativeStats, Answer
from bots.base import final_choice, plausible, sample_by_temperature
from bots.levels import make_bot
from bots.position import Position
from lab.arena import cached_bot

FLAT = [3.0, 3.0, 2.0, 2.0, 2.0]
MEANS = [0.60, 0.58, 0.55, 0.30, 0.10]  # log-odds 0.41, 0.32, 0.20, -0.85, -2.20: the last two clearly worse


def test_plausible_keeps_the_first_and_the_moves_within_the_margin() -> None:
    assert plausible(FLAT, MEANS, 0.3) == [True, True, True, False, False]
    assert plausible(FLAT, MEANS, 1.3) == [True, True, True, True, False]
    assert plausible(FLAT, MEANS, 0.05) == [True, False, False, False, False]
    assert plausible(FLAT, MEANS, 0.0) == [True] * 5  # 0: no margin
    # a move never visited has no mean and is never plausible; the first is kept whatever its mean
    assert plausible([4.0, 0.0, 1.0], [0.2, float("nan"), 0.9], 0.3) == [True, False, True]
    # the first without a mean (no visits anywhere): no bar
    assert plausible([0.0, 0.0], [float("nan"), float("nan")], 0.3) == [True, True]
    # means of exactly 0 or 1 stay finite
    assert plausible([2.0, 1.0, 1.0], [1.0, 1.0, 0.0], 0.3) == [True, True, False]


def _vp_reward(lead: int) -> float:
    """The VP evaluator's reward at 2 players: the softmax of 0.35 x VP, for a lead of `lead`."""
    return 1.0 / (1.0 + math.exp(-0.35 * lead))


@pytest.mark.parametrize("lead", [0, 6, -8, 14])
def test_the_margin_is_the_same_bar_whatever_the_score(lead: int) -> None:
    """A move two points worse is left out, and one half a point worse kept, when the score is
    close and when it is lopsided: in reward units two points shrink from 0.17 at an even score
    to 0.03 at a 14-point lead, which a bar in reward units would let through."""
    best, half, two = _vp_reward(lead), 1.0 / (1.0 + math.exp(-0.35 * (lead - 0.5))), _vp_reward(lead - 2)
    assert plausible([3.0, 3.0, 3.0], [best, half, two], 0.5) == [True, True, False]


def test_a_sampled_choice_never_draws_a_move_below_the_margin() -> None:
    drawn = {final_choice(FLAT, 1.0, seed, position_key=7, means=MEANS, margin=0.3) for seed in range(400)}
    assert drawn == {0, 1, 2}
    wide = {final_choice(FLAT, 1.0, seed, position_key=7, means=MEANS, margin=0.0) for seed in range(400)}
    assert wide == {0, 1, 2, 3, 4}


def test_no_margin_draws_exactly_as_before() -> None:
    """A level without a margin (0, the default) keeps its draws: the same seed and position give
    the same choice as the plain temperature draw over the visits."""
    for seed in range(200):
        rng = random.Random((seed << 32) | 7)
        assert final_choice(FLAT, 0.6, seed, 7, MEANS, 0.0) == sample_by_temperature(list(range(5)), FLAT, 0.6, rng)
        assert final_choice(FLAT, 0.6, seed, 7, MEANS, 0.0) == final_choice(FLAT, 0.6, seed, 7)


def test_temperature_zero_is_the_most_visited_whatever_the_margin() -> None:
    assert {final_choice(FLAT, 0.0, s, 3, MEANS, 0.05) for s in range(20)} == {0}
    assert {final_choice(FLAT, 0.0, s, 3, MEANS, 0.0) for s in range(20)} == {0}


@pytest.mark.parametrize("value", [-0.1, "x", True, float("nan"), float("inf")])
def test_a_wrong_margin_is_refused_by_name(value: Any) -> None:
    from bots.ismcts_bot import ISMCTSConfig

    with pytest.raises(ValueError, match="margin"):
        ISMCTSConfig(margin=value)


def _part(position: Position, seed: int) -> Answer:
    """A made-up part of a search of `position`: its first legal decisions with FLAT and MEANS."""
    game = position.game
    alts = tuple(AlternativeStats(game.decision(c), c, int(v), m, None, 10.0)
                 for c, v, m in zip(game.legal_codes(), FLAT, MEANS, strict=False))
    assert len(alts) == len(FLAT)
    return Answer(decision=alts[0].decision, code=alts[0].code, alternatives=alts, line=(), win_prob=None,
                  iterations=12, elapsed_ms=1.0, seed=seed, level=position.level, compiled=True, workers=1,
                  parts=1, player=game.current_player, bot=position.level.name)


def test_merged_parts_choose_with_the_margin() -> None:
    """Search parts merged by the service choose as one search does: with the margin given, or
    the level's."""
    position = Position.of(engine_ext.new_game(players=2, seed=4), "novice")
    moves = [position.game.decision(c) for c in position.game.legal_codes()]
    chosen = {suggest.merge([_part(position, s), _part(position, s + 1)], position, temperature=1.0,
                            margin=0.3).decision for s in range(200)}
    assert chosen == set(moves[:3])
    every = {suggest.merge([_part(position, s), _part(position, s + 1)], position, temperature=1.0,
                           margin=0.0).decision for s in range(200)}
    assert set(moves[3:5]) <= every


def test_a_search_bot_applies_its_margin_to_its_own_statistics() -> None:
    """On a real position the chosen move is always one the bot's own statistics call plausible."""
    game = engine_ext.new_game(2, seed=5)
    bot = make_bot("novice:margin=0.05")
    for seed in range(30):
        an = bot.analyse(game, seed=seed)
        alts = an.alternatives
        keep = plausible([float(a.visits) for a in alts], [a.mean_reward for a in alts], 0.05)
        assert keep[[a.code for a in alts].index(an.code)], seed
    assert cached_bot("novice:margin=0.05").config.margin == 0.05


def test_every_sampled_level_draws_only_among_plausible_moves() -> None:
    """No shipped level draws its move over every alternative: a level with a temperature has a
    margin, the others take their most visited move (BENCHMARKS.md, "A ladder without random
    blunders")."""
    from bots.levels import load_levels

    levels = load_levels()
    assert all(lv.config.temperature == 0.0 or lv.config.margin > 0.0 for lv in levels)
    assert [lv.name for lv in levels if lv.config.temperature > 0.0] == ["novice", "beginner", "casual", "club",
                                                                         "skilled"]
