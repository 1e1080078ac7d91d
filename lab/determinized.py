"""The determinized baseline: perfect-information UCT on several sampled worlds, votes merged.

"Determinized UCT" (as in Cowling et al.'s comparisons): sample `worlds` determinizations of the
hidden decks from the player to move's information, run plain UCT on each as if it were the true
state (so the search may exploit knowledge it cannot have -- strategy fusion), and add the root
visit counts of all worlds (`bots.merge`). It shares the tree and loop of `bots/ismcts.py`, with an
search game whose worlds are all the one it was given (`OneWorld`: every iteration starts from a copy
of it instead of a determinization).

`oracle=1` makes it a diagnostic that cheats: one tree on the state exactly as given, hidden deck
order included, so in the arena (which hands every bot the true state) it knows what will be drawn.
Played against an honest search at equal iterations, it measures what knowing the hidden
information is worth in this game (BENCHMARKS.md). Never a level; the service gives bots no
hidden order to read unless its caller sent one.
"""

from __future__ import annotations

import random
import time
from typing import Any

from bots import build_for
from bots.base import Analysis, Bot, ProgressFn, StopFn, Timer, decision_point
from bots.ismcts_bot import (
    ISMCTSConfig,
    analysis_from_stats,
    make_value,
    new_search,
    resolve_budget,
    search_game,
)
from bots.merge import merge_root_stats

MAX_WORLDS = 8
ITERATIONS_PER_WORLD = 40  # with fewer, a world's tree hardly gets past its root's decisions


def worlds_for(iterations: int) -> int:
    """The default number of worlds for an iteration budget (0: a time budget, 8 worlds): one per
    40 iterations, from 1 to 8. Measured against ISMCTS at equal iterations (BENCHMARKS.md): at 100
    iterations, 8 worlds of 12 iterations lose by about 110 Elo, 2 worlds of 50 play level; at 200,
    8 worlds of 25 lose by about 40; from 300 iterations, 4 to 8 worlds are within 35 Elo of it."""
    if iterations <= 0:
        return MAX_WORLDS
    return max(1, min(MAX_WORLDS, iterations // ITERATIONS_PER_WORLD))


class OneWorld:
    """Put before a search game's class (`search_game(..., mixin=OneWorld)`): every
    iteration starts from a copy of the state searched, which is then one world of perfect
    information, instead of a determinization from the observer's information."""

    def determinize(self, root: Any, observer: int, seed: int) -> Any:
        return root.clone()


class DeterminizedBot(Bot):
    """`worlds` determinizations x perfect-information UCT, root visits summed (`worlds=0`: by the
    budget, `worlds_for`)."""

    def __init__(self, iterations: int = 2000, worlds: int = 0, name: str = "det", oracle: int = 0,
                 **kw: Any) -> None:
        if oracle not in (0, 1):
            raise ValueError(f"oracle must be 0 or 1, got {oracle!r}")
        if not isinstance(worlds, int) or isinstance(worlds, bool) or worlds < 0:
            raise ValueError(f"worlds must be 0 (by the budget) or a whole number, got {worlds!r}")
        self.config = ISMCTSConfig(iterations=iterations, **kw)
        self.worlds = 1 if oracle else worlds  # the given state is the one world
        self.oracle = oracle
        self.name = name

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        t = Timer()
        st, me, _ = decision_point(game)
        cfg = self.config
        iters, tms = resolve_budget(cfg, iterations, time_ms)
        rng = random.Random(seed)
        parts = []
        done = 0
        worlds = self.worlds or worlds_for(iters)
        if iters:
            worlds = min(worlds, iters)  # a world with no share and no deadline would never stop
        for w in range(worlds):
            if should_stop is not None and should_stop():
                break
            # oracle: peeks, the search reads the hidden order as given (a diagnostic)
            world = st if self.oracle else st.determinize(me, rng.getrandbits(31))
            share = iters // worlds + (1 if w < iters % worlds else 0)
            deadline = 0.0
            if tms:
                deadline = time.perf_counter() + tms / 1000.0 / worlds
            ev = make_value(cfg.evaluator, world, cfg.scale, cfg.weights)
            s = new_search(build_for(world), cfg, search_game(ev, world, cfg, OneWorld), rng.getrandbits(31),
                           share)
            done += s.run(world, me, share, deadline, should_stop, None)
            parts.append(s.root_stats())
            if progress is not None:
                progress({"iterations": done, "elapsed_ms": round(t.ms(), 1), "worlds": w + 1})
        stats = merge_root_stats(parts)
        return analysis_from_stats(st, stats, [], done, t.ms(), seed, self.name, cfg.temperature, cfg.margin)
