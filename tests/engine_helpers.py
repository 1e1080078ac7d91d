"""Helpers for the engine tests: random walks and perft (the bookkeeping checks are `engine_ext.checks`)."""

from __future__ import annotations

import random
from typing import Any

from engine_ext import Engine, Game


def random_walk(engine: Engine, players: int, seed: int, steps: int, variant: Any = "all") -> Game:
    """A game after `steps` random legal decisions (or at its end)."""
    g = engine.new_game(players, seed=seed, variant=variant)
    rnd = random.Random(seed)
    for _ in range(steps):
        if g.is_terminal:
            break
        g.state.apply(rnd.choice(g.legal_codes()))
    return g


def perft(state: Any, depth: int) -> int:
    """The number of decision sequences of length `depth` (fewer where the game ends)."""
    if depth == 0 or state.is_terminal():
        return 1
    total = 0
    for code in state.legal_codes():
        child = state.clone()
        child.apply_unchecked(code)
        total += perft(child, depth - 1)
    return total
