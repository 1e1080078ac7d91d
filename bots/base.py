"""The one interface every bot implements, and the result of an analysis.

A bot works on a core state (`engine_ext` core `State`, or anything with the same methods, such as
`lab.toygame.ToyState`: `bots.state.CoreState`) or on a facade `Game` (its `.state` is used).
Decisions inside the bots are the core's `int` codes; `bots.answer` turns an analysis of a position
into the typed answer the service returns (`docs/engine-api.md`, "The bots API the service uses").
"""

from __future__ import annotations

import abc
import json
import math
import random
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import engine_ext
from bots.state import CoreState, GameOrState
from engine_ext import carddata
from engine_ext.decisions import Decision
from engine_ext.game import Game

ProgressFn = Callable[[dict[str, Any]], None]
StopFn = Callable[[], bool]


def as_state(game_or_state: GameOrState) -> CoreState:
    """The core state of a facade `Game`, or the argument itself when it already is one."""
    st = getattr(game_or_state, "state", None)
    if st is not None and hasattr(st, "gen_legal"):
        return st
    return cast(CoreState, game_or_state)


def decision_point(game: GameOrState) -> tuple[CoreState, int, list[int]]:
    """The core state of `game`, the player who decides, and the legal decision codes.
    ValueError when the game is over (there is nothing to choose)."""
    st = as_state(game)
    codes = list(st.legal_codes())
    if not codes:
        raise ValueError("the game is over: no decision to choose")
    return st, int(st.current_player()), codes


def _engine_decision(state: Any, code: int) -> Any:
    return Decision.from_code(code, state, carddata.default())


def describe(state: CoreState, code: int) -> tuple[Any, str]:
    """(JSON form, canonical text) of a decision code of `state`'s game."""
    text_fn = getattr(state, "code_text", None)
    if text_fn is not None:  # the toy game
        text = text_fn(code)
        return {"code": code, "text": text}, text
    try:
        d = _engine_decision(state, code)
        return d.to_json(), str(d)
    except Exception:  # noqa: BLE001 - never fail an answer for want of a pretty name
        return {"code": code}, f"#{code}"


@dataclass
class Alternative:
    """Statistics of one decision at the root (rewards are from the deciding player's view; NaN: no
    statistic). A search reports no chance of winning (`win_prob` NaN): the service's answer
    calibrates its mean reward into one (`bots.answer.calibrate`)."""

    code: int
    visits: int
    mean_reward: float
    win_prob: float
    expected_vp: float


@dataclass
class Analysis:
    """What a bot found: the decision (a core code), per-alternative statistics and the expected
    line; `bots.answer.of_analysis` makes the typed answer of a position from it."""

    code: int
    alternatives: list[Alternative]
    line: list[int] = field(default_factory=list)
    iterations: int = 0
    elapsed_ms: float = 0.0
    seed: int = 0
    bot: str = ""
    player: int = 0

    def _chosen(self) -> Alternative | None:
        return next((a for a in self.alternatives if a.code == self.code), None)

    @property
    def mean_reward(self) -> float:
        a = self._chosen()
        return float("nan") if a is None else a.mean_reward

    @property
    def win_prob(self) -> float:
        a = self._chosen()
        return float("nan") if a is None else a.win_prob

    @property
    def expected_vp(self) -> float:
        a = self._chosen()
        return float("nan") if a is None else a.expected_vp


class Bot(abc.ABC):
    """A player. `analyse` is the whole contract; `choose` is its decision."""

    name: str = "bot"

    @abc.abstractmethod
    def analyse(self, game: GameOrState, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        """Analyse the position of the player to move within the budget (iterations or wall time)."""

    def choose(self, game: GameOrState, seed: int = 0) -> int:
        """The decision code to play (a legal code of `game`'s current state)."""
        return self.analyse(game, seed=seed).code

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


def sample_by_temperature(codes: list[int], visits: list[float], temperature: float,
                          rng: random.Random) -> int:
    """Pick among `codes` in proportion to visits ** (1 / temperature); argmax when temperature <= 0.

    This is how the low levels are weak in a human way: they choose among the moves the search
    liked, never a move it did not look at (a move with no visits has zero weight).
    """
    if not codes:
        raise ValueError("no decisions to choose from")
    if temperature <= 1e-9:
        best = max(range(len(codes)), key=lambda i: visits[i])
        return codes[best]
    top = max(visits)
    if top <= 0:
        return codes[rng.randrange(len(codes))]
    weights = [(v / top) ** (1.0 / temperature) if v > 0 else 0.0 for v in visits]
    total = sum(weights)
    x = rng.random() * total
    for c, w in zip(codes, weights, strict=False):
        x -= w
        if x <= 0 and w > 0:
            return c
    return codes[max(range(len(codes)), key=lambda i: weights[i])]


def position_key(st: CoreState) -> int:
    """A fingerprint of the position as the player to move knows it, for the final choice's draw:
    the CRC-32 of that player's view of a Kashgar engine state (so the same for a full state and
    the view, whatever the hidden order or the engine build; different positions, different
    keys); 0 for other games."""
    if not hasattr(st, "export"):
        return 0
    engine = engine_ext.get_engine(type(st).__module__.endswith("_c"))
    view = Game(engine, st).to_json(observer=int(st.current_player()))
    return zlib.crc32(json.dumps(view, sort_keys=True).encode())


def final_choice(visits: list[float], temperature: float, seed: int, position_key: int,
                 means: list[float] | None = None, margin: float = 0.0) -> int:
    """The index of the final choice among the root's alternatives, sorted best first: the first
    at temperature 0, else drawn over visits ** (1 / temperature) (`sample_by_temperature`) among
    the plausible ones (`plausible`: with a `margin` above 0, those whose mean reward is within
    `margin` log-odds of the first's; a margin of 0, or no `means`, leaves every alternative in).
    The draw depends on the seed and on the position (`position_key`): one seed gives independent
    draws at different positions (a client that always sends seed 0 would otherwise get the same
    quantile at every decision), and the same answer for the same position and seed."""
    rng = random.Random((seed & 0xFFFFFFFFFFFFFFFF) << 32 | (position_key & 0xFFFFFFFF))
    keep = plausible(visits, means, margin) if means is not None else [True] * len(visits)
    weights = [v if k else 0.0 for v, k in zip(visits, keep, strict=True)]
    return sample_by_temperature(list(range(len(visits))), weights, temperature, rng)


def log_odds(p: float, eps: float = 1e-6) -> float:
    """logit(p), with p kept within [eps, 1 - eps] (a mean reward of exactly 0 or 1 stays finite)."""
    p = min(max(p, eps), 1.0 - eps)
    return math.log(p / (1.0 - p))


def plausible(visits: list[float], means: list[float], margin: float) -> list[bool]:
    """Which alternatives (sorted best first) a low level may choose: the first (the most visited)
    and every visited one whose mean reward is at most `margin` below the first's in log-odds
    (every one when `margin` is 0). This is what keeps a sampled choice a human one: a move the
    search saw to be clearly worse (skipping a contract worth points, say) is never drawn, however
    flat the visits of a small budget are. Log-odds, not the reward itself, so that the bar is the
    same when the score is close and when it is lopsided: the evaluations are softmaxed into
    rewards, and a reward near 0 or 1 hides differences that log-odds keep (with the VP evaluator
    at 2 players a point is 0.35 log-odds whatever the score)."""
    if not visits:
        return []
    if margin <= 0.0 or not (means[0] == means[0]):  # no bar, or the first has no mean (NaN)
        return [True] * len(visits)
    bar = log_odds(means[0]) - margin
    return [i == 0 or (v > 0 and m == m and log_odds(m) >= bar)
            for i, (v, m) in enumerate(zip(visits, means, strict=True))]


def expected_line(choice: Any, lines: list[tuple[list[Any], int]]) -> list[Any]:
    """The expected line after the final `choice`, from (line, visits of `choice`) per search part:
    the line of the part that visited `choice` most among those whose line starts with it, else
    just `[choice]`."""
    best = max((lv for lv in lines if lv[0] and lv[0][0] == choice), key=lambda lv: lv[1], default=None)
    return list(best[0]) if best is not None else [choice]


class Timer:
    """Elapsed wall time in milliseconds."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()

    def ms(self) -> float:
        return (time.perf_counter() - self.t0) * 1000.0
