"""`kashgar tune-eval`: tune the evaluation's weights by play (SPSA over greedy-bot game pairs)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from kashgar_cli.errors import OUT_HELP, CliError, input_file, output_file, positive_int, process_count


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "tune-eval", help="tune the evaluation weights by play (SPSA)",
        description="SPSA, as fishtest tunes engines: each iteration perturbs every weight at once, plays "
                    "the two weight sets against each other on one deal with seats swapped (greedy bots, or "
                    "the search --bot names), "
                    "and steps towards the side that won. Writes a weights file for "
                    "`evaluator=fitted,weights=FILE`.")
    p.add_argument("-n", "--pairs", type=positive_int, default=4000, help="game pairs (iterations)")
    p.add_argument("--start", type=input_file, default=None,
                   help="weights file to start from (default: the hand-made heuristic)")
    p.add_argument("--cards-from", type=input_file, default=None,
                   help="weights file whose card values the `cards` multiplier scales (default: the shipped one)")
    p.add_argument("--params", default="",
                   help="comma-separated parameters: <feature>.a|b, card:<kind>.a|b, card:*.a|b (every card) "
                        "or cards (default: every fixed feature's a and b, and cards)")
    p.add_argument("--c", type=float, default=0.05, help="perturbation of a weight at the start")
    p.add_argument("--c-cards", type=float, default=0.25, help="perturbation of the card multiplier")
    p.add_argument("--lr", type=float, default=0.5, help="step: lr * c * result at the start")
    p.add_argument("--samples", type=positive_int, default=1, help="determinizations of the greedy bots")
    p.add_argument("--bot", default="greedy",
                   help="who plays the game pairs: greedy (default), or a search (an ismcts: spec or a level) "
                        "that evaluates and plays its turns by the weights")
    p.add_argument("--batch", type=positive_int, default=16, help="pairs played per weight vector")
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=output_file, required=True, help="weights file to write" + OUT_HELP)
    p.add_argument("--log", type=output_file, default=None,
                   help="also append progress lines to this file" + OUT_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lab.spsa import SpsaConfig, tune_weights

    logf = open(args.log, "a", encoding="utf-8") if args.log else None  # noqa: SIM115

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
        if logf:
            logf.write(line + "\n")
            logf.flush()

    cfg = SpsaConfig(iterations=args.pairs, c=args.c, c_cards=args.c_cards, lr=args.lr, seed=args.seed,
                     batch=args.batch)
    params = [p.strip() for p in args.params.split(",") if p.strip()] or None
    try:
        doc = tune_weights(cfg=cfg, out=args.out, start=args.start, cards_from=args.cards_from, params=params,
                           samples=args.samples, workers=args.workers, log=log, bot=args.bot)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    finally:
        if logf:
            logf.close()
    print(json.dumps(doc["tuned"], indent=1))
    print(f"wrote {args.out}")
    return 0
