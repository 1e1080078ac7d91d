"""The random bot: a uniformly random legal decision. The floor of every ladder."""

from __future__ import annotations

import random
from typing import Any

from bots.base import Alternative, Analysis, Bot, ProgressFn, StopFn, Timer, decision_point


class RandomBot(Bot):
    """Plays a uniformly random legal decision (seeded)."""

    name = "random"

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        t = Timer()
        st, _, codes = decision_point(game)
        code = codes[random.Random(seed).randrange(len(codes))]
        p = st.current_player()
        alts = [Alternative(c, 1 if c == code else 0, float("nan"), float("nan"), float("nan"))
                for c in codes]
        return Analysis(code, alts, [code], 1, t.ms(), seed, self.name, p)
