"""A value learned from a search's own games with the search's root value in its target (AlphaZero's
z and q): the positions of `lab.policy_games` records, each searched decision's seats, the target of a
seat `(1 - q_weight) * z + q_weight * q`, z its outcome (1 if it won) and q the search's mean reward of
the chosen decision for the mover (1 - q for the other seat at 2 players; at 3 and 4 players the other
seats keep their outcome). Trained by `lab.train` (the soft targets of `Positions.target`), measured on
held-out games against their outcomes, so targets with and without q compare on the same rows.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from lab.arena import new_state
from lab.train import Positions


def seat_rows(games: list[dict[str, Any]]) -> tuple[Positions, np.ndarray]:
    """Every searched decision's seats of `games` (records with the root value) with their outcomes,
    and each row's root value q for its seat (the replay and the inputs, made once for every weight)."""
    from bots.learned import features

    xs: list[list[float]] = []
    ys: list[int] = []
    qs: list[float] = []
    gs: list[int] = []
    ps: list[int] = []
    ns: list[int] = []
    npos = 0
    for gi, rec in enumerate(games):
        n, winner = int(rec["players"]), int(rec["winner"])
        st = new_state("kashgar", n, rec["deal"], None)
        for code, visits, q in rec["moves"]:
            if visits and q is not None:
                mover = int(st.current_player())
                for seat in range(n):
                    z = int(seat == winner)
                    if seat == mover:
                        qs.append(float(q))
                    else:
                        qs.append(1.0 - float(q) if n == 2 else float(z))
                    xs.append(features(st, seat))
                    ys.append(z)
                    gs.append(gi)
                    ps.append(npos)
                    ns.append(n)
                npos += 1
            st.apply(int(code))
    return (Positions(np.asarray(xs, dtype=float), np.asarray(ys), np.asarray(gs), np.asarray(ps),
                      np.asarray(ns)), np.asarray(qs))


def with_targets(rows: Positions, seat_q: np.ndarray, q_weight: float) -> Positions:
    """`rows` with the target `(1 - q_weight) * z + q_weight * q` of every row."""
    return Positions(rows.x, rows.y, rows.game, rows.pos, rows.players,
                     (1.0 - q_weight) * rows.y + q_weight * seat_q)


def positions(games: list[dict[str, Any]], q_weight: float) -> Positions:
    """Every searched decision's seats of `games` (records with the root value), with their targets."""
    return with_targets(*seat_rows(games), q_weight)


def main(argv: list[str]) -> int:
    """`python -m lab.search_value GAMES.jsonl... [--q 0,0.5] [--out FILE]`: for each weight of q, the
    held-out report (a fifth of the games, split seed 0); --out writes the last weight's model."""
    import argparse

    from lab.policy import read_games
    from lab.train import model_document, train, write_model

    ap = argparse.ArgumentParser(prog="python -m lab.search_value")
    ap.add_argument("games", nargs="+")
    ap.add_argument("--q", default="0,0.5", help="weights of the root value in the target, comma-separated")
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--alpha", type=float, default=10.0)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    games = [g for path in args.games for g in read_games(path)]
    rows, seat_q = seat_rows(games)
    for w in [float(v) for v in args.q.split(",")]:
        pos = with_targets(rows, seat_q, w)
        pipe, report = train(pos, hidden=(args.hidden,), alpha=args.alpha)
        held = report["model"]
        print(json.dumps({"q_weight": w, "games": len(games), "rows": len(pos), "epochs": report["epochs"],
                          "held_out_games": report["held_out_games"], "log_loss": held["log_loss"],
                          "winner_log_loss": held["winner_log_loss"], "accuracy": held["accuracy"],
                          "chance_log_loss": report["chance"]["log_loss"]}))
        if args.out:
            write_model(model_document(pipe, pos, report, q_weight=w, command="python -m lab.search_value "
                                       + " ".join(argv)), args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
