"""`kashgar calibrate`: fit the map from the search's mean reward to a chance of winning
(`win_prob`) on self-play games of each level, and write it to the calibration file."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import engine_ext
from kashgar_cli.errors import OUT_HELP, CliError, check_seeds, output_file, positive_int, process_count
from kashgar_cli.interrupt import INTERRUPTED, say_interrupted, workers_ignore_sigint
from kashgar_cli.provenance import provenance


def _players(text: str) -> list[int]:
    try:
        values = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        values = []
    if not values or any(v not in (2, 3, 4) for v in values):
        raise argparse.ArgumentTypeError(f"want a comma-separated list of 2, 3 and 4, not {text!r}")
    return values


def _fit(args: argparse.Namespace, level: Any, players: int) -> dict[str, Any]:
    """Play, fit and measure one level with `players` seats; prints its line."""
    from bots import calibrate

    t0 = time.perf_counter()
    records = calibrate.collect(level.name, players, args.games, args.seed, args.workers,
                                log=lambda m: print(m, file=sys.stderr, flush=True))
    entry = calibrate.calibrate(records, held_out=args.held_out, seed=args.seed)
    entry["preset"] = calibrate.preset_of(level)
    entry["seconds"] = round(time.perf_counter() - t0, 1)
    entry["provenance"] = provenance(workers=args.workers)
    entry["command"] = (f"kashgar calibrate --levels {level.name} --players {players} -n {args.games} "
                        f"--held-out {args.held_out} --seed {args.seed} -j {args.workers}")
    h = entry["held_out"]
    print(f"{level.name:<9} {players}p  games {entry['games']:>5}  held out {h['games']:>4}: brier raw "
          f"{h['raw']['brier']:.4f} -> {h['calibrated']['brier']:.4f}, log-loss "
          f"{h['raw']['log_loss']:.4f} -> {h['calibrated']['log_loss']:.4f}  ({entry['seconds']:.0f} s)",
          flush=True)
    return entry


def _write(path: str, doc: dict[str, Any]) -> None:
    """Write the calibration file whole or not at all (a new file moved over the old one): the
    service reads it, and an interrupted write would leave it damaged."""
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, path)


def _read(path: str, missing_ok: bool) -> dict[str, Any]:
    """The calibration file at `path` ({} if it is missing and `missing_ok`); a one-line error else."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except FileNotFoundError:
        if missing_ok:
            return {}
        raise CliError(f"argument --out: no calibration file {path}") from None
    except (OSError, ValueError) as exc:
        raise CliError(f"argument --out: cannot read {path}: {exc}") from None
    if not isinstance(doc, dict):
        raise CliError(f"argument --out: {path} is not a calibration file (a JSON object)")
    return doc


def register(sub: Any) -> None:
    from bots.calibrate import CALIBRATION_FILE

    p = sub.add_parser("calibrate", help="fit win_prob (a chance of winning) to self-play games of each level")
    p.add_argument("--levels", default="", help="comma-separated level names (default: every level)")
    p.add_argument("--players", type=_players, default=[2, 3, 4], help="seat counts, e.g. 2,3,4 (default)")
    p.add_argument("-n", "--games", type=positive_int, default=500, help="self-play games per level and seat count")
    p.add_argument("--held-out", type=float, default=0.3, help="share of the games held out of the fit to measure it")
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=30000, help="deal seed of the first game")
    p.add_argument("--out", type=output_file, default=str(CALIBRATION_FILE),
                   help="the calibration file; levels and seat counts not played here are kept from it" + OUT_HELP)
    p.add_argument("--table", action="store_true",
                   help="play nothing: print the Markdown table of the held-out measures in --out")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots import calibrate
    from bots.levels import load_levels

    by_name = {lv.name: lv for lv in load_levels()}
    names = list(by_name)
    if args.table:
        print(calibrate.markdown(_read(args.out, missing_ok=False)), end="")
        return 0
    chosen = [x.strip() for x in args.levels.split(",") if x.strip()] or names
    unknown = [x for x in chosen if x not in names]
    if unknown:
        raise CliError(f"argument --levels: unknown level {', '.join(unknown)}; levels: {', '.join(names)}")
    if not 0.0 < args.held_out < 1.0:
        raise CliError(f"argument --held-out: want a share between 0 and 1, not {args.held_out}")
    held = round(args.games * args.held_out)
    if not 1 <= held <= args.games - 1:
        raise CliError(f"argument --held-out: {args.games} games x {args.held_out} holds out {held}: want at "
                       "least one game held out and one to fit (more games, or another share)")
    check_seeds(args.seed, args.games, engine_ext.SEEDS - 1)
    doc = _read(args.out, missing_ok=True)
    levels = doc.setdefault("levels", {})
    try:
        with workers_ignore_sigint():
            for name in chosen:
                for players in args.players:
                    levels.setdefault(name, {})[str(players)] = _fit(args, by_name[name], players)
                    doc["model"] = calibrate.MODEL
                    _write(args.out, doc)  # after every fit: a long run keeps its work
    except KeyboardInterrupt:
        say_interrupted("calibrate", f": the fits finished before are in {args.out}", after_bar=False)
        return INTERRUPTED
    calibrate.load_calibration.cache_clear()
    return 0
