"""The value of the search's own games: its targets mix each seat's outcome with the root value."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lab.policy_games import play_game
from lab.search_value import main, positions

pytest.importorskip("sklearn", reason="the train extra (pip install -e '.[train]')")


def test_the_targets_mix_the_outcome_and_the_root_value(tmp_path: Path) -> None:
    games = [play_game("level:master:iterations=30", 2, deal, deal) for deal in (21, 22, 23)]
    searched = sum(1 for g in games for m in g["moves"] if m[1])
    outcome = positions(games, 0.0)
    assert outcome.target is not None and np.array_equal(outcome.target, outcome.y)
    assert len(outcome) == 2 * searched
    mixed = positions(games, 0.5)
    assert mixed.target is not None and np.array_equal(mixed.x, outcome.x)
    pairs = mixed.target.reshape(-1, 2)
    assert np.allclose(pairs.sum(axis=1), 1.0)  # 2 players: the seats' targets are complementary
    assert not np.array_equal(mixed.target, outcome.target)  # the root value moved them off 0 and 1
    assert ((mixed.target >= 0.0) & (mixed.target <= 1.0)).all()
    path = tmp_path / "games.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in games))
    out = tmp_path / "value.json"
    assert main([str(path), "--q", "0.5", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["training"]["q_weight"] == 0.5 and doc["layers"]
