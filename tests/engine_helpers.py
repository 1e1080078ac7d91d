"""Helpers for the engine tests: random walks and perft (the bookkeeping checks are `engine_ext.checks`)."""

from __future__ import annotations

import os
import random
from typing import Any, NoReturn

import pytest

import engine_ext
from engine_ext import Engine, Game


def missing_build(what: str) -> NoReturn:
    """A compiled build (`what`) is not there: a failure where it must be (CI, the README's test
    command: KASHGAR_REQUIRE_COMPILED), else a skip."""
    if os.environ.get("CI") or os.environ.get("KASHGAR_REQUIRE_COMPILED"):
        pytest.fail(f"the compiled {what} is not built (run `pip install -e .`)")
    pytest.skip(f"compiled {what} not built")


def require_compiled() -> None:
    """The compiled engine core, or `missing_build`."""
    if not engine_ext.compiled_available():
        missing_build("engine")


def require_compiled_search() -> Any:
    """The compiled build of the search (`bots.load_build(True)`), or `missing_build`."""
    import bots

    try:
        return bots.load_build(True)
    except ImportError:
        missing_build("search")


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
