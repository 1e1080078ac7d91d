"""Train the learned policy (`bots.policy`) on the search's own root visits (expert iteration).

The games (`lab.policy_games`: one JSON line a game, each decision's code and the root visits of
every legal decision) are replayed from their deals; at every searched decision, the policy's input
of every legal decision (`KashgarSearchGame.policy_features`, the compiled code the search scores
with) is recorded with its share of the root visits. A linear softmax over the legal decisions is
fitted to those shares (the cross-entropy, an L2 penalty; inputs divided by their largest
magnitude, the scaling folded into the weights), by L-BFGS. Whole games are held out: the report
gives the held-out top-1 agreement (the policy's best decision is the search's most visited; ties
count by their share), against the greedy choice's (the highest change of the mover's greedy
value, the choice the search's continuation makes without a policy).
"""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bots.policy import POLICY_FORMAT, policy_feature_names


@dataclass
class Decisions:
    """x[i]: one legal decision's input; target[i]: its share of the root visits; group[i]: the
    decision point it belongs to (a point's rows together, in legal order); game[g], players[g]:
    decision point g's game and seats."""

    x: np.ndarray
    target: np.ndarray
    group: np.ndarray
    game: np.ndarray
    players: np.ndarray

    @property
    def points(self) -> int:
        return len(self.game)

    def subset(self, games: set[int]) -> Decisions:
        """The decision points of `games` only, renumbered."""
        keep = np.array([g in games for g in self.game], dtype=bool)
        rows = keep[self.group]
        new_index = np.cumsum(keep) - 1
        return Decisions(self.x[rows], self.target[rows], new_index[self.group[rows]], self.game[keep],
                         self.players[keep])


def read_games(path: str | Path) -> list[dict[str, Any]]:
    """The games of a `lab.policy_games` file."""
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def search_game_for(st: Any) -> Any:
    """The compiled search game of master's preset, whose `policy_features` the policy reads."""
    from bots.ismcts_bot import make_value, search_game
    from bots.levels import get_level

    cfg = get_level("master").config
    return search_game(make_value(cfg.evaluator, st, cfg.scale, cfg.weights), st, cfg)


def decisions(games: list[dict[str, Any]]) -> Decisions:
    """Every searched decision of `games`, replayed from their deals."""
    from lab.arena import new_state

    xs: list[list[float]] = []
    ts: list[float] = []
    gs: list[int] = []
    point_game: list[int] = []
    point_players: list[int] = []
    sg = None
    for gi, rec in enumerate(games):
        st = new_state("kashgar", rec["players"], rec["deal"], None)
        if sg is None:
            sg = search_game_for(st)
        for code, visits, *_ in rec["moves"]:
            if visits:
                legal = list(st.legal_codes())
                by_code = {int(c): float(v) for c, v in visits}
                total = sum(by_code.values())
                if total > 0:
                    rows = sg.policy_features(st)
                    for c, row in zip(legal, rows, strict=True):
                        xs.append(row)
                        ts.append(by_code.get(c, 0.0) / total)
                        gs.append(len(point_game))
                    point_game.append(gi)
                    point_players.append(rec["players"])
            st.apply(int(code))
    return Decisions(np.asarray(xs, dtype=float), np.asarray(ts), np.asarray(gs, dtype=int),
                     np.asarray(point_game, dtype=int), np.asarray(point_players, dtype=int))


def _group_softmax(z: np.ndarray, group: np.ndarray, points: int) -> np.ndarray:
    m = np.full(points, -np.inf)
    np.maximum.at(m, group, z)
    e = np.exp(z - m[group])
    s = np.zeros(points)
    np.add.at(s, group, e)
    return e / s[group]


def fit(data: Decisions, alpha: float = 1e-3, max_iter: int = 500) -> np.ndarray:
    """The weights of the linear softmax fitted to `data` (the mean cross-entropy per decision
    point plus alpha / 2 x |w|^2 on the scaled inputs), in the units of the raw inputs."""
    from scipy.optimize import minimize

    scale = np.abs(data.x).max(axis=0)
    scale[scale == 0] = 1.0
    x = data.x / scale
    n = data.points

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        p = _group_softmax(x @ w, data.group, n)
        ce = -float(np.sum(data.target * np.log(np.maximum(p, 1e-300)))) / n
        grad = x.T @ (p - data.target) / n  # each point's targets sum to 1
        return ce + 0.5 * alpha * float(w @ w), grad + alpha * w

    res = minimize(loss, np.zeros(x.shape[1]), jac=True, method="L-BFGS-B", options={"maxiter": max_iter})
    return np.asarray(res.x) / scale


def agreement(scores: np.ndarray, data: Decisions) -> float:
    """The mean over decision points of the share of the best-scored decisions (ties: all of them)
    that are among the most visited: the top-1 agreement, a tie counted by its share."""
    n = data.points
    best = np.full(n, -np.inf)
    np.maximum.at(best, data.group, scores)
    top = np.full(n, -np.inf)
    np.maximum.at(top, data.group, data.target)
    chosen = scores >= best[data.group] - 1e-12
    hit = chosen & (data.target >= top[data.group] - 1e-12)
    k = np.zeros(n)
    h = np.zeros(n)
    np.add.at(k, data.group, chosen)
    np.add.at(h, data.group, hit)
    return float(np.mean(h / k))


def cross_entropy(scores: np.ndarray, data: Decisions) -> float:
    """The mean cross-entropy of the visit shares under softmax(scores), per decision point."""
    p = _group_softmax(scores, data.group, data.points)
    return -float(np.sum(data.target * np.log(np.maximum(p, 1e-300)))) / data.points


def greedy_scores(data: Decisions) -> np.ndarray:
    """The greedy choice's scores: the change of the mover's greedy value."""
    return data.x[:, policy_feature_names().index("change.greedy_value")]


def split(games: int, fraction: float, seed: int) -> tuple[set[int], set[int]]:
    """(training games, held-out games): a `fraction` of the games' indices held out, at random."""
    rng = np.random.default_rng(seed)
    held = set(rng.choice(games, size=max(1, round(games * fraction)), replace=False).tolist())
    return set(range(games)) - held, held


def measure(w: np.ndarray, data: Decisions) -> dict[str, Any]:
    """The policy's and the greedy choice's top-1 agreement and cross-entropy on `data`."""
    z = data.x @ w
    g = greedy_scores(data)
    return {"decision_points": data.points, "games": len(set(data.game.tolist())),
            "top1": round(agreement(z, data), 4), "greedy_top1": round(agreement(g, data), 4),
            "cross_entropy": round(cross_entropy(z, data), 4)}


def train(games: list[dict[str, Any]], alpha: float = 1e-3, held_out: float = 0.2,
          seed: int = 0) -> tuple[np.ndarray, dict[str, Any]]:
    """The policy fitted on the games not held out (a `held_out` fraction of the games, drawn from
    `seed`), and its report: the agreement on the fitted games and on the held-out ones, which
    measure these same weights."""
    data = decisions(games)
    fit_games, held = split(len(games), held_out, seed)
    train_part = data.subset(fit_games)
    test_part = data.subset(held)
    w = fit(train_part, alpha)
    report = {"train": measure(w, train_part), "held_out": measure(w, test_part), "alpha": alpha,
              "held_out_fraction": held_out, "split_seed": seed}
    return w, report


def model_document(w: np.ndarray, report: dict[str, Any], **made: Any) -> dict[str, Any]:
    """The policy file's content: format, input names, weights, how it was made and its report."""
    names = policy_feature_names()
    return {"format": POLICY_FORMAT, "features": names, "weights": [float(round(v, 8)) for v in w],
            "report": report, "made": {**made, "date": _dt.date.today().isoformat()}}


def main(argv: list[str]) -> int:
    """`python -m lab.policy GAMES.jsonl... --out FILE [--alpha A]`: train, print the report, write."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m lab.policy")
    ap.add_argument("games", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--alpha", type=float, default=1e-3)
    ap.add_argument("--held-out", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    games = [g for path in args.games for g in read_games(path)]
    w, report = train(games, args.alpha, args.held_out, args.seed)
    print(json.dumps(report, indent=2))
    doc = model_document(w, report, games=[str(Path(p).name) for p in args.games], n_games=len(games),
                         command="python -m lab.policy " + " ".join(argv))
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
