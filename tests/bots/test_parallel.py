"""Root-parallel search (`bots.parallel`): the budget split over workers, progress, a forced
decision, and the parts of workers that died left out of the merge."""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import pytest

import bots.parallel as parallel
import engine_ext
from bots.ismcts_bot import ISMCTSConfig
from bots.levels import get_level

needs_fork = pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                                reason="the dying worker is patched in by fork")


def test_root_parallel_never_starts_a_worker_without_iterations() -> None:
    """A share of 0 fell back to the level's own budget: expert, 2 iterations over 4 workers,
    searched 602."""
    g = engine_ext.new_game(2, seed=5)
    an = parallel.root_parallel(g, get_level("expert").config, workers=4, iterations=2, seed=1)
    assert an.iterations == 2
    assert sum(a.visits for a in an.alternatives) == 2


def test_root_parallel_reports_iterations_and_does_not_search_a_forced_decision() -> None:
    g = engine_ext.new_game(2, seed=5)
    seen: list[dict[str, Any]] = []
    parallel.root_parallel(g, ISMCTSConfig(iterations=0), workers=2, time_ms=300, seed=1,
                           progress=seen.append)
    assert seen and all(isinstance(r["iterations"], int) for r in seen)
    rng = random.Random(0)
    while len(g.legal_codes()) != 1:
        assert not g.is_terminal
        g.state.apply_unchecked(rng.choice(g.legal_codes()))
    an = parallel.root_parallel(g, get_level("expert").config, workers=2, seed=1)
    assert an.iterations == 0 and an.code == g.legal_codes()[0]
    assert [(a.code, a.visits) for a in an.alternatives] == [(an.code, 0)]  # as analyse answers


_REAL_WORKER = parallel._worker
_DYING: set[int] = set()


def _dying_worker(payload: Any, compiled: bool | None, config: ISMCTSConfig, iterations: int,
                  time_ms: float, seed: int) -> dict[str, Any]:
    if seed in _DYING:
        os._exit(3)  # an OOM kill or a crash of this worker
    return _REAL_WORKER(payload, compiled, config, iterations, time_ms, seed)


@needs_fork
def test_root_parallel_merges_the_workers_that_survive(monkeypatch: pytest.MonkeyPatch) -> None:
    """One dead worker raised BrokenProcessPool and the others' parts were thrown away."""
    g = engine_ext.new_game(2, seed=5)
    seeds = parallel.worker_seeds(1, 3)
    monkeypatch.setattr(parallel, "_worker", _dying_worker)
    monkeypatch.setattr(sys.modules[__name__], "_DYING", {seeds[1]})
    an = parallel.root_parallel(g, ISMCTSConfig(), workers=3, iterations=90, seed=1)
    assert an.iterations == 60 and sum(a.visits for a in an.alternatives) == 60
    monkeypatch.setattr(sys.modules[__name__], "_DYING", set(seeds))
    with pytest.raises(RuntimeError, match="all 3 workers failed"):
        parallel.root_parallel(g, ISMCTSConfig(), workers=3, iterations=90, seed=1)
