"""The features of a Kashgar position per seat, and the weights that turn them into a value.

Kashgar's search game (`bots.kashgar_eval.KashgarSearchGame`, compiled with the search)
computes the features and the value of seat p as::

    value(p) = sum_i (a_i + b_i * t) * f_i(p),    t = the leader's VP / END_VP, 25 (at most 1)

so every weight has a part for the opening (`a`) and a part that grows as the game ends (`b`).
Values are log-odds units: the win probabilities of a position are softmax(values).

The weights are data (`eval_weights.json` beside this file, written by `kashgar fit-eval`), keyed by
feature name, so that a card added to `engine_ext/data/cards.toml` only adds a feature (weight 0
until refitted). `HAND_WEIGHTS` is the first, hand-made heuristic in these units.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from engine_ext import carddata

WEIGHTS_FILE = Path(__file__).parent / "data" / "eval_weights.json"        # fitted (`kashgar fit-eval`)
TUNED_WEIGHTS_FILE = Path(__file__).parent / "data" / "eval_tuned.json"    # tuned by play (`kashgar tune-eval`)

# The fixed features, in the order `KashgarSearchGame._features` writes them (bots/kashgar_eval.py).
FIXED = (
    "vp",                  # victory points
    "spices",              # sum over the five spices of min(spice, 7)
    "gold",                # min(gold, 7)
    "mules",               # min(mules, 5)
    "best_contract",       # max over face-up contracts of VP * coverage ** 2
    "contracts_in_reach",  # the same summed over the face-up contracts
    "caravans",            # caravans the seat has
    "caravan_cards",       # cards in its caravans
)
CARD_PREFIX = "card:"      # then one count per card kind in the seat's caravans: "card:<slug>"

# The first heuristic (VP + 0.2 spice + 0.18 gold + 0.22 mules + 0.35 best contract) at its softmax
# scale of 0.35, so that its values are in the same log-odds units as fitted weights.
HAND_SCALE = 0.35
HAND_WEIGHTS: dict[str, tuple[float, float]] = {
    "vp": (HAND_SCALE, 0.0),
    "spices": (HAND_SCALE * 0.2, 0.0),
    "gold": (HAND_SCALE * 0.18, 0.0),
    "mules": (HAND_SCALE * 0.22, 0.0),
    "best_contract": (HAND_SCALE * 0.35, 0.0),
}


def feature_names(kind_slugs: list[str]) -> list[str]:
    """Every feature's name for an engine whose card kinds are `kind_slugs` (in index order)."""
    return list(FIXED) + [CARD_PREFIX + s for s in kind_slugs]


def engine_kind_slugs() -> list[str]:
    return [k.slug for k in carddata.default().kinds]


def weight_vector(weights: dict[str, tuple[float, float]], names: list[str]) -> list[float]:
    """The search's weight vector: every `a` in feature order, then every `b` (0 where unnamed)."""
    a = [float(weights.get(n, (0.0, 0.0))[0]) for n in names]
    b = [float(weights.get(n, (0.0, 0.0))[1]) for n in names]
    return a + b


def parse_weights(doc: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """The `weights` table of a weights document: {feature: [a, b]}; ValueError when malformed."""
    table = doc.get("weights")
    if not isinstance(table, dict) or not table:
        raise ValueError("a weights file needs a non-empty 'weights' object")
    out: dict[str, tuple[float, float]] = {}
    for name, ab in table.items():
        if (not isinstance(ab, list) or len(ab) != 2
                or not all(isinstance(x, (int, float)) for x in ab)):
            raise ValueError(f"weights[{name!r}]: want [a, b] (two numbers)")
        out[str(name)] = (float(ab[0]), float(ab[1]))
    return out


@lru_cache(maxsize=8)
def load_weights(path: str | None = None) -> dict[str, tuple[float, float]]:
    """The fitted weights (`eval_weights.json`, or `path`)."""
    with open(path or WEIGHTS_FILE, encoding="utf-8") as fh:
        return parse_weights(json.load(fh))
