"""The SO-ISMCTS bot: the `Bot` interface over the search of `bots/ismcts.py`.

The bot makes the search's two injected parts, as OpenSpiel's MCTSBot gets its evaluator and random
state: the search game (`search_game`: Kashgar's compiled one, `bots/kashgar_eval.py`, for the
weighted values of engine states; else the search's own, which values leaves by a value function
of `bots.evaluate`) and the random stream (`Rng`, from the seed). The build (compiled or
interpreted) is the state's (`bots.build_for`). Then it runs the search, reads the root statistics
and picks the final decision (by visit count, or sampled with a temperature over visit counts for
the human-like lower levels).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from bots import Build, build_for, engine_build
from bots.base import (
    Alternative,
    Analysis,
    Bot,
    ProgressFn,
    StopFn,
    Timer,
    decision_point,
    expected_line,
    final_choice,
    position_key,
)
from bots.evaluate import (
    FittedValue,
    HandWeightsValue,
    TunedValue,
    ValueFunction,
    VPValue,
    WeightedValue,
    default_value,
)
from bots.state import CoreState
from engine_ext import Decision
from engine_ext.carddata import default as default_card_data

ROLLOUTS = ("eval", "turn")
EVALUATORS = ("default", "fitted", "kashgar", "learned", "tuned", "vp")
TREE_PREALLOC = 1 << 16  # nodes allocated before a search at most (the tree grows beyond, when needed)


@dataclass(frozen=True)
class ISMCTSConfig:
    """Everything that shapes one search. Levels are presets of these fields (bots/data/levels.toml)."""

    iterations: int = 2000        # budget when the caller gives none (0: time only)
    time_ms: float = 0.0          # wall-clock budget when the caller gives none (0: none)
    c: float = 0.7                # UCB exploration constant
    rollout: str = "eval"         # "eval": `depth` random decisions then the evaluation; "turn" (Kashgar): the
                                  # rest of the turn epsilon-greedily, then the evaluation (other games: "eval")
    depth: int = 8                # rollout="eval": random decisions before the evaluation
    eps: float = 0.1              # rollout="turn": chance of a random decision instead of the greedy one
    macro: int = 0                # 1: below the root, decisions within a turn are the mover's greedy
                                  # choices (the tree branches on turns: which card, which action);
                                  # 2: also the other seats' whole turns, so below the root the tree
                                  # holds only the searching player's turns (Kashgar's weighted values)
    widen: int = 0                # macro search: a node below the root visited this many times branches on the
                                  # next greedy decision, among the k ranked first (k = sqrt(visits / widen));
                                  # 0: never (progressive widening, bots/ismcts.py)
    scale: float = 1.0            # multiplies the value function's softmax scale (values -> win probabilities)
    evaluator: str = "default"    # "default" (Kashgar: the hand-made heuristic; other games: VP), "kashgar",
                                  # "fitted" (weights fitted by `kashgar fit-eval`), "tuned" (weights tuned by
                                  # play, `kashgar tune-eval`; its rollouts choose by them too), "learned"
                                  # (leaves valued by the model of `kashgar train`, rollouts as "tuned"), "vp"
    weights: str = ""             # evaluator "fitted"/"tuned"/"default": a weights file ("" = the shipped
                                  # bots/data/eval_weights.json or bots/data/eval_tuned.json); "learned":
                                  # a model file ("" = bots/data/value_model.json)
    blend: float = 0.0            # evaluator "learned": a leaf's value is the model's logit + blend x the
                                  # linear value of the weights tuned by play (0: the model alone)
    policy: str = ""              # Kashgar's weighted values: "" = the greedy choices below the root; "learned"
                                  # (bots/data/policy_model.json) or a model file: the learned policy's
                                  # choices instead (bots.policy), in the continuation and the rollout
    policy_temp: float = 0.0      # with a policy: 0 = its best decision; > 0 = sampled by softmax(score / T)
    prior: float = 0.0            # with a policy: > 0 = PUCT-style selection, the policy's softmax the prior
                                  # and this its constant (bots/ismcts.py); 0 = UCB with availability
    policy_below: int = 1         # with a policy: 1 = it plays the choices below the root; 0 = they stay
                                  # greedy and the policy is only the root's prior (needs prior > 0)
    temperature: float = 0.0      # final choice: 0 = most visited; > 0 = sampled over visits ** (1/T)
    margin: float = 0.0           # final choice when sampled: only among the most visited and the moves
                                  # whose mean reward is at most this many log-odds below its (0: all moves)

    def __post_init__(self) -> None:
        """A setting of the wrong type or out of range is a ValueError naming it, here rather than
        deep in the search (`ismcts:c=abc`), and never searched with (`iterations=-5` or `1.5`)."""
        def number(v: Any) -> bool:
            return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

        def whole(v: Any) -> bool:
            return isinstance(v, int) and not isinstance(v, bool)

        checks: list[tuple[str, bool, str]] = [
            ("iterations", whole(self.iterations) and self.iterations >= 0, "a whole number >= 0"),
            ("time_ms", number(self.time_ms) and self.time_ms >= 0, "a number >= 0"),
            ("c", number(self.c) and self.c >= 0, "a number >= 0"),
            ("rollout", self.rollout in ROLLOUTS, f"one of {', '.join(ROLLOUTS)}"),
            ("depth", whole(self.depth) and self.depth >= 0, "a whole number >= 0"),
            ("eps", number(self.eps) and 0 <= self.eps <= 1, "a number from 0 to 1"),
            ("macro", whole(self.macro) and self.macro in (0, 1, 2), "0, 1 or 2"),
            ("widen", whole(self.widen) and self.widen >= 0, "a whole number >= 0 (0: no widening)"),
            ("scale", number(self.scale) and self.scale > 0, "a number > 0"),
            ("blend", number(self.blend) and self.blend >= 0, "a number >= 0"),
            ("policy", isinstance(self.policy, str), '"", "learned" or a policy file'),
            ("policy_temp", number(self.policy_temp) and self.policy_temp >= 0, "a number >= 0"),
            ("prior", number(self.prior) and self.prior >= 0 and (self.prior == 0 or self.policy != ""),
             "a number >= 0, and 0 without a policy"),
            ("policy_below", whole(self.policy_below) and self.policy_below in (0, 1)
             and (self.policy_below == 1 or self.prior > 0), "0 or 1, and 1 unless prior > 0"),
            ("evaluator", self.evaluator in EVALUATORS, f"one of {', '.join(EVALUATORS)}"),
            ("weights", isinstance(self.weights, str), "a file name"),
            ("temperature", number(self.temperature) and self.temperature >= 0, "a number >= 0"),
            ("margin", number(self.margin) and self.margin >= 0, "a number >= 0 (log-odds; 0: none)"),
        ]
        for name, ok, want in checks:
            if not ok:
                raise ValueError(f"{name} must be {want}, not {getattr(self, name)!r}")

    def with_(self, **kw: Any) -> ISMCTSConfig:
        return replace(self, **kw)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def make_value(name: str, st: CoreState, scale: float, weights: str = "") -> ValueFunction:
    """The value function that the setting `evaluator = name` names, for `st`'s game, its softmax
    scale multiplied by `scale`; `weights`: the weights file of the fitted or tuned value (default:
    the shipped one)."""
    makers: dict[str, Any] = {"vp": VPValue, "kashgar": HandWeightsValue,
                              "fitted": lambda: FittedValue(path=weights or None),
                              "tuned": lambda: TunedValue(path=weights or None),
                              "learned": lambda: _learned(weights)}
    if name not in EVALUATORS:
        raise ValueError(f"unknown evaluator {name!r}: one of {', '.join(EVALUATORS)}")
    if name == "default" and weights and hasattr(st, "export"):
        name = "fitted"
    ev = makers[name]() if name in makers else default_value(st)
    ev.scale *= scale
    return ev


def _learned(path: str) -> ValueFunction:
    from bots.learned import LearnedValue  # late: the model file is read only by levels that use it

    return LearnedValue(path=path or None)


def search_game(value: ValueFunction, st: CoreState, cfg: ISMCTSConfig, mixin: type | None = None) -> Any:
    """The search game the search of `st` runs with, for `value` and the rollout of `cfg`: Kashgar's
    own (`bots/kashgar_eval.py`, of `st`'s build) for a weighted value (`WeightedValue`) of an engine
    state, with its weights and its learned model, if any; else the search's generic one, which values
    leaves by `value.values` after `cfg.depth` random decisions. `mixin`: a class put before the search
    game's in a subclass (its methods take precedence)."""
    build = build_for(st)
    cls: Any
    weighted = value if isinstance(value, WeightedValue) and engine_build(st) is not None else None
    if weighted is not None:
        cls = build.kashgar.KashgarSearchGame
        args: tuple[Any, ...] = (weighted.engine_weights(), weighted.rollout_weights(), weighted.scale,
                                 cfg.rollout, cfg.depth, cfg.eps)
    else:
        cls = build.search.SearchGame
        args = (value, value.scale, cfg.depth)
    if mixin is not None:
        cls = type(f"{mixin.__name__}{cls.__name__}", (mixin, cls), {})
    out = cls(*args)
    model = weighted.engine_model() if weighted is not None else None
    if model is not None:
        out.set_model(*model)  # leaves valued by the learned model (bots.learned)
        out.blend = cfg.blend
    if cfg.policy:
        if weighted is None:
            raise ValueError("a learned policy needs Kashgar's weighted values (evaluator tuned, fitted, "
                             "default or learned, on an engine state)")
        from bots.policy import set_policy  # late: the model file is read only by levels that use it

        set_policy(out, cfg.policy, cfg.policy_temp, bool(cfg.policy_below))
    return out


def resolve_budget(cfg: ISMCTSConfig, iterations: int | None, time_ms: float | None) -> tuple[int, float]:
    """(iterations, time_ms) of one search (0: no limit of that kind): the caller's budget, else
    the config's; with neither an iteration nor a time limit, one iteration."""
    if iterations is None and time_ms is None:
        iterations, time_ms = cfg.iterations, cfg.time_ms
    iters = int(iterations or 0)
    tms = float(time_ms or 0.0)
    if iters <= 0 and tms <= 0:
        iters = 1
    return iters, tms


def new_search(build: Build, cfg: ISMCTSConfig, game: Any, seed: int, iterations: int) -> Any:
    """A search of `build` with search game `game` and a random stream from `seed`, set up by `cfg`, its
    tree sized for `iterations` (0: unknown), at most TREE_PREALLOC nodes: a huge budget that a
    time limit stops early must not allocate for every iteration it will never run (the tree grows
    when it needs to)."""
    return build.search.Search(game, build.search.Rng(seed), cfg.c, cfg.macro,
                               min(iterations + 16, TREE_PREALLOC) if iterations > 0 else 4096, cfg.widen,
                               cfg.prior)


class ISMCTSBot(Bot):
    """SO-ISMCTS over determinizations of the hidden decks, from the player to move's information."""

    def __init__(self, config: ISMCTSConfig | None = None, name: str = "ismcts",
                 leaf_value: ValueFunction | None = None, **kw: Any) -> None:
        self.config = (config or ISMCTSConfig()).with_(**kw) if kw else (config or ISMCTSConfig())
        self.name = name
        # injected: this value function (its own scale) instead of the config's `evaluator` and `weights`
        self.leaf_value = leaf_value
        self.last_search: Any = None

    def search(self, st: CoreState, *, iterations: int | None = None, time_ms: float | None = None,
               seed: int = 0, progress: ProgressFn | None = None,
               should_stop: StopFn | None = None) -> tuple[Any, int, float]:
        """Run the search on core state `st`; returns (search, iterations, elapsed ms)."""
        t = Timer()  # the clock starts before anything is set up
        cfg = self.config
        iters, tms = resolve_budget(cfg, iterations, time_ms)
        deadline = time.perf_counter() + tms / 1000.0 if tms > 0 else 0.0
        ev = self.leaf_value or make_value(cfg.evaluator, st, cfg.scale, cfg.weights)
        s = new_search(build_for(st), cfg, search_game(ev, st, cfg), seed, iters)
        cb = None
        if progress is not None:
            def cb(done: int) -> None:
                progress(progress_report(s, st, done, t.ms()))
        n = s.run(st, st.current_player(), iters, deadline, should_stop, cb)
        self.last_search = s
        return s, int(n), t.ms()

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        t = Timer()
        st, me, codes = decision_point(game)
        if len(codes) == 1:
            return forced_analysis(codes[0], me, t, seed, self.name)
        s, n, _ = self.search(st, iterations=iterations, time_ms=time_ms, seed=seed, progress=progress,
                              should_stop=should_stop)
        return analysis_from_stats(st, s.root_stats(), s.principal_line(), n, t.ms(), seed, self.name,
                                   self.config.temperature, self.config.margin)


def forced_analysis(code: int, player: int, t: Timer, seed: int, name: str) -> Analysis:
    """The answer when `code` is the only legal decision: no search (0 iterations, no statistics)."""
    alt = Alternative(code, 0, float("nan"), float("nan"), float("nan"))
    return Analysis(code, [alt], [code], 0, t.ms(), seed, name, player)


def progress_report(search: Any, st: Any, done: int, elapsed_ms: float) -> dict[str, Any]:
    """Iterations so far and the root's most visited decision (the current best)."""
    report: dict[str, Any] = {"iterations": done, "elapsed_ms": round(elapsed_ms, 1)}
    stats = search.root_stats()
    if stats and hasattr(st, "export"):
        code, visits = max(((c, v) for c, v, _, _ in stats), key=lambda cv: cv[1])
        report["decision_text"] = str(Decision.from_code(code, st, default_card_data()))
        report["visits"] = int(visits)
    return report


def analysis_from_stats(st: CoreState, stats: list[tuple[int, int, float, float]], line: list[int],
                        iterations: int, elapsed_ms: float, seed: int, name: str,
                        temperature: float, margin: float = 0.0) -> Analysis:
    """An Analysis of state `st` from (merged) root statistics (code, visits, reward sum, VP sum),
    its legal decisions only; the final choice by `final_choice` (temperature, margin, seed, position_key);
    `line`, the search's expected line, if it starts with that choice."""
    _, player, codes = decision_point(st)
    by_code = {c: (v, r, x) for c, v, r, x in stats}
    alts = []
    for c in codes:
        v, r, x = by_code.get(c, (0, 0.0, 0.0))
        mean = r / v if v else float("nan")
        alts.append(Alternative(c, int(v), mean, float("nan"), x / v if v else float("nan")))  # no chance yet
    alts.sort(key=lambda a: (-a.visits, -(a.mean_reward if a.visits else -1.0)))
    key = position_key(st) if temperature > 0 else 0
    code = alts[final_choice([float(a.visits) for a in alts], temperature, seed, key,
                             [a.mean_reward for a in alts], margin)].code
    line = expected_line(code, [(line, 0)])
    return Analysis(code, alts, line, iterations, elapsed_ms, seed, name, player)
