"""A game review's figures pinned on a fixed record and seed: every decision's verdict (the level's
choice, the win chances and expected VP, the visits, the loss and its class, the words) and each
seat's summary, at four levels (master on a few moves).

The record is a seeded game of random play (`tests.builders.random_record`), reviewed in this
process (`service.review.run_all`, as `kashgar review` without a service). A change that means to
keep the review's behaviour (a refactoring of the review path) must keep every figure; one that
means to alter it records them again (`KASHGAR_REPIN=1 pytest tests/service/test_review_pinned.py`)
and says why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from service import review
from tests.builders import random_record

PINS = Path(__file__).parent / "data" / "review_pins.json"
SEED = 4321
CASES = {"2p-novice": (2, "novice", 24), "2p-advanced": (2, "advanced", 24), "3p-club": (3, "club", 24),
         "2p-master": (2, "master", 6)}


def _review(players: int, level: str, moves: int) -> dict[str, Any]:
    record = random_record(seed=31 + players, moves=moves, rng_seed=7, players=players)
    spec = review.plan(record, level, None, SEED)
    return json.loads(json.dumps(review.run_all(spec)))


def _record() -> None:
    doc = {"seed": SEED, "reviews": {name: _review(*case) for name, case in CASES.items()}}
    PINS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if os.environ.get("KASHGAR_REPIN"):
    _record()


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_review_gives_its_pinned_figures(name: str) -> None:
    pinned = json.loads(PINS.read_text())
    assert pinned["seed"] == SEED
    assert _review(*CASES[name]) == pinned["reviews"][name]
