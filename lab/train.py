"""Train the learned evaluation (`kashgar train`): self-play positions, a value network, its file.

Games are played by any bot spec (a level, or a search on an earlier model: expert iteration), in
parallel processes, seeded (game g of a run is dealt from seed + g). At every k-th turn start the
model's input of every seat (`bots.learned.features`, the same compiled code the search evaluates
with) is recorded with that seat's result: 1 if it went on to win. A scikit-learn MLP (input
scaling, ReLU hidden layers, a logistic output) learns P(seat wins) from those seat-relative rows;
whole games are held out to report its log-loss, accuracy and a reliability table. The exported
file (`bots/data/value_model.json`) holds the layers with the input scaling folded into the first,
so the compiled forward pass needs nothing but the arrays.

The inputs are divided by their largest magnitude in the training rows, not standardised: a card
kind seldom seen has a tiny spread, and standardised its rare counts became inputs of 20 or more
that made the network certain of wrong outcomes (held-out log-loss 1.58 against 0.62 for chance).
The L2 penalty is strong (alpha 10) for the same reason: a few hundred games' positions are easy to
tell apart, and a weakly penalised network learns each game's outcome.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bots.learned import MODEL_FORMAT, model_feature_names


@dataclass
class Positions:
    """x[i]: one seat's input at one position; y[i]: 1 if that seat won; game[i]: the game's index;
    pos[i]: the position's index (its seats' rows share it); players[i]: seats at the table;
    target[i]: what the network learns for the row, P(seat wins) (None: the outcome y; `td_targets`).
    A game's rows are together, its positions in the order played, a position's seats in seat order."""

    x: np.ndarray
    y: np.ndarray
    game: np.ndarray
    pos: np.ndarray
    players: np.ndarray
    target: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.y)

    def subset(self, mask: np.ndarray) -> Positions:
        return Positions(self.x[mask], self.y[mask], self.game[mask], self.pos[mask], self.players[mask],
                         None if self.target is None else self.target[mask])

    def save(self, path: str) -> None:
        np.savez_compressed(path, x=self.x, y=self.y, game=self.game, pos=self.pos,
                            players=self.players)

    @classmethod
    def load(cls, path: str) -> Positions:
        z = np.load(path)
        return cls(z["x"].astype(float), z["y"], z["game"], z["pos"], z["players"])

    @classmethod
    def concat(cls, parts: list[Positions]) -> Positions:
        """Several runs' positions, their games and positions numbered apart."""
        out = parts[0]
        for p in parts[1:]:
            out = Positions(np.concatenate([out.x, p.x]), np.concatenate([out.y, p.y]),
                            np.concatenate([out.game, p.game + out.game.max() + 1]),
                            np.concatenate([out.pos, p.pos + out.pos.max() + 1]),
                            np.concatenate([out.players, p.players]))
        return out


def play_game(task: tuple[int, str, int, int, int]) -> tuple[np.ndarray, int]:
    """One seeded game (index, policy spec, players, deal seed, keep every k-th turn start): the kept
    positions' inputs as an array (positions, seats, inputs), and the winner. (Arrays, not lists of
    floats, between the processes and until the training: as lists, 3,000 games took over 20 GB.)"""
    from bots.learned import features, model_feature_names
    from lab.positions import play_recording

    _, policy, players, seed, every = task
    rows, winner = play_recording(policy, players, seed, seed * 7919, every,
                                  lambda st: [features(st, p) for p in range(players)])
    x = np.asarray(rows, dtype=float).reshape(len(rows), players, len(model_feature_names()))
    return x, winner


def collect(policy: str, games: int, players: list[int], seed: int = 0, workers: int = 1, every: int = 1,
            progress: bool = True) -> Positions:
    """Play `games` games with `policy` (game g: players[g % len(players)] seats, deal seed + g) in
    `workers` processes, with a progress bar, and record their positions."""
    from kashgar_cli.progress import Progress
    from lab.positions import in_order

    tasks = [(g, policy, players[g % len(players)], seed + g, every) for g in range(games)]
    bar = Progress(games, progress, desc="self-play")
    xs: list[np.ndarray] = []
    ys: list[np.ndarray] = []
    gs: list[np.ndarray] = []
    ps: list[np.ndarray] = []
    ns: list[np.ndarray] = []
    npos = 0
    for g, (x, winner) in enumerate(in_order(play_game, tasks, workers)):
        count, n = x.shape[0], x.shape[1]
        xs.append(x.reshape(count * n, -1))
        ys.append(np.tile(np.arange(n) == winner, count).astype(int))
        gs.append(np.full(count * n, g))
        ps.append(np.repeat(np.arange(npos, npos + count), n))
        ns.append(np.full(count * n, n))
        npos += count
        bar.update(g + 1)
    bar.close()
    return Positions(np.concatenate(xs), np.concatenate(ys), np.concatenate(gs),
                     np.concatenate(ps), np.concatenate(ns))


def make_mlp(hidden: tuple[int, ...], alpha: float, seed: int) -> Any:
    """The classifier: ReLU layers, a logistic output, trained an epoch at a time (`fit_mlp`)."""
    from sklearn.neural_network import MLPClassifier

    return MLPClassifier(hidden_layer_sizes=hidden, activation="relu", alpha=alpha, batch_size=256,
                         random_state=seed)


def fit_mlp(pos: Positions, hidden: tuple[int, ...], alpha: float, seed: int, max_iter: int,
            patience: int = 2) -> tuple[Any, int]:
    """The pipeline (inputs divided by their largest magnitude, then the MLP) fitted on `pos`, an
    epoch at a time, stopped when the log-loss on a tenth of its games (held out of the fit) has not
    improved for `patience` epochs; the best epoch's network is kept. Held out by whole games: the
    positions of one game share its outcome, and a network fitted on some of them learns the game
    (scikit-learn's own early stopping holds out rows). Returns (pipeline, epochs)."""
    import copy

    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MaxAbsScaler

    fit_part, valid = split_games(pos, 0.1, seed + 1)
    scaler = MaxAbsScaler().fit(fit_part.x)  # no centring: zero inputs stay zero (skipped in C)
    x, xv = scaler.transform(fit_part.x), scaler.transform(valid.x)
    mlp = make_mlp(hidden, alpha, seed)
    best, best_loss, since, epoch = None, math.inf, 0, 0
    if fit_part.target is None:
        xs, ys, weights = x, fit_part.y, None
    else:  # a soft target t: the row twice, won with weight 2t and lost with weight 2(1 - t): the
        # cross-entropy to t, at the weight per row of the outcomes' fit (scikit-learn divides the L2
        # penalty by a batch's weight: weights t and 1 - t made it twice as strong)
        xs = np.concatenate([x, x])
        ys = np.concatenate([np.ones(len(x), dtype=int), np.zeros(len(x), dtype=int)])
        weights = 2.0 * np.concatenate([fit_part.target, 1.0 - fit_part.target])
    for epoch in range(1, max_iter + 1):  # noqa: B007 - the epoch count is returned
        mlp.partial_fit(xs, ys, classes=[0, 1], sample_weight=weights)
        p = np.clip(mlp.predict_proba(xv)[:, 1], 1e-12, 1 - 1e-12)
        loss = -float(np.mean(valid.y * np.log(p) + (1 - valid.y) * np.log(1 - p)))
        if loss < best_loss - 1e-5:
            best, best_loss, since = copy.deepcopy(mlp), loss, 0
        else:
            since += 1
            if since >= patience:
                break
    return make_pipeline(scaler, best if best is not None else mlp), epoch


def td_targets(pos: Positions, layers: list[dict[str, list[Any]]], lam: float) -> np.ndarray:
    """TD(lambda) targets for `pos` under a model's `layers` (`logits`): for a seat's kept positions
    1..T of a game, with V_t the model's P(seat wins) at position t and z the outcome (1: won),

        G_T = z,   G_t = (1 - lambda) * V_(t+1) + lambda * G_(t+1),

    the lambda-return: lambda = 1 gives the outcome, lambda = 0 the model's value one position on. A
    network trained on them learns from the model's reading of the positions that followed as well as
    from the one outcome of the game, which a few thousand games make noisy (Sutton 1988, TD-Gammon)."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lambda is between 0 and 1, not {lam}")
    v = 1.0 / (1.0 + np.exp(-logits(layers, pos.x)))
    out = pos.y.astype(float)
    starts = np.flatnonzero(np.r_[True, pos.game[1:] != pos.game[:-1]])
    for a, b in zip(starts, np.r_[starts[1:], len(pos)], strict=True):
        n = int(pos.players[a])
        if (b - a) % n:
            raise ValueError(f"game {pos.game[a]}: {b - a} rows for {n} seats a position")
        vals, g = v[a:b].reshape(-1, n), out[a:b].reshape(-1, n).copy()
        for t in range(len(g) - 2, -1, -1):
            g[t] = (1.0 - lam) * vals[t + 1] + lam * g[t + 1]
        out[a:b] = g.reshape(-1)
    return out


def split_games(pos: Positions, fraction: float, seed: int) -> tuple[Positions, Positions]:
    """(the rest, a `fraction` of the games, at least one) by whole games, seeded."""
    games = np.unique(pos.game)
    rng = np.random.default_rng(seed)
    held = set(rng.choice(games, size=max(1, int(round(len(games) * fraction))), replace=False).tolist())
    mask = np.array([g in held for g in pos.game])
    return pos.subset(~mask), pos.subset(mask)


def export_layers(pipe: Any) -> list[dict[str, list[Any]]]:
    """The pipeline's layers with the input scaling folded into the first: x' = x / s, so
    W1' = W1 / s (row by row): the same logits from raw inputs."""
    scaler, mlp = pipe[0], pipe[-1]
    w = [np.asarray(c, dtype=float) for c in mlp.coefs_]
    b = [np.asarray(c, dtype=float) for c in mlp.intercepts_]
    w[0] = w[0] / np.asarray(scaler.scale_, dtype=float)[:, None]
    return [{"weights": wi.tolist(), "biases": bi.tolist()} for wi, bi in zip(w, b, strict=True)]


def logits(layers: list[dict[str, list[Any]]], x: np.ndarray) -> np.ndarray:
    """The exported layers' logits for rows `x` (numpy; what the compiled forward pass computes)."""
    h = x
    for k, layer in enumerate(layers):
        h = h @ np.asarray(layer["weights"]) + np.asarray(layer["biases"])
        if k < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return np.asarray(h[:, 0])


def reliability(p: np.ndarray, y: np.ndarray, bins: int = 10) -> list[dict[str, Any]]:
    """Predicted against observed win rate in `bins` equal bins of the prediction."""
    out: list[dict[str, Any]] = []
    for k in range(bins):
        lo, hi = k / bins, (k + 1) / bins
        m = (p >= lo) & ((p < hi) if k < bins - 1 else (p <= hi))
        if m.any():
            out.append({"bin": f"{lo:.1f}-{hi:.1f}", "n": int(m.sum()), "predicted": round(float(p[m].mean()), 4),
                        "observed": round(float(y[m].mean()), 4)})
    return out


def measures(z: np.ndarray, pos: Positions) -> dict[str, Any]:
    """Held-out measures of logits `z` on `pos`: per-row log-loss and accuracy of P(seat wins), and
    the log-loss of the winner under the softmax of the seats' logits (what the search backs up)."""
    p = 1.0 / (1.0 + np.exp(-z))
    eps = 1e-12
    y = pos.y
    ll = -float(np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)))
    winner_ll = []
    for i in np.unique(pos.pos):
        rows = np.flatnonzero(pos.pos == i)
        zz = z[rows] - z[rows].max()
        lp = zz - math.log(float(np.exp(zz).sum()))
        winner_ll.append(-float(lp[int(np.argmax(y[rows]))]))
    return {"rows": int(len(y)), "log_loss": round(ll, 4), "accuracy": round(float(((p > 0.5) == y).mean()), 4),
            "brier": round(float(np.mean((p - y) ** 2)), 4),
            "winner_log_loss": round(float(np.mean(winner_ll)), 4),
            "reliability": reliability(p, y)}


def baseline_measures(pos: Positions) -> dict[str, Any]:
    """The same measures for the chance of a seat (1 / players), to read the model's against."""
    prior = 1.0 / pos.players
    return measures(np.log(prior / (1 - prior)), pos)


def git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True, cwd=Path(__file__).parent).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def train(pos: Positions, hidden: tuple[int, ...] = (32,), alpha: float = 10.0, seed: int = 0,
          holdout: float = 0.2, max_iter: int = 30) -> tuple[Any, dict[str, Any]]:
    """Fit on the training games and measure on the held-out games; returns (the pipeline, the
    held-out report). The model exported is the one measured (one fit: on 2 cores, a second fit on
    every game would double the time for a fifth more data)."""
    tr, te = split_games(pos, holdout, seed)
    pipe, epochs = fit_mlp(tr, hidden, alpha, seed, max_iter)
    report = {"held_out_games": int(len(np.unique(te.game))), "training_rows": len(tr), "epochs": epochs,
              "model": measures(logits(export_layers(pipe), te.x), te), "chance": baseline_measures(te)}
    return pipe, report


def model_document(pipe: Any, pos: Positions, report: dict[str, Any], **training: Any) -> dict[str, Any]:
    """The value model file's document (`bots.learned.Model`)."""
    layers = export_layers(pipe)
    return {
        "format": MODEL_FORMAT,
        "description": "Kashgar value model: P(seat wins) = sigmoid(logit), the logit from seat-relative "
                       "features through ReLU layers (inputs raw: the scaling is folded into layer 1). "
                       "Written by kashgar train.",
        "features": model_feature_names(),
        "sizes": [len(layers[0]["weights"])] + [len(layer["biases"]) for layer in layers],
        "layers": layers,
        "training": {**training,
                     "games": int(len(np.unique(pos.game))), "positions": int(len(np.unique(pos.pos))),
                     "rows": int(len(pos)), "commit": git_commit(),
                     "date": _dt.datetime.now(_dt.UTC).date().isoformat(), "held_out": report},
    }


def write_model(doc: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, separators=(",", ":"))
        fh.write("\n")
