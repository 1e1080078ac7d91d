"""The Elo of a mix of two levels (`bots/strength.py`) from its matches against levels of known Elo.

`python -m lab.mix REPORT.json...`: each report a `kashgar arena LEVEL elo:E --json` of 2-player
games; the mix's Elo is the maximum-likelihood rating against the opponents' measured Elo (from
the level file in use), with the 95% interval of the profile likelihood (the levels' own Elo
taken as exact: their error, about ±23 per step, is not in it).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

from bots.levels import get_level

Z95_HALF_LR = 1.920729  # chi-square(1) 95% quantile / 2


def log_likelihood(elo: float, matches: list[tuple[float, float, int]]) -> float:
    """log L of a rating `elo` given (opponent's Elo, wins, games) per match (no draws)."""
    total = 0.0
    for opp, wins, games in matches:
        p = 1.0 / (1.0 + 10 ** ((opp - elo) / 400.0))
        p = min(max(p, 1e-12), 1 - 1e-12)
        total += wins * math.log(p) + (games - wins) * math.log(1 - p)
    return total


def fit_elo(matches: list[tuple[float, float, int]], lo: float = -3000.0,
            hi: float = 5000.0) -> tuple[float, float, float]:
    """(Elo, low, high): the maximum-likelihood rating and its 95% profile-likelihood interval."""

    def argmax(a: float, b: float) -> float:
        for _ in range(200):  # log L is concave in elo: golden-section search
            m1, m2 = a + (b - a) * 0.382, a + (b - a) * 0.618
            if log_likelihood(m1, matches) < log_likelihood(m2, matches):
                a = m1
            else:
                b = m2
        return (a + b) / 2

    best = argmax(lo, hi)
    top = log_likelihood(best, matches)

    def edge(inside: float, outside: float) -> float:
        for _ in range(200):  # bisection on log L = top - Z95_HALF_LR
            mid = (inside + outside) / 2
            if top - log_likelihood(mid, matches) < Z95_HALF_LR:
                inside = mid
            else:
                outside = mid
        return (inside + outside) / 2

    return best, edge(best, lo), edge(best, hi)


def matches_of(report: dict[str, Any]) -> tuple[str, tuple[float, float, int]]:
    """(the mix's spec, (its opponent's Elo, the mix's wins, games)) of an arena report."""
    specs = list(dict.fromkeys(report["specs"]))
    mix = next(s for s in specs if s.startswith("elo:"))
    opp = next(s for s in specs if s != mix)
    elo = get_level(opp.removeprefix("level:")).elo
    if elo is None:
        raise ValueError(f"{opp} has no measured elo")
    return mix, (float(elo), float(report["wins"][mix]), int(report["games"]))


def main(argv: list[str]) -> int:
    by_mix: dict[str, list[tuple[float, float, int]]] = {}
    for path in argv:
        mix, m = matches_of(json.loads(Path(path).read_text()))
        by_mix.setdefault(mix, []).append(m)
    for mix, ms in by_mix.items():
        e, lo, hi = fit_elo(ms)
        asked = float(mix.split(":")[1])
        parts = ", ".join(f"vs {opp:g}: {w:g}/{n}" for opp, w, n in ms)
        print(f"{mix}: Elo {e:.0f} [{lo:.0f}, {hi:.0f}] ({e - asked:+.0f} from asked; {parts})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
