"""The learned policy: a linear softmax over each legal decision's features, learned from the
search's own root visits (expert iteration; `lab/policy.py` trains it).

Kashgar's compiled search game computes a decision's input (`KashgarSearchGame.policy_features`,
the names in `policy_feature_names`: the change the decision makes to the mover's seat block of the
learned value's input, that of its linear features times the game's progress, the change of the
mover's greedy value and of the other seats' summed, the decision's kind and a select's option, and
whether the mover's turn goes on) and scores it, the dot product with the weights, in C. With a
policy set (`ISMCTSConfig.policy`), the choices the search made greedily below the root (the other
seats' turns and the searcher's own decisions within a turn, and the rollout's greedy steps) are
the policy's: the highest score, or sampled by softmax(score / `policy_temp`); with `policy_below`
0 they stay greedy and the policy gives only the root's PUCT prior (`prior`). Serving needs
neither scikit-learn nor numpy: the model is one JSON file (`bots/data/policy_model.json`) of the
feature names, the weights and how it was made, read once per process.
"""

from __future__ import annotations

import array
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from bots.features import FIXED, engine_kind_slugs
from bots.learned import seat_feature_names

POLICY_FILE = Path(__file__).parent / "data" / "policy_model.json"
POLICY_FORMAT = 1
POLICIES = ("", "learned")  # none (the greedy choices), the shipped model; any other value: a model file
DECISION_KINDS = ("select", "choose", "keep", "fulfil", "skip", "take", "remove", "pay", "route")  # K_* 1..9
SELECT_OPTIONS = ("a", "b", "part", "pass")  # OPT_A .. OPT_PASS


def policy_feature_names(kind_slugs: list[str] | None = None) -> list[str]:
    """Every input of the policy for one decision, in the order `KashgarSearchGame._policy_row`
    writes them, for an engine whose card kinds are `kind_slugs` (default: the engine's)."""
    slugs = engine_kind_slugs() if kind_slugs is None else kind_slugs
    return ([f"change.{n}" for n in seat_feature_names(slugs)] + [f"progress_x_change.{n}" for n in FIXED]
            + ["change.greedy_value", "change.others_value"] + [f"kind.{k}" for k in DECISION_KINDS]
            + [f"option.{o}" for o in SELECT_OPTIONS] + ["turn_goes_on"])


def policy_file(name: str) -> Path:
    """The model file that the setting `policy = name` names ("learned": the shipped one)."""
    return POLICY_FILE if name == "learned" else Path(name)


@lru_cache(maxsize=8)
def load_policy(path: str) -> array.array:  # type: ignore[type-arg]
    """The weights of the policy file `path` as C doubles, read once per process; ValueError for a
    file of another format or whose inputs are not this engine's."""
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if doc.get("format") != POLICY_FORMAT:
        raise ValueError(f"{path}: policy format {doc.get('format')!r}, want {POLICY_FORMAT}")
    names = policy_feature_names()
    if doc.get("features") != names:
        raise ValueError(f"{path}: its inputs are not this engine's policy inputs ({len(names)} named)")
    weights = doc["weights"]
    if len(weights) != len(names):
        raise ValueError(f"{path}: {len(weights)} weights for {len(names)} inputs")
    return array.array("d", (float(w) for w in weights))


def set_policy(game: Any, name: str, temperature: float, below: bool = True) -> None:
    """Give the compiled search game `game` the policy that `policy = name` names (none for ""):
    `below`, it plays the choices below the root; else only the root's priors come from it."""
    if name:
        game.set_policy(load_policy(str(policy_file(name))), temperature, below)
