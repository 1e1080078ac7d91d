"""Any strength on the ladder: a bot asked for an Elo between two adjacent levels.

The levels carry their measured Elo (`elo` in the level file, the weakest level 0). A strength
`elo` from the weakest level's Elo to the strongest's is played as a mix of the two levels around
it: each decision is searched by the upper level with probability p, else by the lower one. The
draw is made from the request's seed and the position (`bots.base.position_key`), apart from the
draws the search itself makes, so the same seed and position give the same level, hence the same
answer.

p comes from the Elo asked: by default the interpolation p = (elo - lo) / (hi - lo) between the
two levels' Elo; where the mix was measured, the upper level's row of the level file holds the
measured points (`mix = [[p, elo], ...]`: the mix at p measured at that Elo), and p is read off the
piecewise-linear curve through (0, lo), those points and (1, hi) (BENCHMARKS.md, "Any strength on
the ladder").
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bots.base import Analysis, Bot, ProgressFn, StopFn, as_state, position_key
from bots.levels import Level, load_levels

#: The bot spec of a strength on the ladder: `elo:` and a number (`elo:640`, `elo:516.5`, `elo:-20`).
ELO_SPEC = "elo:"
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def elo_spec(elo: float) -> str:
    """The bot spec of a bot at `elo`: `elo:640` (the number as `:g` writes it, so at most six
    significant digits)."""
    return f"{ELO_SPEC}{elo:g}"


def elo_of_spec(text: str) -> float | None:
    """The Elo N of a bot spec `elo:N` (N any finite number); None for any other text (a level's
    name: no level name holds a colon); ValueError naming the text when it starts with `elo:` but
    what follows is not a finite number (`elo:x`, `elo:inf`, `elo:530:p=0.5`)."""
    if not text.startswith(ELO_SPEC):
        return None
    value = text[len(ELO_SPEC):]
    elo = float(value) if _NUMBER.fullmatch(value) else math.nan
    if not math.isfinite(elo):
        raise ValueError(f"{text!r}: elo:N takes a finite number, not {value!r}")
    return elo


class EloOutOfRange(ValueError):
    """An Elo outside the ladder's range (or a ladder with fewer than two measured levels)."""

    def __init__(self, message: str, lo: float | None, hi: float | None) -> None:
        super().__init__(message)
        self.lo, self.hi = lo, hi


def ladder(levels: list[Level] | None = None, path: str | Path | None = None) -> list[Level]:
    """The levels that have a measured Elo, weakest first (by Elo)."""
    lvs = load_levels(path) if levels is None else levels
    return sorted((lv for lv in lvs if lv.elo is not None), key=lambda lv: float(lv.elo or 0.0))


def elo_range(levels: list[Level] | None = None, path: str | Path | None = None) -> tuple[float, float] | None:
    """(weakest, strongest) Elo of the ladder; None when fewer than two levels have an Elo."""
    lad = ladder(levels, path)
    if len(lad) < 2:
        return None
    return float(lad[0].elo or 0.0), float(lad[-1].elo or 0.0)


def upper_share(elo: float, lower: Level, upper: Level) -> float:
    """p, the chance that the upper level searches a decision, for a mix asked to play at `elo`
    (between the two levels' Elo): the inverse of the piecewise-linear curve of the mix's Elo in p
    through (0, lower's Elo), the measured points of `upper.extra["mix"]` and (1, upper's Elo);
    without measured points, the linear interpolation."""
    lo, hi = float(lower.elo or 0.0), float(upper.elo or 0.0)
    if hi <= lo:
        return 1.0 if elo >= hi else 0.0
    pts = [(0.0, lo)] + sorted((float(p), float(e)) for p, e in upper.extra.get("mix", [])) + [(1.0, hi)]
    # the curve must rise (a measured point out of order is a fit gone wrong): keep the points that do
    curve = [pts[0]]
    for p, e in pts[1:]:
        if p > curve[-1][0] and e > curve[-1][1]:
            curve.append((p, e))
    if curve[-1] != (1.0, hi):
        curve[-1] = (1.0, hi)
    for (p0, e0), (p1, e1) in zip(curve, curve[1:], strict=False):
        if elo <= e1:
            return min(1.0, max(0.0, p0 + (p1 - p0) * (elo - e0) / (e1 - e0)))
    return 1.0


@dataclass(frozen=True)
class Mix:
    """A strength between two adjacent levels: `upper` searches a decision with probability `p`."""

    elo: float
    lower: Level
    upper: Level
    p: float

    def draw(self, seed: int, position: int) -> Level:
        """The level that searches this decision: drawn from the seed and the position."""
        if self.p >= 1.0:
            return self.upper
        if self.p <= 0.0:
            return self.lower
        rng = random.Random(f"elo-mix:{seed & 0xFFFFFFFFFFFFFFFF}:{position & 0xFFFFFFFF}")
        return self.upper if rng.random() < self.p else self.lower

    def to_dict(self) -> dict[str, Any]:
        return {"elo": self.elo, "lower": self.lower.name, "upper": self.upper.name, "p": round(self.p, 6)}


def mix_for(elo: float, levels: list[Level] | None = None, path: str | Path | None = None,
            p: float | None = None) -> Mix:
    """The mix that plays at `elo` on the ladder of `levels` (else the level file in use);
    EloOutOfRange outside [weakest, strongest]. `p`: the upper level's share given, not read off the
    curve (to measure the curve)."""
    lad = ladder(levels, path)
    rng = elo_range(lad)
    if rng is None:
        raise EloOutOfRange("the ladder has fewer than two levels with a measured elo: "
                            "measure it with `kashgar tune --levels FILE --verify`", None, None)
    lo, hi = rng
    if not (lo <= elo <= hi):  # NaN is out of range too
        raise EloOutOfRange(f"elo must be from {lo:g} to {hi:g} (the ladder's weakest and strongest level), "
                            f"not {elo:g}", lo, hi)
    i = next(i for i in range(1, len(lad)) if elo <= float(lad[i].elo or 0.0) or i == len(lad) - 1)
    lower, upper = lad[i - 1], lad[i]
    share = upper_share(elo, lower, upper) if p is None else min(1.0, max(0.0, float(p)))
    return Mix(float(elo), lower, upper, share)


def level_for(elo: float, seed: int, position: int, levels: list[Level] | None = None,
              path: str | Path | None = None) -> Level:
    """The level that searches a decision asked at `elo` with `seed` in the position of key
    `position` (`bots.base.position_key`)."""
    return mix_for(elo, levels, path).draw(seed, position)


class MixedBot(Bot):
    """A bot at any Elo of the ladder: each decision searched by one of the two levels around it
    (`Mix.draw`). Spec `elo:530` (`elo:530:p=0.5`: the upper level's share given)."""

    def __init__(self, mix: Mix, name: str = "", **overrides: Any) -> None:
        self.mix = mix
        self.name = name or elo_spec(mix.elo)
        self._bots = {lv.name: lv.bot(**overrides) for lv in (mix.lower, mix.upper)}
        self.drawn: dict[str, int] = {mix.lower.name: 0, mix.upper.name: 0}

    def analyse(self, game: Any, *, iterations: int | None = None, time_ms: float | None = None,
                seed: int = 0, progress: ProgressFn | None = None,
                should_stop: StopFn | None = None) -> Analysis:
        level = self.mix.draw(seed, position_key(as_state(game)))
        self.drawn[level.name] += 1
        out = self._bots[level.name].analyse(game, iterations=iterations, time_ms=time_ms, seed=seed,
                                             progress=progress, should_stop=should_stop)
        out.bot = f"{self.name}/{level.name}"
        return out


def make_mixed_bot(spec: str, rest: str, **overrides: Any) -> MixedBot:
    """The bot of spec `elo:ELO` or `elo:ELO:p=P` (ValueError naming what is wrong)."""
    from bots.levels import parse_settings

    value, _, settings = rest.partition(":")
    try:
        elo = elo_of_spec(ELO_SPEC + value)
    except ValueError:
        elo = None
    if elo is None:
        raise ValueError(f"bot {spec!r}: elo:ELO takes a number, not {value!r}")
    kw = {**parse_settings(settings), **overrides}
    p = kw.pop("p", None)
    if p is not None and not (isinstance(p, (int, float)) and 0.0 <= p <= 1.0):
        raise ValueError(f"bot {spec!r}: p must be a number from 0 to 1, not {p!r}")
    try:
        mix = mix_for(elo, p=p)
    except EloOutOfRange as exc:
        raise ValueError(f"bot {spec!r}: {exc}") from None
    return MixedBot(mix, name=spec, **kw)
