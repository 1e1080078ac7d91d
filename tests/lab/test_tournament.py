"""A small bounded tournament: ISMCTS beats the random bot clearly (the real strength figures,
with intervals, are in BENCHMARKS.md)."""

from __future__ import annotations

import engine_ext
from lab import arena


def test_ismcts_beats_random_on_kashgar() -> None:
    compiled = engine_ext.compiled_available()
    games = 8 if compiled else 4
    rep = arena.run_arena(["ismcts:iterations=120", "random"], games=games, players=2, seed=11,
                          engine_compiled=compiled)
    wins = rep.wins["ismcts:iterations=120"]
    assert wins >= games - 1, rep.table()


def test_ismcts_beats_random_on_the_toy_game_with_an_interval() -> None:
    rep = arena.run_arena(["ismcts:iterations=100,evaluator=vp", "random"], games=60, game="toy", seed=1)
    rate, lo, hi = rep.win_rate["ismcts:iterations=100,evaluator=vp"]
    assert lo > 0.6, rep.table()
