"""Rewards and heuristic evaluation.

Perspective: every reward vector has one entry per seat, `r[p]` being seat `p`'s reward in [0, 1].
Terminal states give 1 to the winner and 0 to the others (ties are broken by the rules, so
exactly one winner). A non-terminal state is scored by a heuristic *value* per seat (in VP-like
units) turned into a win-probability vector by a softmax, so that both kinds of leaf sum to 1
and mean rewards read as win probabilities.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

# Resource indices (docs/engine-api.md).
GINGER, CLOVES, PEPPER, ANISE, CINNAMON, GOLD, MULES = range(7)
SPICES = (GINGER, CLOVES, PEPPER, ANISE, CINNAMON)


def terminal_rewards(st: Any) -> list[float]:
    """1 for the winner, 0 for every other seat."""
    w = st.winner()
    n = st.players
    return [1.0 if p == w else 0.0 for p in range(n)]


def softmax_rewards(values: list[float], scale: float) -> list[float]:
    """Win probabilities from per-seat values: exp(scale * v_p) / sum_q exp(scale * v_q)."""
    m = max(values)
    ex = [math.exp(scale * (v - m)) for v in values]
    s = sum(ex)
    return [e / s for e in ex]


class Evaluator(Protocol):
    """Scores a non-terminal state: a value per seat (higher is better), in VP-like units."""

    scale: float

    def values(self, st: Any) -> list[float]: ...


class VPEvaluator:
    """Value = VP. The cheapest evaluator; works for any game with `vp(p)`."""

    def __init__(self, scale: float = 0.35) -> None:
        self.scale = scale

    def values(self, st: Any) -> list[float]:
        return [float(st.vp(p)) for p in range(st.players)]


class _EngineTables:
    """Contract tables and state-array offsets of the engine, read once (None without an engine)."""

    def __init__(self) -> None:
        self.loaded = False
        self.con_vp: list[int] = []
        self.con_mules: list[int] = []
        self.con_cost: list[int] = []
        self.layout: dict[str, int] = {}

    def load(self) -> bool:
        if not self.loaded:
            self.loaded = True
            try:
                from engine_ext import carddata
                from engine_ext import core as core_py

                t = carddata.default().tables
                self.con_vp = list(t["con_vp"])
                self.con_mules = list(t["con_mules"])
                self.con_cost = list(t["con_cost"])
                self.layout = dict(core_py.layout())
            except Exception:  # noqa: BLE001 - no engine: VP only
                self.layout = {}
        return bool(self.layout)


TABLES = _EngineTables()


class KashgarEvaluator:
    """VP plus what the position is worth: resources, and the best face-up contract within reach.

    value(p) = VP
             + spice * sum(min(spice_k, 7)) + gold * min(gold, 7) + mules * min(mules, 5)
             + reach * max over face-up contracts c of VP(c) * coverage(c) ** 2,
    coverage(c) = the part of c's cost (spices, gold, and mules: the larger of requirement and
    cost) the player already holds. The compiled search computes the same formula on the state
    array (`Search.heuristic`); `engine_weights` hands it the weights.
    """

    def __init__(self, scale: float = 0.35, spice: float = 0.2, gold: float = 0.18, mules: float = 0.22,
                 reach: float = 0.35) -> None:
        self.scale = scale
        self.w_spice = spice
        self.w_gold = gold
        self.w_mules = mules
        self.w_reach = reach

    def engine_weights(self) -> tuple[float, float, float, float]:
        return (self.w_spice, self.w_gold, self.w_mules, self.w_reach)

    def values(self, st: Any) -> list[float]:
        n = st.players
        if not hasattr(st, "export") or not TABLES.load():
            return [float(st.vp(p)) for p in range(n)]
        d = st.export()
        lay = TABLES.layout
        o_res, o_disp = lay["O_RES"], lay["O_DISP"]
        display = [d[o_disp + i] for i in range(d[lay["S_DISP_N"]])]
        cost, req, cvp = TABLES.con_cost, TABLES.con_mules, TABLES.con_vp
        out = []
        for p in range(n):
            r = d[o_res + 7 * p: o_res + 7 * p + 7]
            v = float(st.vp(p))
            v += self.w_spice * sum(min(r[k], 7) for k in SPICES)
            v += self.w_gold * min(r[GOLD], 7)
            v += self.w_mules * min(r[MULES], 5)
            best = 0.0
            for c in display:
                total = covered = 0
                for k in range(6):
                    need = cost[c * 7 + k]
                    total += need
                    covered += min(need, r[k])
                need = max(req[c], cost[c * 7 + MULES])
                total += need
                covered += min(need, r[MULES])
                if total > 0:
                    x = covered / total
                    best = max(best, cvp[c] * x * x)
            out.append(v + self.w_reach * best)
        return out


def default_evaluator(st: Any) -> Evaluator:
    """The evaluator for `st`'s game: Kashgar's heuristic when the core has its readers."""
    if hasattr(st, "export") and hasattr(st, "res"):
        return KashgarEvaluator()
    return VPEvaluator()
