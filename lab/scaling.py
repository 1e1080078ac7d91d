"""Elo against thinking time, from doubling matches (`python -m lab.scaling OUT.png LABEL=A.json,B.json ...`).

Each arena report (`kashgar arena SLOW FAST --json FILE`) is one doubling: the second bot at twice
the first's time. A curve chains its doublings from 0 at the first time; the table and the PNG
plot (matplotlib) give, per curve and time, the Elo gained, its 95% interval and the games played.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any


def _time_ms(spec: str) -> float:
    m = re.search(r"time_ms=([0-9.]+)", spec)
    if not m:
        raise ValueError(f"{spec!r}: a doubling match names time_ms in both specs")
    return float(m.group(1))


def chain(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Points (time_ms, Elo, low, high, games) of one curve, from its doubling reports in order."""
    slow = reports[0]["specs"][0]
    points = [{"time_ms": _time_ms(slow), "elo": 0.0, "low": 0.0, "high": 0.0, "games": 0}]
    for rep in reports:
        a, b = rep["specs"]
        elo, lo, hi = rep["elo"][b]
        base = points[-1]["elo"]
        points.append({"time_ms": _time_ms(b), "elo": base + elo, "low": base + lo, "high": base + hi,
                       "step": elo, "step_low": lo, "step_high": hi, "games": int(sum(rep["wins"].values())),
                       "from_ms": _time_ms(a)})
    return points


def plot(curves: dict[str, list[dict[str, Any]]], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4))
    for label, pts in curves.items():
        xs = [p["time_ms"] for p in pts]
        ys = [p["elo"] for p in pts]
        err = [[p["elo"] - p["low"] for p in pts], [p["high"] - p["elo"] for p in pts]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=4, label=label)
    ax.set_xscale("log", base=2)
    ticks = sorted({p["time_ms"] for pts in curves.values() for p in pts})
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.set_xlabel("time per decision (ms, wall)")
    ax.set_ylabel("Elo over the shortest time")
    ax.set_title("Kashgar: Elo against thinking time (2 players; bars: the last doubling's 95% interval)", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str]) -> int:
    out, *specs = argv
    curves: dict[str, list[dict[str, Any]]] = {}
    for spec in specs:
        label, _, files = spec.partition("=")
        curves[label] = chain([json.loads(Path(f).read_text()) for f in files.split(",")])
    plot(curves, out)
    for label, pts in curves.items():
        for p in pts[1:]:
            print(f"| {label} | {p['from_ms']:g} -> {p['time_ms']:g} ms | {p['games']} | {p['step']:+.0f} "
                  f"[{p['step_low']:+.0f}, {p['step_high']:+.0f}] |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
