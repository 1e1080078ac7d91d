"""`kashgar arena`: tournaments between bots or levels (win rates, Elo, SPRT)."""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from kashgar_cli.errors import OUT_HELP, CliError, output_file_or_stdout, positive_int, process_count
from kashgar_cli.interrupt import INTERRUPTED, say_interrupted, workers_ignore_sigint
from kashgar_cli.provenance import provenance


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "arena", help="play a tournament between bots or levels",
        description="Play N games between bots (specs: random, greedy, ismcts:iterations=500, det, "
                    "openspiel:iterations=500, a level name such as expert, level:NAME:iterations=.., or "
                    "served:NAME, a level as the service answers it, in its root-parallel parts). "
                    "Seats rotate; reports win rates with 95% CIs and Elo with CIs; --sprt stops "
                    "as soon as the test decides.")
    p.add_argument("bots", nargs="+", help="bot specs, one per seat or cycled over the seats")
    p.add_argument("-n", "--games", type=positive_int, default=100)
    p.add_argument("-p", "--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1, help="processes")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--game", choices=("kashgar", "toy"), default="kashgar")
    p.add_argument("--engine", choices=("default", "compiled", "interpreted"), default="default")
    p.add_argument("--sprt", action="store_true", help="sequential test of the second bot against the first")
    p.add_argument("--elo0", type=float, default=0.0)
    p.add_argument("--elo1", type=float, default=20.0)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--beta", type=float, default=0.05)
    p.add_argument("--json", metavar="FILE", type=output_file_or_stdout,
                   help="write the full report (every game) as JSON ('-' = stdout)" + OUT_HELP)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Play the tournament; on Ctrl-C, stop the workers and report the games finished so far
    (labelled as partial) and exit 130."""
    import engine_ext
    from lab.arena import GameResult, check_arena, run_arena, summarize

    compiled = {"default": None, "compiled": True, "interpreted": False}[args.engine]
    sprt = (args.elo0, args.elo1, args.alpha, args.beta) if args.sprt else None
    done: list[GameResult] = []
    t0 = time.perf_counter()
    interrupted = False
    try:  # bad settings are one line; an error during the games is a bug, shown with its traceback
        check_arena(args.bots, games=args.games, players=args.players, seed=args.seed, sprt=sprt, game=args.game)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        with workers_ignore_sigint():
            rep = run_arena(args.bots, games=args.games, players=args.players, seed=args.seed,
                            workers=args.workers, game=args.game, engine_compiled=compiled,
                            progress=not args.no_progress, sprt=sprt, on_result=done.append)
    except KeyboardInterrupt:
        interrupted = True
        done.sort(key=lambda r: r.game)
        rep = summarize(args.bots, args.players, done, time.perf_counter() - t0, seed=args.seed)
        say_interrupted("arena", f" after {len(done)} of {args.games} games; the report covers those",
                        after_bar=not args.no_progress)
    doc = dict(rep.to_dict(), interrupted=interrupted, provenance=provenance(
        seed=args.seed, engine="compiled" if engine_ext.get_engine(compiled).COMPILED else "interpreted",
        workers=args.workers))
    if args.json == "-":
        print(json.dumps(doc, indent=2))
    else:
        if interrupted:
            print(f"INTERRUPTED: partial report, {len(done)} of {args.games} games")
        print(rep.table())
        if args.json:
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, indent=2)
    return INTERRUPTED if interrupted else 0
