"""Fit the evaluation's weights to self-play outcomes (`kashgar fit-eval`).

Games are played by a policy (any bot spec); at every turn start the features of every seat are
recorded (`KashgarSearchGame.features`, the same code the search evaluates with), and each position is
labelled with the seat that went on to win. The weights maximise the likelihood of the winner
under the search's own model of a position::

    P(seat p wins) = softmax_p( sum_i (a_i + b_i * t) * f_i(p) )

(a conditional logit; for two players, logistic regression on the difference of the seats'
features), with an L2 penalty. Whole games are held out to report the log-loss and accuracy of
the fitted weights next to the hand-made ones on the same positions.

The model is constrained, because a search maximises what it is given: an unconstrained fit (every
weight free) predicts the winner best, but it learns what goes with winning under the policy that
played (early VP and resources weigh about nothing; they get spent), and ISMCTS maximising it won
21% against greedy (BENCHMARKS.md). So the fitted value keeps the hand-made heuristic's shape
(VP, resources and contracts in reach in fixed proportions) with a fitted scale at the start and
at the end of the game, plus a non-negative value for each card kind in the seat's caravans (the
engine the hand-made heuristic ignores), each also at the start and at the end. All of these
are >= 0 (L-BFGS-B with bounds).
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any

import numpy as np

from bots import build_for
from bots.features import CARD_PREFIX, HAND_WEIGHTS, engine_kind_slugs, feature_names, weight_vector
from lab.positions import in_order, play_recording


@dataclass
class Positions:
    """Recorded positions: x[s, p, :] = seat p's features and features * t; y[s] = the winner."""

    x: np.ndarray
    y: np.ndarray
    game: np.ndarray  # the game each position comes from (held-out splits are by game)


def play_positions(task: tuple[int, str, int, int, int]) -> tuple[list[list[list[float]]], int]:
    """One self-play game (index, policy spec, players, seed, keep every k-th turn start):
    each kept position's per-seat [features, features * t], and the winner."""
    g, policy, players, seed, every = task
    core: Any = None

    def record(st: Any) -> list[list[float]]:
        nonlocal core
        core = core or build_for(st).kashgar.KashgarSearchGame()  # its features
        t = core.progress(st)
        return [f + [v * t for v in f] for f in (core.features(st, p) for p in range(players))]

    return play_recording(policy, players, seed + g, seed * 7919 + g * 104729, every, record)


def collect(policy: str, games: int, players: int = 2, seed: int = 0, workers: int = 1,
            every: int = 1) -> Positions:
    """Play `games` self-play games with `policy` and record their positions."""
    tasks = [(g, policy, players, seed, every) for g in range(games)]
    results = list(in_order(play_positions, tasks, workers))
    xs: list[list[list[float]]] = []
    ys: list[int] = []
    gs: list[int] = []
    for g, (rows, winner) in enumerate(results):
        xs += rows
        ys += [winner] * len(rows)
        gs += [g] * len(rows)
    return Positions(np.asarray(xs, dtype=float), np.asarray(ys, dtype=int), np.asarray(gs, dtype=int))


def log_loss(w: np.ndarray, pos: Positions) -> tuple[float, float]:
    """(mean negative log-likelihood of the winner, accuracy of the argmax) under weights `w`."""
    z = pos.x @ w                                     # positions x seats
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    nll = -float(logp[np.arange(len(pos.y)), pos.y].mean())
    acc = float((z.argmax(axis=1) == pos.y).mean())
    return nll, acc


def hybrid_basis(names: list[str]) -> np.ndarray:
    """The constrained model's basis: raw weights (a then b per feature) = basis @ model weights.

    Model weights: the hand heuristic's scale at the start and at the end of the game, then each
    card kind's value at the start, then at the end. A value v0 at t = 0 and v1 at t = 1 is the raw
    pair a = v0, b = v1 - v0."""
    nf = len(names)
    hand = np.asarray(weight_vector(HAND_WEIGHTS, names)[:nf])
    cards = [i for i, n in enumerate(names) if n.startswith(CARD_PREFIX)]
    m = 2 + 2 * len(cards)
    basis = np.zeros((2 * nf, m))
    basis[:nf, 0] = hand                     # start scale: a += s0 * hand, b -= s0 * hand
    basis[nf:, 0] = -hand
    basis[nf:, 1] = hand                     # end scale: b += s1 * hand
    for j, i in enumerate(cards):
        basis[i, 2 + j] = 1.0                # card value at the start
        basis[nf + i, 2 + j] = -1.0
        basis[nf + i, 2 + len(cards) + j] = 1.0  # at the end
    return basis


def fit(pos: Positions, basis: np.ndarray, l2: float = 20.0, free: int = 2) -> np.ndarray:
    """Raw weights `basis @ m` maximising the conditional-logit likelihood of the winners over
    model weights m >= 0; an L2 penalty `l2` on every model weight but the first `free`."""
    from scipy.optimize import minimize

    x = pos.x @ basis                                   # positions x seats x model weights
    y = pos.y
    rows = np.arange(len(y))
    pen = np.full(basis.shape[1], l2)
    pen[:free] = 0.0

    def nll(m: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ m
        z = z - z.max(axis=1, keepdims=True)
        lse = np.log(np.exp(z).sum(axis=1))
        p = np.exp(z - lse[:, None])
        value = -float((z[rows, y] - lse).sum()) + 0.5 * float(pen @ (m * m))
        grad = -(x[rows, y] - np.einsum("ns,nsd->nd", p, x)).sum(axis=0) + pen * m
        return value, grad

    start = np.zeros(basis.shape[1])
    start[:free] = 1.0
    res = minimize(nll, start, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * basis.shape[1])
    return np.asarray(basis @ res.x)


def fit_report(policy: str, games: int, players: int, seed: int, workers: int, l2: float,
               holdout: float = 0.2, every: int = 1) -> dict[str, Any]:
    """Collect, fit on the training games, score both weight sets on the held-out games, then refit
    on every game; returns the weights document (`bots/data/eval_weights.json`)."""
    names = feature_names(engine_kind_slugs())
    pos = collect(policy, games, players, seed, workers, every)
    rng = random.Random(seed)
    held = set(rng.sample(range(games), max(1, int(round(games * holdout)))))
    mask = np.array([g in held for g in pos.game])
    train = Positions(pos.x[~mask], pos.y[~mask], pos.game[~mask])
    test = Positions(pos.x[mask], pos.y[mask], pos.game[mask])
    basis = hybrid_basis(names)
    w_train = fit(train, basis, l2)
    hand = np.asarray(weight_vector(HAND_WEIGHTS, names))
    nll_fit, acc_fit = log_loss(w_train, test)
    nll_hand, acc_hand = log_loss(hand, test)
    w = fit(pos, basis, l2)
    nf = len(names)
    weights = {name: [round(float(w[i]), 6), round(float(w[nf + i]), 6)] for i, name in enumerate(names)}
    return {
        "description": "Kashgar evaluation weights: value(p) = sum (a + b * t) * feature(p), t = leader's "
                       "VP / 25; win probabilities = softmax(values). Written by kashgar fit-eval.",
        "weights": weights,
        "fit": {
            "policy": policy, "games": games, "players": players, "seed": seed, "l2": l2,
            "positions": int(len(pos.y)), "held_out_games": len(held),
            "held_out_positions": int(mask.sum()),
            "held_out_log_loss": {"fitted": round(nll_fit, 4), "hand": round(nll_hand, 4),
                                  "chance": round(math.log(players), 4)},
            "held_out_accuracy": {"fitted": round(acc_fit, 4), "hand": round(acc_hand, 4),
                                  "chance": round(1.0 / players, 4)},
        },
    }


def write(doc: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
