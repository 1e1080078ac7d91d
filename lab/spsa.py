"""Tune the evaluation's weights by play: SPSA (simultaneous perturbation stochastic approximation),
as fishtest tunes engine parameters.

`kashgar fit-eval` fits weights that *predict* the winner of games a fixed policy played; a search
that maximises them plays no better (BENCHMARKS.md). SPSA instead changes the weights in the
direction that wins games. Each iteration perturbs every parameter at once by +-c (a random sign
per parameter), plays the two weight sets against each other on one deal with seats swapped (a
game pair), and moves every parameter by `lr * c * result * sign`, where result in [-1, 1] is the
pair's score of the plus side minus the minus side's, halved. Steps and perturbations shrink as
fishtest's do (`a_k = 1 / (A + k + 1) ** alpha`, `c_k = c / (k + 1) ** gamma`).

The parameters are the fixed features' weights (`vp.a`, `vp.b`, ...: the opening part `a` and the
end-game part `b` of `bots.features`) and `cards`, one multiplier of a per-card value table (the
fitted weights' card values): tuning 96 card weights one by one needs far more games than a
multiplier of a table whose shape was fitted on 30,000 positions.

The games are played by the greedy bot by default (one turn ahead, the evaluation decides
everything it does), which is cheap (about 0.05 s a game with one determinization) and values the
same turn-end positions a macro search does. `bot` may instead name a search (any `ismcts:` spec or
level): both sides then search with the weights at their leaves and in their in-turn and rollout
choices, so the weights are tuned for the positions a search values, a few turns ahead. Whether
tuned weights make a stronger bot is for a tournament to say (BENCHMARKS.md).
"""

from __future__ import annotations

import json
import multiprocessing as mp
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bots.features import CARD_PREFIX, FIXED, HAND_WEIGHTS, engine_kind_slugs, load_weights

Weights = dict[str, tuple[float, float]]
CARDS = "cards"  # the card-table multiplier's parameter name


def default_params() -> list[str]:
    """Every fixed feature's `a` and `b`, and the card-table multiplier."""
    return [f"{f}.{part}" for f in FIXED for part in ("a", "b")] + [CARDS]


def expand_params(params: Sequence[str], card_features: Sequence[str]) -> list[str]:
    """`params` checked, with `card:*.a` / `card:*.b` expanded to every card of `card_features`
    (one parameter per card: their values tuned one by one instead of by the multiplier)."""
    out: list[str] = []
    cards = {f for f in card_features if f.startswith(CARD_PREFIX)}
    for p in params:
        feature, _, part = p.rpartition(".")
        if p == CARDS:
            out.append(p)
        elif feature == CARD_PREFIX + "*" and part in ("a", "b"):
            out += [f"{f}.{part}" for f in sorted(cards)]
        elif part in ("a", "b") and (feature in FIXED or feature in cards):
            out.append(p)
        else:
            raise ValueError(f"unknown parameter {p!r}: <feature>.a, <feature>.b (features: "
                             f"{', '.join(FIXED)}, card:<kind>, card:*) or {CARDS}")
    if CARDS in out and any(p.startswith(CARD_PREFIX) for p in out):
        raise ValueError(f"tune the card values either by {CARDS} or one by one, not both")
    return list(dict.fromkeys(out))


def theta_of(weights: Weights, params: Sequence[str], cards: float = 0.0) -> dict[str, float]:
    """The parameter values of `weights` (`cards`: the card-table multiplier)."""
    out: dict[str, float] = {}
    for name in params:
        if name == CARDS:
            out[name] = cards
            continue
        feature, part = name.rsplit(".", 1)
        out[name] = weights.get(feature, (0.0, 0.0))[0 if part == "a" else 1]
    return out


def weights_of(theta: dict[str, float], base: Weights, card_table: Weights) -> Weights:
    """The weights: `base`, with every tuned fixed weight from `theta` and the card values of
    `card_table` times `theta["cards"]` (when tuned)."""
    out = dict(base)
    for name, v in theta.items():
        if name == CARDS:
            continue
        feature, part = name.rsplit(".", 1)
        a, b = out.get(feature, (0.0, 0.0))
        out[feature] = (v, b) if part == "a" else (a, v)
    if CARDS in theta:
        m = theta[CARDS]
        for feature, (a, b) in card_table.items():
            if feature.startswith(CARD_PREFIX):
                out[feature] = (m * a, m * b)
    return out


@dataclass
class SpsaConfig:
    iterations: int = 4000      # game pairs
    c: float = 0.05             # perturbation of a weight at the start (log-odds units)
    c_cards: float = 0.25       # perturbation of the card-table multiplier
    lr: float = 0.5             # a step is lr * a_k * c_k * result (a_0 = 1, so lr * c at the start)
    alpha: float = 0.602
    gamma: float = 0.101
    big_a: float = 0.0          # A (stability constant); 0: a tenth of the iterations
    seed: int = 0
    batch: int = 16             # pairs played on one weight vector (in parallel)


@dataclass
class SpsaResult:
    theta: dict[str, float]
    history: list[dict[str, float]] = field(default_factory=list)  # theta after each batch
    score: float = 0.0          # mean pair result of the plus side (should be near 0)
    pairs: int = 0


PairFn = Callable[[list[tuple[dict[str, float], dict[str, float], int]]], list[float]]


def spsa(theta0: dict[str, float], play_pairs: PairFn, cfg: SpsaConfig,
         log: Callable[[str], None] | None = None) -> SpsaResult:
    """Maximise the expected result of `play_pairs` over theta. `play_pairs` takes a list of
    (theta_plus, theta_minus, seed) and returns, for each, the plus side's result in [-1, 1]."""
    rng = random.Random(cfg.seed)
    theta = dict(theta0)
    big_a = cfg.big_a or cfg.iterations / 10
    res = SpsaResult(dict(theta))
    total = 0.0
    k = 0
    while k < cfg.iterations:
        n = min(cfg.batch, cfg.iterations - k)
        tasks = []
        flips: list[dict[str, float]] = []
        for j in range(n):
            ck = 1.0 / (k + j + 1) ** cfg.gamma
            flip = {p: (1.0 if rng.random() < 0.5 else -1.0) * ck * (cfg.c_cards if p == CARDS else cfg.c)
                    for p in theta}
            flips.append(flip)
            plus = {p: v + flip[p] for p, v in theta.items()}
            minus = {p: v - flip[p] for p, v in theta.items()}
            tasks.append((plus, minus, rng.getrandbits(31)))
        results = play_pairs(tasks)
        for j, (flip, r) in enumerate(zip(flips, results, strict=True)):
            ak = 1.0 / (big_a + k + j + 1) ** cfg.alpha * (big_a + 1) ** cfg.alpha
            for p in theta:
                theta[p] += cfg.lr * ak * r * flip[p]
            total += r
        k += n
        res.history.append(dict(theta))
        if log:
            log(f"{k}/{cfg.iterations} pairs, plus side {total / k:+.3f}: "
                + ", ".join(f"{p}={v:.4f}" for p, v in theta.items()))
    res.theta = theta
    res.pairs = k
    res.score = total / max(1, k)
    return res


# ---- game pairs between two weight sets ------------------------------------------------------

_SETUP: dict[str, Any] = {}


GREEDY = "greedy"  # the default players of the game pairs


def pair_bot(spec: str, weights: Weights, samples: int = 1) -> Any:
    """A player of the game pairs using `weights`: the greedy bot with `samples` determinizations
    (`spec` "greedy"), or the search `spec` names (an `ismcts:` spec or a level) with the weights as
    its evaluation and in-turn policy. ValueError for any other spec."""
    from bots.evaluate import PlayWeightsValue, WeightedValue
    from bots.greedy import GreedyBot
    from bots.ismcts_bot import ISMCTSBot
    from lab.bots import make_bot

    if spec == GREEDY:
        return GreedyBot(samples=samples, evaluator=WeightedValue(weights))
    bot = make_bot(spec)
    if not isinstance(bot, ISMCTSBot):
        raise ValueError(f"bot {spec!r}: the game pairs need {GREEDY!r} or a search (ismcts:... or a level)")
    bot.leaf_value = PlayWeightsValue(weights)
    return bot


def _bot(theta: dict[str, float]) -> Any:
    return pair_bot(_SETUP["bot"], weights_of(theta, _SETUP["base"], _SETUP["cards"]), _SETUP["samples"])


def play_pair(task: tuple[dict[str, float], dict[str, float], int]) -> float:
    """The plus side's result of one deal played twice, seats swapped: (wins - losses) / 2."""
    from lab.arena import new_state, play_out

    plus, minus, seed = task
    bots = [_bot(plus), _bot(minus)]
    r = 0.0
    for swap in (0, 1):
        st = new_state("kashgar", 2, seed, _SETUP["compiled"])
        seats = [bots[swap], bots[1 - swap]]
        play_out(st, seats, seed * 7919 + swap)
        r += 1.0 if int(st.winner()) == swap else -1.0
    return r / 2


def _init(base: Weights, cards: Weights, samples: int, compiled: bool | None, bot: str) -> None:
    _SETUP.update(base=base, cards=cards, samples=samples, compiled=compiled, bot=bot)


class PairPlayer:
    """Plays game pairs between weight sets in `workers` processes (`pair_bot(bot, ...)`: greedy bots
    with `samples` determinizations by default); usable as `spsa`'s `play_pairs`. Close it (or use
    `with`)."""

    def __init__(self, base: Weights, cards: Weights, *, samples: int = 1, workers: int = 1,
                 compiled: bool | None = None, bot: str = GREEDY) -> None:
        pair_bot(bot, base, samples)  # a spec that names no player fails here, not in the workers
        args = (base, cards, samples, compiled, bot)
        _init(*args)
        self.pool: Any = None
        if workers > 1:
            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context("spawn")
            self.pool = ctx.Pool(workers, initializer=_init, initargs=args)

    def __call__(self, tasks: list[tuple[dict[str, float], dict[str, float], int]]) -> list[float]:
        if self.pool is None:
            return [play_pair(t) for t in tasks]
        return list(self.pool.map(play_pair, tasks))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool = None

    def __enter__(self) -> PairPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tune_weights(*, cfg: SpsaConfig, out: str | Path, start: str | None = None, cards_from: str | None = None,
                 params: Sequence[str] | None = None, samples: int = 1, workers: int = 1,
                 compiled: bool | None = None, log: Callable[[str], None] | None = None,
                 bot: str = GREEDY) -> dict[str, Any]:
    """Run SPSA from the weights in `start` (default: the hand-made heuristic, card values 0) with
    the card table of `cards_from` (default: the shipped fitted weights) and write the tuned weights
    file (the format `evaluator=fitted,weights=...` reads). Returns the document written."""
    base: Weights = dict(load_weights(start)) if start else dict(HAND_WEIGHTS)
    # the card table the multiplier scales: the start's own card values (multiplier 1) if it has
    # any, else those of `cards_from` (multiplier 0: the start's cards are worth nothing)
    start_cards = 1.0 if any(k.startswith(CARD_PREFIX) for k in base) else 0.0
    if start_cards:
        cards_from = start
    table: Weights = {k: v for k, v in (base if start_cards else load_weights(cards_from)).items()
                      if k.startswith(CARD_PREFIX)}
    names = expand_params(params or default_params(), [CARD_PREFIX + s for s in engine_kind_slugs()])
    theta0 = theta_of(base, names, start_cards)
    with PairPlayer(base, table, samples=samples, workers=workers, compiled=compiled, bot=bot) as player:
        res = spsa(theta0, player, cfg, log)
    weights = weights_of(res.theta, base, table)
    doc = {"description": f"Kashgar evaluation weights tuned by play (kashgar tune-eval: SPSA, game pairs of "
                          f"{bot}); value(p) = sum (a + b * t) * feature(p), t = leader's VP / 25.",
           "tuned": {"pairs": res.pairs, "plus_side_score": round(res.score, 4), "theta": res.theta,
                     "start": start or "hand", "cards_from": cards_from or "bots/data/eval_weights.json",
                     "config": cfg.__dict__, "samples": samples, "bot": bot},
           "weights": {k: [round(a, 6), round(b, 6)] for k, (a, b) in weights.items()}}
    Path(out).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return doc

