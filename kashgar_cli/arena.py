"""`kashgar arena`: tournaments between bots or levels (win rates, Elo, SPRT)."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "arena", help="play a tournament between bots or levels",
        description="Play N games between bots (specs: random, greedy, ismcts:iterations=500, det, "
                    "openspiel:iterations=500, a level name such as expert, or level:NAME:iterations=..). "
                    "Seats rotate; reports win rates with 95% CIs and Elo with CIs; --sprt stops "
                    "as soon as the test decides.")
    p.add_argument("bots", nargs="+", help="bot specs, one per seat or cycled over the seats")
    p.add_argument("-n", "--games", type=int, default=100)
    p.add_argument("-p", "--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("-j", "--workers", type=int, default=os.cpu_count() or 1, help="processes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--game", choices=("kashgar", "toy"), default="kashgar")
    p.add_argument("--engine", choices=("default", "compiled", "interpreted"), default="default")
    p.add_argument("--sprt", action="store_true", help="sequential test of the second bot against the first")
    p.add_argument("--elo0", type=float, default=0.0)
    p.add_argument("--elo1", type=float, default=20.0)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--beta", type=float, default=0.05)
    p.add_argument("--json", metavar="FILE", help="write the full report (every game) as JSON ('-' = stdout)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from bots.arena import run_arena

    compiled = {"default": None, "compiled": True, "interpreted": False}[args.engine]
    sprt = (args.elo0, args.elo1, args.alpha, args.beta) if args.sprt else None
    try:
        rep = run_arena(args.bots, games=args.games, players=args.players, seed=args.seed,
                        workers=max(1, args.workers), game=args.game, engine_compiled=compiled,
                        progress=not args.no_progress, sprt=sprt)
    except ValueError as exc:
        print(f"kashgar arena: {exc}")
        return 2
    if args.json == "-":
        print(json.dumps(rep.to_dict(), indent=2))
    else:
        print(rep.table())
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(rep.to_dict(), fh, indent=2)
    return 0
