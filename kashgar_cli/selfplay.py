"""`kashgar selfplay`: watch seeded random games, or print them as JSON lines."""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

import engine_ext
from kashgar_cli.errors import check_seeds, positive_int


def _run(args: argparse.Namespace) -> int:
    from kashgar_cli.progress import Progress

    check_seeds(args.seed, args.games, engine_ext.SEEDS - 1)
    bar = Progress(args.games, not args.verbose)
    for i in range(args.games):
        seed = args.seed + i
        g = engine_ext.new_game(args.players, seed=seed, variant="all" if args.variant else None)
        rnd = random.Random(seed)
        moves = 0
        while not g.is_terminal:
            legal = g.legal()
            d = rnd.choice(legal)
            if args.verbose:
                print(f"turn {g.to_json()['turn']:>3} player {g.current_player}: {d}")
            g.apply(d)
            moves += 1
        result = {"seed": seed, "players": args.players, "decisions": moves,
                  "turns": g.to_json()["turn"], "vp": g.scores(), "winner": g.winner()}
        bar.write(json.dumps(result), file=sys.stdout)
        bar.update(i + 1)
    bar.close()
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("selfplay", help="play seeded random games and print the results")
    p.add_argument("--games", type=positive_int, default=3)
    p.add_argument("--players", type=int, default=2, choices=[2, 3, 4])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variant", action="store_true", help="with all Cut-and-Thrust cards")
    p.add_argument("-v", "--verbose", action="store_true")
    p.set_defaults(func=_run)
