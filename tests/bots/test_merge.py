"""Root statistics of several searches of one position merged decision by decision (`bots.merge`):
the service's parts (`merge_parts`, choosing with the level's temperature), root-parallel workers and
the determinized baseline's worlds."""

from __future__ import annotations

from typing import Any

import engine_ext
from bots import suggest
from bots.base import expected_line
from bots.merge import merge_root_stats


def test_rows_add_up_by_decision_in_the_order_first_seen() -> None:
    a = [(7, 3, 1.5, 30.0), (5, 1, 0.25, 9.0)]
    b = [(5, 2, 1.0, 20.0), (9, 4, 0.5, 40.0)]
    assert merge_root_stats([a, b]) == [(7, 3, 1.5, 30.0), (5, 3, 1.25, 29.0), (9, 4, 0.5, 40.0)]
    assert merge_root_stats([a]) == a and merge_root_stats([]) == []
    assert merge_root_stats([[("x", 1, 2)], [("x", 3, 4)]]) == [("x", 4, 6)]  # any key, any columns


def test_merging_parts_adds_visits_and_weights_the_means_by_them() -> None:
    doc = engine_ext.new_game(players=2, seed=4).to_json()
    parts = [suggest.analyse_state(doc, level="club", iterations=40, seed=s) for s in (1, 2, 3)]
    merged = {a["decision_text"]: a for a in suggest.merge_parts(parts)["alternatives"]}
    for text, alt in merged.items():
        mine = [a for p in parts for a in p["alternatives"] if a["decision_text"] == text]
        visits = sum(a["visits"] for a in mine)
        assert alt["visits"] == visits
        if visits:
            want = sum(a["mean_reward"] * a["visits"] for a in mine if a["visits"]) / visits
            assert alt["mean_reward"] == round(want, 6)


def _part(seed: int, visits: list[int], level: str = "novice") -> dict[str, Any]:
    alts = [{"decision": {"code": k}, "decision_text": f"move {k}", "visits": v, "mean_reward": 0.5,
             "win_prob": 0.5, "expected_vp": 10.0} for k, v in enumerate(visits)]
    return {"alternatives": alts, "line": ["move 0", "move 1"], "iterations": sum(visits),
            "elapsed_ms": 1.0, "seed": seed, "level": level, "player": 0}


def test_merge_parts_chooses_with_the_level_temperature() -> None:
    """merge_parts always took the most visited move: a level with a temperature searched in parts
    (parallel, long budgets, async time parts) played at temperature 0."""
    chosen = {suggest.merge_parts([_part(s, [5, 4, 3]), _part(s + 1, [4, 4, 2])])["decision_text"]
              for s in range(40)}
    assert len(chosen) > 1
    parts = [_part(3, [5, 4, 3]), _part(4, [4, 4, 2])]
    assert suggest.merge_parts(parts) == suggest.merge_parts(parts)
    assert {suggest.merge_parts([_part(s, [5, 4, 3])], temperature=0.0)["decision_text"]
            for s in range(20)} == {"move 0"}
    assert {suggest.merge_parts([_part(s, [5, 4, 3], level="expert")])["decision_text"]
            for s in range(20)} == {"move 0"}  # expert: temperature 0


def test_expected_line_follows_the_chosen_move() -> None:
    lines = [(["a", "x"], 9), (["b", "y", "z"], 3), (["b", "w"], 2)]
    assert expected_line("b", lines) == ["b", "y", "z"]
    assert expected_line("c", lines) == ["c"]
