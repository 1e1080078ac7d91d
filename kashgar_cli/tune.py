"""`kashgar tune`: calibrate the difficulty levels into a measured Elo ladder."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tune", help="calibrate the levels (monotone ladder, adjacent levels >= 100 Elo apart)",
        description="Play each level against its neighbour; strengthen a level that is not clearly "
                    "stronger than the one below (or, with --from-top, weaken one that is not clearly weaker "
                    "than the one above); write the level file, ladder.md, ladder.json and ladder.png.")
    p.add_argument("--levels", help="level file to start from (default: the one in use)")
    p.add_argument("--out", default="bots/levels.toml", help="level file to write")
    p.add_argument("--report-dir", default="reports/tune", help="where the table and plot go")
    p.add_argument("-n", "--games", type=int, default=200, help="games per step")
    p.add_argument("--min-gap", type=float, default=100.0)
    p.add_argument("--max-rounds", type=int, default=3,
                   help="replays allowed per step after its first match, with the preset adjusted each time "
                        "(rounds are numbered from 0: N plays rounds 0..N, at most N+1 matches a step; 0: one "
                        "match per step; default 3: up to 4)")
    p.add_argument("-j", "--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--game", choices=("kashgar", "toy"), default="kashgar")
    p.add_argument("--from-top", action="store_true",
                   help="anchor the strongest level and weaken the ones below it (default: anchor the weakest "
                        "and strengthen the ones above)")
    p.add_argument("--min-iterations", type=int, default=16,
                   help="with --from-top: the smallest budget a level is lowered to (then only its temperature "
                        "rises): fewer iterations than a few per legal decision make visit counts a random pick")
    p.add_argument("--max-temperature", type=float, default=1.0,
                   help="with --from-top: the highest temperature a level is raised to (above 1 the choice is "
                        "flatter than the search's visit shares, towards a random move)")
    p.add_argument("--grow", type=float, default=2.0,
                   help="the factor of one step: budget x or / it, temperature / or x it (smaller: finer steps "
                        "that waste less Elo range per level, more rounds)")
    p.add_argument("--top-games", type=int, default=0,
                   help="games of the step below the strongest level (0: --games); its games cost the most")
    p.add_argument("--verify", action="store_true",
                   help="change no preset: measure each adjacent step once and rate the ladder (a check of a "
                        "finished level file on fresh seeds, pass or fail)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots.tune import tune

    doc = tune(levels_in=args.levels, levels_out=args.out, out_dir=args.report_dir, games=args.games,
               min_gap=args.min_gap, max_rounds=args.max_rounds, workers=max(1, args.workers), seed=args.seed,
               game=args.game, log=lambda m: print(m, file=sys.stderr, flush=True), from_top=args.from_top,
               floor=max(1, args.min_iterations), cap=args.max_temperature, grow=args.grow,
               top_games=max(0, args.top_games), verify=args.verify)
    for lv in doc["levels"]:
        ci = f" ±{lv['elo_ci']:.0f}" if lv["elo_ci"] is not None else ""
        print(f"{lv['name']:<10} {lv['iterations']:>7} it  T={lv['temperature']:<6} Elo {lv['elo'] or 0:>7.0f}{ci}")
    print(f"monotone: {doc['monotone']}, every step clear: {doc['all_steps_ok']}; "
          f"wrote {args.out}, {args.report_dir}/ladder.md, ladder.json{', ladder.png' if doc['plot'] else ''}")
    return 0
