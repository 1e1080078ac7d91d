"""The review's noise: the loss in win chance the review at a level assigns to that level's own
choices, on the positions of real games. The level plays at one seed and is judged by searches at
others: whatever loss they find is the search disagreeing with itself, not a mistake, and the
review's thresholds (`bots.review`) sit above it. Printed for one judging search and for the
review's (`service.review.SEEDS` searches, the smallest loss).

`python -m lab.review_noise --games 4 --level master --played-by expert` plays the games, searches
each seat's view at every decision with more than one legal choice, and prints the distributions
(JSON with --json)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import engine_ext
from bots import review as judging
from bots.answer import Answer
from engine_ext import record as records
from engine_ext.decisions import Decision


def play(level: str, players: int, seed: int) -> dict[str, Any]:
    """A game of `level` against itself, as a record."""
    from bots.levels import make_bot

    bot = make_bot(level)
    game = engine_ext.new_game(players=players, seed=seed)
    moves: list[str] = []
    while not game.is_terminal:
        an = bot.analyse(game.state, seed=seed * 1000 + len(moves))
        text = str(Decision.from_code(an.code, game.state, game.engine.data))
        game.apply(text)
        moves.append(text)
    return records.record_from_moves(moves, players=players, seed=seed)


def losses(record: dict[str, Any], level: str) -> tuple[list[float], list[float]]:
    """For each reviewed decision, the loss of the level's choice (its search at seed 99) as one
    search judges it, and as the review judges it (its `SEEDS` searches)."""
    from service import review, search

    spec = review.plan(record, level, None, 0)
    wanted = set(spec.moves)
    one: list[float] = []
    both: list[float] = []
    for step in records.Replay(record):
        if step.number not in wanted:
            continue
        view = step.view()

        def answer(state: dict[str, Any], seed: int) -> Answer:
            return search.answer(search.SearchSpec(state=state, level=level, iterations=spec.iterations,
                                                   time_ms=spec.time_ms, seed=seed, parallel=1))

        choice = answer(view, 99).decision
        judges = [answer(view, review.decision_seed(k, step.number)) for k in range(review.SEEDS)]
        single = judging.judge(judges[0], choice)["loss"]
        joint = judging.judge_all(judges, choice)["loss"]
        if single is not None:
            one.append(float(single))
        if joint is not None:
            both.append(float(joint))
    return one, both


def quantile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m lab.review_noise", description=__doc__)
    ap.add_argument("--games", type=int, default=4)
    ap.add_argument("--players", type=int, default=2)
    ap.add_argument("--level", default="master", help="the level whose search is measured")
    ap.add_argument("--played-by", default="expert", help="the level that plays the games")
    ap.add_argument("--seed", type=int, default=8100)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    one: list[float] = []
    both: list[float] = []
    for g in range(args.games):
        a, b = losses(play(args.played_by, args.players, args.seed + g), args.level)
        one += a
        both += b

    def figures(xs: list[float]) -> dict[str, Any]:
        return {
            "decisions": len(xs),
            "disagree": round(sum(1 for x in xs if x > 0) / max(1, len(xs)), 3),
            "mean": round(sum(xs) / max(1, len(xs)), 4),
            **{f"p{int(q * 100)}": round(quantile(xs, q), 4) for q in (0.5, 0.9, 0.95, 0.99)},
            "max": round(max(xs), 4) if xs else None,
            **{f"share_from_{t:g}": round(sum(1 for x in xs if x >= t) / max(1, len(xs)), 4)
               for t in (judging.INACCURACY, judging.MISTAKE, judging.BLUNDER)},
        }

    report = {"level": args.level, "played_by": args.played_by, "games": args.games,
              "one_search": figures(one), "review": figures(both)}
    print(json.dumps(report, indent=None if args.json else 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
