"""Golden counts (perft): from fixed seeded positions, the number of decision sequences to a
fixed depth. A change to the rules or the card data that changes what is legal shows here."""

from __future__ import annotations

import pytest

from engine_ext import Engine
from tests.engine_helpers import perft, random_walk

GOLDEN = [
    # players, setup seed, random decisions played first, depth, sequences
    (2, 1, 0, 5, 3324),
    (3, 2, 0, 4, 495),
    (4, 3, 0, 4, 468),
    (2, 5, 60, 5, 4110),  # 4175 before the Bauer asked its wheat choice with no wheat field (skip only)
    (3, 11, 150, 4, 226),  # the walk routes 3 Hirte players at decisions 71-73 (14 routes each, were 2)
    (4, 17, 90, 4, 1010),
]


@pytest.mark.parametrize("players,seed,steps,depth,expected", GOLDEN)
def test_perft(engine: Engine, players: int, seed: int, steps: int, depth: int, expected: int) -> None:
    g = random_walk(engine, players, seed, steps, variant="all")
    assert perft(g.state, depth) == expected


def test_perft_opening_by_depth(engine: Engine) -> None:
    g = engine.new_game(2, seed=1, variant="all")
    # six options at the first decision: a and b of each of the three front Patriarchs
    assert perft(g.state, 1) == 6
    assert [perft(g.state, d) for d in range(1, 4)] == sorted(perft(g.state, d) for d in range(1, 4))
