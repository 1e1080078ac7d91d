"""The review's noise: how much win chance a level's search at one seed takes off the choice the same
search makes at another seed, on the positions of real games. A loss that small is the search's own
disagreement with itself, not a mistake: the review's thresholds (`bots.review`) sit above it.

`python -m lab.review_noise --games 4 --level master --played-by expert` plays the games, searches
each seat's view at every decision with more than one legal choice at two seeds, and prints the
distribution (JSON with --json)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import engine_ext
from bots import review as judging
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


def losses(record: dict[str, Any], level: str, seeds: tuple[int, int] = (1, 2)) -> list[float]:
    """For each reviewed decision: the loss that the search at `seeds[0]` assigns to the choice of the
    search at `seeds[1]` (0 when they agree)."""
    from service import review

    spec = review.plan(record, level, None, 0)
    wanted = set(spec.moves)
    out = []
    for step in records.Replay(record):
        if step.number not in wanted:
            continue
        view = dict(engine_ext.from_json(step.before).to_json(observer=int(step.move["seat"])))
        a, b = (review.search.run_sync(review.search.SearchSpec(state=view, level=level, iterations=spec.iterations,
                                                                 time_ms=spec.time_ms, seed=s, parallel=1))
                for s in seeds)
        loss = judging.judge(a, str(b["decision_text"]))["loss"]
        if loss is not None:
            out.append(float(loss))
    return out


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
    xs: list[float] = []
    for g in range(args.games):
        xs += losses(play(args.played_by, args.players, args.seed + g), args.level)
    report = {
        "level": args.level, "played_by": args.played_by, "games": args.games, "decisions": len(xs),
        "disagree": round(sum(1 for x in xs if x > 0) / max(1, len(xs)), 3),
        "mean": round(sum(xs) / max(1, len(xs)), 4),
        **{f"p{int(q * 100)}": round(quantile(xs, q), 4) for q in (0.5, 0.9, 0.95, 0.99)},
        "max": round(max(xs), 4) if xs else None,
        **{f"share_from_{t:g}": round(sum(1 for x in xs if x >= t) / max(1, len(xs)), 4)
           for t in (judging.INACCURACY, judging.MISTAKE, judging.BLUNDER)},
    }
    print(json.dumps(report) if args.json else "\n".join(f"{k}: {v}" for k, v in report.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
