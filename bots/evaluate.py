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


class _ContractTable:
    """Requirement and cost of every contract, read once from the engine's card data."""

    def __init__(self) -> None:
        self.vp: dict[int, int] = {}
        self.mules: dict[int, int] = {}
        self.cost: dict[int, list[int]] = {}
        self.loaded = False

    def load(self) -> bool:
        if self.loaded:
            return bool(self.vp)
        self.loaded = True
        try:
            import engine_ext

            data = engine_ext.contracts() if hasattr(engine_ext, "contracts") else None
        except Exception:  # noqa: BLE001 - no engine, no contract table
            return False
        if not data:
            return False
        names = ["ginger", "cloves", "pepper", "anise", "cinnamon", "gold", "mules"]
        for row in data:
            num = int(row.get("number", row.get("id", 0)))
            cost = [0] * 7
            for k, v in dict(row.get("cost", {})).items():
                if k in names:
                    cost[names.index(k)] = int(v)
            self.vp[num] = int(row.get("vp", 0))
            self.mules[num] = int(row.get("mules", row.get("mules_required", 0)))
            self.cost[num] = cost
        return bool(self.vp)


CONTRACTS = _ContractTable()


class KashgarEvaluator:
    """VP plus what the position is worth: resources, contracts within reach, fulfilled contracts.

    It reads the core state through the cheap readers of docs/requests-bots.md (`res`, `display_len`,
    `display_at`); where the core lacks them it falls back to VP only.
    """

    def __init__(self, scale: float = 0.35, spice: float = 0.22, gold: float = 0.2, mules: float = 0.25,
                 reach: float = 0.5) -> None:
        self.scale = scale
        self.w_spice = spice
        self.w_gold = gold
        self.w_mules = mules
        self.w_reach = reach

    def values(self, st: Any) -> list[float]:
        n = st.players
        res_fn = getattr(st, "res", None)
        if res_fn is None:
            return [float(st.vp(p)) for p in range(n)]
        display: list[int] = []
        if CONTRACTS.load() and hasattr(st, "display_len"):
            display = [st.display_at(i) for i in range(st.display_len())]
        out = []
        for p in range(n):
            r = [res_fn(p, k) for k in range(7)]
            v = float(st.vp(p))
            v += self.w_spice * sum(min(r[k], 7) for k in SPICES)
            v += self.w_gold * min(r[GOLD], 7)
            v += self.w_mules * min(r[MULES], 5)
            best = 0.0
            for c in display:
                if r[MULES] < CONTRACTS.mules.get(c, 99):
                    continue
                cost = CONTRACTS.cost.get(c)
                if cost is not None and all(r[k] >= cost[k] for k in range(7)):
                    best = max(best, float(CONTRACTS.vp.get(c, 0)))
            v += self.w_reach * best
            out.append(v)
        return out


def default_evaluator(st: Any) -> Evaluator:
    """The evaluator for `st`'s game: Kashgar's heuristic when the core has its readers."""
    if hasattr(st, "res"):
        return KashgarEvaluator()
    return VPEvaluator()
