"""`kashgar tune`: calibrate the difficulty levels into a measured Elo ladder."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from kashgar_cli.errors import (
    OUT_HELP,
    CliError,
    float_above,
    input_file,
    nonneg_int,
    output_file,
    positive_int,
    process_count,
)
from kashgar_cli.interrupt import INTERRUPTED, say_interrupted, workers_ignore_sigint

DEFAULT_OUT = "bots/data/levels.toml"


def temperature_cap(text: str) -> float:
    """An argparse type: a temperature above 0 and at most what a level file accepts."""
    from bots.levels import MAX_TEMPERATURE

    value = float_above(0)(text)
    if value > MAX_TEMPERATURE:
        raise argparse.ArgumentTypeError(f"want a number from 0 to {MAX_TEMPERATURE:g}, not {text!r}")
    return value


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tune", help="calibrate the levels (monotone ladder, adjacent levels >= 100 Elo apart)",
        description="Play each level against its neighbour; strengthen a level that is not clearly "
                    "stronger than the one below (or, with --from-top, weaken one that is not clearly weaker "
                    "than the one above); write the level file, ladder.md, ladder.json and ladder.png. "
                    "With --verify, exit status 1 when the ladder fails the check.")
    p.add_argument("--levels", type=input_file, help="level file to start from (default: the one in use)")
    p.add_argument("--out", type=output_file, default=None,
                   help=f"level file to write (default {DEFAULT_OUT}; with --verify, none unless given)" + OUT_HELP)
    p.add_argument("--report-dir", default="reports/tune", help="where the table and plot go (made if missing)")
    p.add_argument("-n", "--games", type=positive_int, default=200, help="games per step")
    p.add_argument("--min-gap", type=float, default=100.0)
    p.add_argument("--max-rounds", type=nonneg_int, default=3,
                   help="replays allowed per step after its first match, with the preset adjusted each time "
                        "(rounds are numbered from 0: N plays rounds 0..N, at most N+1 matches a step; 0: one "
                        "match per step; default 3: up to 4)")
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--game", choices=("kashgar", "toy"), default="kashgar",
                   help="toy: the test game, which plays only presets with evaluator default or vp")
    p.add_argument("--from-top", action="store_true",
                   help="anchor the strongest level and weaken the ones below it (default: anchor the weakest "
                        "and strengthen the ones above)")
    p.add_argument("--min-iterations", type=positive_int, default=16,
                   help="with --from-top: the smallest budget a level is lowered to (then only its temperature "
                        "rises): fewer iterations than a few per legal decision make visit counts a random pick")
    p.add_argument("--max-temperature", type=temperature_cap, default=1.0,
                   help="with --from-top: the highest temperature a level is raised to, above 0 and at most "
                        "1 (a level file refuses more: the choice would be flatter than the "
                        "search's visit shares, towards a random move)")
    p.add_argument("--grow", type=float_above(1), default=2.0,
                   help="the factor of one step, above 1: budget x or / it, temperature / or x it (smaller: "
                        "finer steps that waste less Elo range per level, more rounds)")
    p.add_argument("--top-games", type=nonneg_int, default=0,
                   help="games of the step below the strongest level (0: --games); its games cost the most")
    p.add_argument("--verify", action="store_true",
                   help="change no preset: measure each adjacent step once and rate the ladder (a check of a "
                        "finished level file on fresh seeds); writes the report, and the level file only if "
                        "--out is given; exit status 1 if the ladder is not monotone with every step clear")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lab.tune import check_tune, tune

    out = args.out
    if out is None and not args.verify:
        try:
            out = output_file(DEFAULT_OUT)
        except argparse.ArgumentTypeError as exc:
            raise CliError(f"argument --out: {exc}") from None
    try:  # bad settings are one line; an error during the games is a bug, shown with its traceback
        check_tune(args.levels, args.game, args.report_dir)
    except (OSError, ValueError) as exc:  # the level file, a preset the game cannot play, the report dir
        raise CliError(str(exc)) from None
    # Ctrl-C: stop the pool's workers and exit 130, without a traceback. No partial report: the
    # ladder and the level file are written only once every step is measured (and a half-tuned
    # level file would be worse than none); the steps measured so far are in the log on stderr.
    try:
        with workers_ignore_sigint():
            doc = tune(levels_in=args.levels, levels_out=out, out_dir=args.report_dir, games=args.games,
                       min_gap=args.min_gap, max_rounds=args.max_rounds, workers=args.workers, seed=args.seed,
                       game=args.game, log=lambda m: print(m, file=sys.stderr, flush=True),
                       from_top=args.from_top, floor=args.min_iterations, cap=args.max_temperature,
                       grow=args.grow, top_games=args.top_games, verify=args.verify)
    except KeyboardInterrupt:
        say_interrupted("tune", ": no level file or report written (the steps measured are logged above)",
                        after_bar=False)
        return INTERRUPTED
    from bots.levels import load_levels
    from lab.tune import next_steps

    for lv in doc["levels"]:
        ci = f" ±{lv['elo_ci']:.0f}" if lv["elo_ci"] is not None else ""
        elo = (f"Elo {lv['elo']:>7.0f}{ci}" if lv["elo"] is not None
               else f"Elo >= {lv.get('elo_lower_bound') or 0:.0f} (a bound: a step below it lost no game)")
        print(f"{lv['name']:<10} {lv['iterations']:>7} it  T={lv['temperature']:<6} {elo}")
    passed = doc["monotone"] and doc["all_steps_ok"]
    wrote = [out] if out else []
    wrote += [f"{args.report_dir}/ladder.md", "ladder.json"] + (["ladder.png"] if doc["plot"] else [])
    print(f"monotone: {doc['monotone']}, every step clear: {doc['all_steps_ok']}; wrote {', '.join(wrote)}")
    if doc["swept"]:
        print(f"won without a lost game (only a lower bound of the step: play more games, -n): "
              f"{', '.join(doc['swept'])}")
    if out:
        print(f"default level: {doc['default']} (the file's `default`: a request without a level gets it)")
        for line in next_steps(out, load_levels(out), args.game, args.workers):
            print(line)
    if args.verify and not passed:
        print("kashgar tune: the ladder failed the check (--verify)", file=sys.stderr)
        return 1
    return 0
