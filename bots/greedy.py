"""The greedy bot: a one-ply (one turn) player with a heuristic evaluation.

For each legal decision it looks at the position after it, and, while the same player still has
to decide within the turn (a card to keep, a resource to choose...), at its own best follow-up.
Chance (draws) is averaged over a few determinizations sampled from what the player knows, so it
never peeks at the decks. A position is scored as the player's heuristic value minus the best
opponent's (`bots.evaluate`), or +/-100 when the game is over.
"""

from __future__ import annotations

import random
from typing import Any

from bots.base import Alternative, Analysis, Bot, ProgressFn, StopFn, Timer, decision_point
from bots.evaluate import ValueFunction, default_value
from bots.state import CoreState


class GreedyBot(Bot):
    """Best decision by heuristic value one turn ahead, averaged over `samples` determinizations."""

    name = "greedy"

    def __init__(self, samples: int = 3, depth: int = 3, evaluator: ValueFunction | str | None = None,
                 weights: str = "") -> None:
        for field, value, least in (("samples", samples, 1), ("depth", depth, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < least:
                raise ValueError(f"{field} must be a whole number >= {least}, not {value!r}")
        self.samples = samples
        self.depth = depth
        self.evaluator = evaluator  # a ValueFunction, or a name ("fitted", "kashgar", "vp"); None: the default
        self.weights = weights      # the fitted value's weights file ("" = the shipped one)

    def _evaluator(self, st: CoreState) -> ValueFunction:
        if isinstance(self.evaluator, str):
            from bots.ismcts_bot import make_value

            self.evaluator = make_value(self.evaluator, st, 1.0, self.weights)
        return self.evaluator or default_value(st)

    def _score(self, st: CoreState, me: int, ev: ValueFunction) -> float:
        if st.is_terminal():
            return 100.0 if st.winner() == me else -100.0
        vals = ev.values(st)
        others = [v for p, v in enumerate(vals) if p != me]
        return vals[me] - (max(others) if others else 0.0)

    def _value(self, st: CoreState, me: int, ev: ValueFunction, depth: int) -> float:
        if depth <= 0 or st.is_terminal() or st.current_player() != me:
            return self._score(st, me, ev)
        best = -1e9
        for c in st.legal_codes():
            nxt = st.clone()
            nxt.apply_unchecked(c)
            best = max(best, self._value(nxt, me, ev, depth - 1))
        return best

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        t = Timer()
        st, me, codes = decision_point(game)
        ev = self._evaluator(st)
        rng = random.Random(seed)
        if len(codes) == 1:
            return Analysis(codes[0], [Alternative(codes[0], 1, float("nan"), float("nan"), float("nan"))],
                            [codes[0]], 0, t.ms(), seed, self.name, me)
        totals = [0.0] * len(codes)
        vps = [0.0] * len(codes)
        for _ in range(self.samples):
            det = st.determinize(me, rng.getrandbits(31))
            for i, c in enumerate(codes):
                nxt = det.clone()
                nxt.apply_unchecked(c)
                totals[i] += self._value(nxt, me, ev, self.depth - 1)
                vps[i] += nxt.vp(me)
        means = [x / self.samples for x in totals]
        top = max(means)
        best = [c for c, m in zip(codes, means, strict=False) if m >= top - 1e-9]
        code = best[rng.randrange(len(best))]
        alts = [Alternative(c, self.samples, m, float("nan"), v / self.samples)
                for c, m, v in zip(codes, means, vps, strict=False)]
        return Analysis(code, alts, [code], self.samples * len(codes), t.ms(), seed, self.name, me)
