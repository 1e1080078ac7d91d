"""Rewards and value functions: the heuristic evaluation of a position.

Perspective: every reward vector has one entry per seat, `r[p]` being seat `p`'s reward in [0, 1].
Terminal states give 1 to the winner and 0 to the others (ties are broken by the rules, so
exactly one winner). A non-terminal state is scored by a heuristic *value* per seat turned into a
win-probability vector by a softmax (`softmax(scale * values)`), so that both kinds of leaf sum to 1
and mean rewards read as win probabilities. A value function (`ValueFunction`) gives those values:
Kashgar's (`WeightedValue` and its kinds) in log-odds units (scale 1); `VPValue` (any game) gives
VP and has a scale of its own. The level setting `evaluator` names one (`bots.ismcts_bot.make_value`).
"""

from __future__ import annotations

import math
from typing import Any, Protocol

from bots.state import CoreState


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


class ValueFunction(Protocol):
    """Scores a non-terminal state: a value per seat (higher is better), in VP-like units."""

    scale: float

    def values(self, st: CoreState) -> list[float]: ...


class VPValue:
    """Value = VP. The cheapest value function; works for any game with `vp(p)`."""

    def __init__(self, scale: float = 0.35) -> None:
        self.scale = scale

    def values(self, st: Any) -> list[float]:
        return [float(st.vp(p)) for p in range(st.players)]


class WeightedValue:
    """Kashgar's evaluation: a weighted sum of per-seat features (`bots.features`), in log-odds units.

    Kashgar's search game computes it (`bots.kashgar_eval.KashgarSearchGame.heuristic`, compiled
    when the engine is); `values` asks one of the state's own build, so the search and this agree
    exactly. `scale` multiplies the values before the softmax (1 = as the weights were made). The
    search runs a value of this class on Kashgar's search game, which it configures with
    `engine_weights`, `rollout_weights` and `engine_model` (`bots.ismcts_bot.search_game`).
    """

    def __init__(self, weights: dict[str, tuple[float, float]], scale: float = 1.0) -> None:
        self.weights = dict(weights)
        self.scale = scale
        self._vector: list[float] | None = None
        self._cores: dict[str, Any] = {}

    def engine_weights(self) -> list[float]:
        """The weight vector Kashgar's search game takes (`KashgarSearchGame.set_weights`)."""
        if self._vector is None:
            from bots.features import engine_kind_slugs, feature_names, weight_vector

            self._vector = weight_vector(self.weights, feature_names(engine_kind_slugs()))
        return self._vector

    def rollout_weights(self) -> list[float]:
        """The weights greedy rollouts choose by: the hand-made heuristic's (a sensible player's moves,
        whatever the leaf evaluation; fitted weights predict outcomes of exactly such play)."""
        from bots.features import HAND_WEIGHTS, engine_kind_slugs, feature_names, weight_vector

        return weight_vector(HAND_WEIGHTS, feature_names(engine_kind_slugs()))

    def engine_model(self) -> tuple[list[int], Any] | None:
        """The learned model that values the search's leaves (`KashgarSearchGame.set_model`); None:
        the linear value of the weights."""
        return None

    def _core(self, st: Any) -> Any:
        from bots import build_for

        mod = build_for(st).kashgar
        core = self._cores.get(mod.__name__)
        if core is None:
            core = mod.KashgarSearchGame(self.engine_weights())
            self._cores[mod.__name__] = core
        return core

    def values(self, st: Any) -> list[float]:
        core = self._core(st)
        return [core.heuristic(st, p) for p in range(st.players)]


class HandWeightsValue(WeightedValue):
    """The first, hand-made heuristic: VP, capped resources and the best face-up contract in reach
    (the setting `evaluator = "kashgar"`)."""

    def __init__(self, scale: float = 1.0) -> None:
        from bots.features import HAND_WEIGHTS

        super().__init__(HAND_WEIGHTS, scale)


class FittedValue(WeightedValue):
    """Weights fitted to self-play outcomes by `kashgar fit-eval` (bots/data/eval_weights.json)."""

    def __init__(self, scale: float = 1.0, path: str | None = None) -> None:
        from bots.features import load_weights

        super().__init__(load_weights(path), scale)


class PlayWeightsValue(WeightedValue):
    """Weights tuned by play: they were tuned as the weights a player chooses its moves by, so the
    search's greedy rollouts and its in-turn choices use them too (the other values roll out with
    the hand-made heuristic). `kashgar tune-eval` gives its search bots weights this way."""

    def rollout_weights(self) -> list[float]:
        return self.engine_weights()


class TunedValue(PlayWeightsValue):
    """The weights tuned by play that ship (`kashgar tune-eval`, bots/data/eval_tuned.json), or `path`'s."""

    def __init__(self, scale: float = 1.0, path: str | None = None) -> None:
        from bots.features import TUNED_WEIGHTS_FILE, load_weights

        super().__init__(load_weights(path or str(TUNED_WEIGHTS_FILE)), scale)


def default_value(st: CoreState) -> ValueFunction:
    """The value function for `st`'s game: Kashgar's hand-made heuristic for engine states (the fitted
    weights predict outcomes better but played no stronger: BENCHMARKS.md), VP otherwise."""
    if hasattr(st, "export") and hasattr(st, "res"):
        return HandWeightsValue()
    return VPValue()
