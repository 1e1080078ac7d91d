"""Does the review agree with what we know of the levels? Each level plays games against itself; the
review at a judging level (default master) reviews seat 0 of each, and the mean loss per decision of
each level is printed: weaker levels should lose more.

`python -m lab.review_levels --levels novice,club,expert,master --games 20 -j 2` (JSON with --json)."""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from lab.review_noise import play


def review_game(level: str, judge: str, seed: int) -> dict[str, Any]:
    """Seat 0's review, at `judge`, of a game `level` plays against itself."""
    from service import review

    spec = review.plan(play(level, 2, seed), judge, [0], 0)
    return review.run_all(spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab.review_levels", description=__doc__)
    ap.add_argument("--levels", default="novice,club,expert,master")
    ap.add_argument("--judge", default="master")
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--seed", type=int, default=9100)
    ap.add_argument("-j", "--workers", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    levels = [x for x in args.levels.split(",") if x]
    jobs = [(level, args.judge, args.seed + g) for level in levels for g in range(args.games)]
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        reviews = list(pool.map(review_game, *zip(*jobs, strict=True)))
    rows = []
    for level in levels:
        mine = [r for (lv, _, _), r in zip(jobs, reviews, strict=True) if lv == level]
        losses = [float(d["loss"]) for r in mine for d in r["decisions"] if d["loss"] is not None]
        n = max(1, len(losses))
        mean = sum(losses) / n
        sd = (sum((x - mean) ** 2 for x in losses) / max(1, n - 1)) ** 0.5
        rows.append({
            "level": level, "games": len(mine), "decisions": len(losses),
            "mean_loss": round(mean, 4), "ci95": round(1.96 * sd / n ** 0.5, 4),
            "accuracy": round(sum(s["accuracy"] or 0 for r in mine for s in r["seats"]) / max(1, len(mine)), 1),
            **{c: sum(s[c] for r in mine for s in r["seats"]) for c in ("inaccuracy", "mistake", "blunder")},
        })
    if args.json:
        print(json.dumps({"judge": args.judge, "levels": rows}))
    else:
        print("| level | games | decisions | mean loss per decision | accuracy | inaccuracies | mistakes | blunders |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r['level']} | {r['games']} | {r['decisions']} | {r['mean_loss']:.4f} ± {r['ci95']:.4f} | "
                  f"{r['accuracy']} | {r['inaccuracy']} | {r['mistake']} | {r['blunder']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
