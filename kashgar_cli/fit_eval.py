"""`kashgar fit-eval`: fit the evaluation's weights to self-play outcomes."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from kashgar_cli.errors import OUT_HELP, CliError, at_least, output_file, positive_int, process_count


def register(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fit-eval", help="fit the search's evaluation weights to self-play outcomes",
        description="Play self-play games with a policy, record every seat's features at each turn "
                    "start, fit the weights of the evaluation (conditional logit of the winner), report "
                    "the held-out log-loss next to the hand-made weights, and write the weights file.")
    p.add_argument("--policy", default="greedy:evaluator=kashgar", help="bot spec that plays the games")
    p.add_argument("-n", "--games", type=at_least(2), default=600, help="games (some are held out: at least 2)")
    p.add_argument("-p", "--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("-j", "--workers", type=process_count, default=os.cpu_count() or 1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--l2", type=float, default=20.0, help="L2 penalty on the card values")
    p.add_argument("--every", type=positive_int, default=1, help="keep every k-th turn start of a game")
    p.add_argument("--out", type=output_file, default="bots/data/eval_weights.json",
                   help="weights file to write" + OUT_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from lab.arena import cached_bot
    from lab.fit_eval import fit_report, write

    try:
        cached_bot(args.policy)  # a bad spec is refused here, before any game
    except ValueError as exc:
        raise CliError(f"argument --policy: {exc}") from None
    doc = fit_report(args.policy, args.games, args.players, args.seed, args.workers, args.l2, every=args.every)
    write(doc, args.out)
    print(json.dumps(doc["fit"], indent=1))
    print(f"wrote {args.out}")
    return 0
