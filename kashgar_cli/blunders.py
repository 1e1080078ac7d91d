"""`kashgar blunders`: how often bots skip a contract worth points that a long search says to take."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kashgar_cli.errors import CliError, at_least, float_above, nonneg_int, output_file_or_stdout, positive_int


def default_bots() -> list[str]:
    """Every level of the level file in use, weakest first."""
    from bots.levels import load_levels

    return [lv.name for lv in load_levels()]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "blunders", help="share of choices that skip a contract worth points (the low levels' blunders)",
        description="Find positions from random play where fulfilling a contract gains --min-vp VP or more and "
                    "a search of --reference-iterations chooses a contract, valuing it at least --gap log-odds "
                    "above skip; "
                    "report how often each bot, searching with seeds 0 .. --seeds - 1, skips it, overall and by the "
                    "score (the mover within 3 VP of the best other seat, 4+ ahead, 4+ behind).")
    p.add_argument("bots", nargs="*", help="bot specs or levels (default: every level, master included: a few minutes)")
    p.add_argument("--positions", type=positive_int, default=70)
    p.add_argument("--seeds", type=positive_int, default=20, help="searches per position and bot")
    p.add_argument("--seed", type=nonneg_int, default=1000, help="seed of the first random game")
    p.add_argument("--min-vp", type=positive_int, default=3)
    p.add_argument("--gap", type=float_above(0), default=0.5, help="log-odds (default 0.5)")
    p.add_argument("--reference-iterations", type=at_least(100), default=5000)
    p.add_argument("--json", type=output_file_or_stdout, default=None, help="write the rates as JSON ('-': stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from engine_ext import SEEDS
    from lab.arena import wilson
    from lab.blunders import GAMES_PER_POSITION, contract_positions, skip_rate
    from lab.bots import make_bot

    try:
        bots = args.bots or default_bots()
    except (OSError, ValueError) as exc:
        raise CliError(f"the level file: {exc}") from None
    if args.seed + GAMES_PER_POSITION * args.positions >= SEEDS:
        raise CliError(f"--seed {args.seed} is too large: the games seeded from it must stay below 2**63")
    for spec in bots:
        try:
            make_bot(spec)
        except (KeyError, ValueError) as exc:
            raise CliError(str(exc).strip("\"'")) from None
    try:
        positions = contract_positions(args.positions, seed=args.seed, min_vp=args.min_vp, gap=args.gap,
                                       reference_iterations=args.reference_iterations)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    rows = []
    for spec in bots:
        r = skip_rate(spec, positions, args.seeds)
        lo, hi = wilson(r.skips, r.choices)
        by_score = {s: {"choices": n, "skips": k, "rate": round(k / n, 4) if n else None}
                    for s, (n, k) in r.by_score.items()}
        rows.append({"bot": spec, "choices": r.choices, "skips": r.skips, "rate": round(r.rate, 4),
                     "ci95": [round(lo, 4), round(hi, 4)], "by_score": by_score})
        if args.json != "-":
            cells = "  ".join(f"{s} {k}/{n}" for s, (n, k) in r.by_score.items())
            print(f"{spec:36s} skips {r.skips:5d} of {r.choices:5d}  {r.rate:.3f} [{lo:.3f}, {hi:.3f}]  {cells}",
                  flush=True)
    doc = {"positions": len(positions), "seeds": args.seeds, "seed": args.seed, "min_vp": args.min_vp,
           "gap": args.gap, "reference_iterations": args.reference_iterations, "rates": rows}
    if args.json == "-":
        print(json.dumps(doc, indent=2))
    elif args.json:
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2)
    return 0
