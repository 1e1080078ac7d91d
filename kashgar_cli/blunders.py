"""`kashgar blunders`: how often bots skip a contract worth points that a long search says to take."""

from __future__ import annotations

import argparse
import json
from typing import Any

from kashgar_cli.errors import CliError, float_above, output_file_or_stdout, positive_int

DEFAULT_BOTS = ["novice", "beginner", "casual", "club", "skilled", "advanced"]


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "blunders", help="share of choices that skip a contract worth points (the low levels' blunders)",
        description="Find positions from random play where fulfilling a contract gains --min-vp VP or more and "
                    "a search of --reference-iterations values it at least --gap above skip; report how often "
                    "each bot, searching with seeds 0 .. --seeds - 1, skips it.")
    p.add_argument("bots", nargs="*", default=DEFAULT_BOTS, help="bot specs or levels (default: the sampled levels)")
    p.add_argument("--positions", type=positive_int, default=70)
    p.add_argument("--seeds", type=positive_int, default=20, help="searches per position and bot")
    p.add_argument("--seed", type=int, default=1000, help="seed of the first random game")
    p.add_argument("--min-vp", type=positive_int, default=3)
    p.add_argument("--gap", type=float_above(0), default=0.15)
    p.add_argument("--reference-iterations", type=positive_int, default=5000)
    p.add_argument("--json", type=output_file_or_stdout, default=None, help="write the rates as JSON ('-': stdout)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots.arena import wilson
    from bots.blunders import contract_positions, skip_rate
    from bots.levels import make_bot

    for spec in args.bots:
        try:
            make_bot(spec)
        except (KeyError, ValueError) as exc:
            raise CliError(str(exc).strip("\"'")) from None
    positions = contract_positions(args.positions, seed=args.seed, min_vp=args.min_vp, gap=args.gap,
                                   reference_iterations=args.reference_iterations)
    rows = []
    for spec in args.bots:
        r = skip_rate(spec, positions, args.seeds)
        lo, hi = wilson(r.skips, r.choices)
        rows.append({"bot": spec, "choices": r.choices, "skips": r.skips, "rate": round(r.rate, 4),
                     "ci95": [round(lo, 4), round(hi, 4)]})
        if args.json != "-":
            print(f"{spec:40s} skips {r.skips:5d} of {r.choices:5d}  {r.rate:.3f} [{lo:.3f}, {hi:.3f}]", flush=True)
    doc = {"positions": len(positions), "seeds": args.seeds, "seed": args.seed, "min_vp": args.min_vp,
           "gap": args.gap, "reference_iterations": args.reference_iterations, "rates": rows}
    if args.json == "-":
        print(json.dumps(doc, indent=2))
    elif args.json:
        with open(args.json, "w") as fh:
            json.dump(doc, fh, indent=2)
    return 0
