"""Judging a played decision against a level's search of the same position: the loss in win chance,
its class, and each seat's accuracy over a game (as lichess's computer analysis and GNU
Backgammon's error rate per player do).

A decision is judged from `bots.answer.Answer`s (`bots.suggest`): searches of the seat's own view at
that moment, their alternatives each with a calibrated win chance and expected VP. In each, the
level's choice is the answer's decision; the loss is its win chance less the played
move's (never below 0: a move the search rated higher on fewer visits is no loss). A decision is
searched at two seeds and keeps the smaller loss (`judge_all`): a loss that only one seed sees is
the search disagreeing with itself, not a mistake of the player.

The thresholds come from that noise (docs/review.md, `python -m lab.review_noise`): the loss the
review assigns to the level's own choices.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bots.answer import Answer
from engine_ext.decisions import Decision

# Loss in win chance (0..1) from which a decision is an inaccuracy, a mistake, a blunder (lichess's
# steps). The review at master finds a loss in 8% of master's own choices, 95% of them under 0.002;
# these steps flag 1.2%, 0.7% and under 0.7% of them (docs/review.md, measured 2026-11-28).
INACCURACY = 0.10
MISTAKE = 0.20
BLUNDER = 0.30
CLASSES = ("inaccuracy", "mistake", "blunder")


def classify(loss: float | None) -> str | None:
    """The class of a loss in win chance: None (within the search's noise, or not rated), else
    "inaccuracy", "mistake" or "blunder"."""
    if loss is None or loss < INACCURACY:
        return None
    if loss < MISTAKE:
        return "inaccuracy"
    if loss < BLUNDER:
        return "mistake"
    return "blunder"


def move_accuracy(loss: float) -> float:
    """Accuracy of one decision in percent, from its loss in win chance: lichess's curve on the
    loss in percentage points, 103.1668 exp(-0.04354 x) - 3.1669, bounded to 0..100 (no loss: 100;
    10 points: 63.6; 30 points: 24.8)."""
    x = 100.0 * max(0.0, loss)
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * x) - 3.1669))


def judge(answer: Answer, played: Decision) -> dict[str, Any]:
    """The verdict on `played` from the search `answer` of the same position: the level's choice
    and the played move, each with its win chance and expected VP, the loss and the class. A played
    move the search never visited is not rated (`loss` None)."""
    best, mine = answer.alternative(answer.decision), answer.alternative(played)
    best_wp = None if best is None else best.win_prob
    played_wp = None if mine is None else mine.win_prob
    visits = 0 if mine is None else mine.visits
    loss = round(max(0.0, best_wp - played_wp), 6) if best_wp is not None and played_wp is not None and visits > 0 \
        else None
    return {
        "best": str(answer.decision),
        "best_win_prob": best_wp,
        "best_expected_vp": None if best is None else best.expected_vp,
        "played_win_prob": played_wp,
        "played_expected_vp": None if mine is None else mine.expected_vp,
        "played_visits": visits,
        "loss": loss,
        "class": classify(loss),
    }


def judge_all(answers: Sequence[Answer], played: Decision) -> dict[str, Any]:
    """The verdict on `played` from several searches of the same position (seeds): the one with the
    smallest loss (a rated one before an unrated one), so that only a loss every search sees counts."""
    verdicts = [judge(a, played) for a in answers]
    rated = [v for v in verdicts if v["loss"] is not None]
    return min(rated, key=lambda v: float(v["loss"])) if rated else verdicts[0]


def seat_summary(decisions: Iterable[Mapping[str, Any]], seats: Sequence[int]) -> list[dict[str, Any]]:
    """Per seat: decisions rated, mean loss in win chance, count per class and accuracy (the mean of
    `move_accuracy` over the rated decisions; None when none was rated)."""
    out = []
    rows = list(decisions)
    for seat in seats:
        losses = [float(d["loss"]) for d in rows if d["seat"] == seat and d.get("loss") is not None]
        counts = {c: sum(1 for d in rows if d["seat"] == seat and d.get("class") == c) for c in CLASSES}
        out.append({
            "seat": seat,
            "decisions": sum(1 for d in rows if d["seat"] == seat),
            "rated": len(losses),
            "mean_loss": round(sum(losses) / len(losses), 6) if losses else None,
            "accuracy": round(sum(move_accuracy(x) for x in losses) / len(losses), 2) if losses else None,
            **counts,
        })
    return out
