"""The search's tree is sized for the budget it will run, not for one a time limit cuts short, and
grows past its allocation without changing the answer."""

from __future__ import annotations

from typing import Any

import pytest

import engine_ext
from bots import ismcts_bot
from bots.ismcts_bot import ISMCTSBot


def _key(an: Any) -> tuple[Any, ...]:
    return an.code, tuple((a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives), an.iterations


def test_a_huge_iteration_budget_with_a_tiny_time_budget_allocates_little() -> None:
    """The tree was allocated for the whole budget before the clock started (20,000,000
    iterations and 5 ms: 916 MiB, 737 ms)."""
    st = engine_ext.new_game(2, seed=5).state
    s, n, _ = ISMCTSBot().search(st, iterations=2_000_000, time_ms=5, seed=1)
    assert 0 < n < 2_000_000
    assert s.tree.cap <= ismcts_bot.TREE_PREALLOC


def test_a_tree_that_outgrows_its_allocation_gives_the_same_answer(monkeypatch: pytest.MonkeyPatch,
                                                                   engine: Any) -> None:
    g = engine.new_game(2, seed=5)
    bot = ISMCTSBot(iterations=300)
    whole = bot.analyse(g, seed=2)
    monkeypatch.setattr(ismcts_bot, "TREE_PREALLOC", 32)
    grown = bot.analyse(g, seed=2)
    assert bot.last_search.tree.cap > 32
    assert _key(grown) == _key(whole)
