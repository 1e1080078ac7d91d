"""`served:LEVEL` (lab/served.py): a level played as the service answers it, its budget in the
service's root-parallel parts, merged; what the lab measures of the asynchronous levels."""

from __future__ import annotations

from typing import Any

import pytest

import engine_ext
from lab import arena
from lab.bots import make_bot
from lab.served import ServedBot


def test_a_one_part_level_served_plays_the_level_s_own_games() -> None:
    """advanced fits one part: served, it plays the very games the level plays (same seeds)."""
    served = arena.run_arena(["served:advanced", "advanced"], games=2, players=2, seed=31)
    alone = arena.run_arena(["level:advanced", "advanced"], games=2, players=2, seed=31)
    assert [(r.vps, r.decisions) for r in served.results] == [(r.vps, r.decisions) for r in alone.results]


def test_grandmaster_is_served_in_four_merged_parts(served_small: list[Any]) -> None:
    st = engine_ext.new_game(players=3, seed=12).state
    an = ServedBot("grandmaster").analyse(st, seed=5)
    assert [(s.level, s.iterations, s.parallel, s.seed) for s in served_small] == [("grandmaster", 80_000, 4, 5)]
    legal = set(st.legal_codes())
    assert {a.code for a in an.alternatives} <= legal and an.code in legal
    assert an.iterations == 800 and sum(a.visits for a in an.alternatives) == 800
    assert an.code == max(an.alternatives, key=lambda a: a.visits).code  # always its best move
    assert an.player == st.current_player() and an.bot == "served:grandmaster"


def test_a_served_level_at_a_budget_in_parts(served_small: list[Any]) -> None:
    """`served:LEVEL:iterations=N,parts=K`: the level's search at N iterations in K merged parts, as a
    client asks /suggest with a level, `iterations` and `parallel` (the split's cost is measured so)."""
    st = engine_ext.new_game(players=2, seed=3).state
    an = make_bot("served:master:iterations=1200,parts=4").analyse(st, seed=9)
    one = make_bot("served:master:iterations=1200,parts=1").analyse(st, seed=9)
    assert [(s.level, s.iterations, s.parallel, s.time_ms) for s in served_small] == [
        ("master", 1200, 4, None), ("master", 1200, 1, None)]
    assert an.iterations == one.iterations == 12  # the fixture runs 1/100 of what is asked
    assert sum(a.visits for a in an.alternatives) == 12


@pytest.mark.parametrize(("spec", "says"), [
    ("served:nobody", "unknown level 'nobody'"),
    ("served:master:c=5", "takes only iterations and parts"),
    ("served:master:parts=0", "parts must be 1 to 64"),
    ("served:master:iterations=0", "iterations must be at least 1"),
    ("served:master:parts=2.5", "whole numbers"),
])
def test_a_bad_served_spec_is_refused(spec: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        make_bot(spec)


def test_a_budget_cannot_be_given_to_a_served_level() -> None:
    with pytest.raises(ValueError, match="level's budget"):
        ServedBot("advanced").analyse(engine_ext.new_game(players=2, seed=1).state, iterations=10)
