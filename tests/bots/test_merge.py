"""Root statistics of several searches of one position merged decision by decision (`bots.merge`):
the service's parts (`bots.answer.merge`, choosing with the level's temperature), root-parallel workers and
the determinized baseline's worlds."""

from __future__ import annotations

import engine_ext
from bots import suggest
from bots.answer import AlternativeStats, Answer
from bots.base import expected_line
from bots.merge import merge_root_stats
from bots.position import Position


def test_rows_add_up_by_decision_in_the_order_first_seen() -> None:
    a = [(7, 3, 1.5, 30.0), (5, 1, 0.25, 9.0)]
    b = [(5, 2, 1.0, 20.0), (9, 4, 0.5, 40.0)]
    assert merge_root_stats([a, b]) == [(7, 3, 1.5, 30.0), (5, 3, 1.25, 29.0), (9, 4, 0.5, 40.0)]
    assert merge_root_stats([a]) == a and merge_root_stats([]) == []
    assert merge_root_stats([[("x", 1, 2)], [("x", 3, 4)]]) == [("x", 4, 6)]  # any key, any columns


def test_merging_parts_adds_visits_and_weights_the_means_by_them() -> None:
    position = suggest.Position.of(engine_ext.new_game(players=2, seed=4), "club")
    parts = [suggest.search(position, suggest.Budget(40, None, s)) for s in (1, 2, 3)]
    merged = {a.decision: a for a in suggest.merge(parts, position).alternatives}
    for decision, alt in merged.items():
        mine = [a for p in parts for a in p.alternatives if a.decision == decision]
        visits = sum(a.visits for a in mine)
        assert alt.visits == visits and alt.code == mine[0].code
        if visits:
            want = sum((a.mean_reward or 0.0) * a.visits for a in mine if a.visits) / visits
            assert alt.mean_reward == round(want, 6)


def _position(level: str = "novice") -> Position:
    return Position.of(engine_ext.new_game(players=2, seed=4), level)


def _part(position: Position, seed: int, visits: list[int]) -> Answer:
    """A made-up part of a search of `position`: its first legal decisions with these visits."""
    game = position.game
    alts = tuple(AlternativeStats(game.decision(c), c, v, 0.5, None, 10.0)
                 for c, v in zip(game.legal_codes(), visits, strict=False))
    return Answer(decision=alts[0].decision, code=alts[0].code, alternatives=alts,
                  line=(alts[0].decision, alts[1].decision), win_prob=None, iterations=sum(visits),
                  elapsed_ms=1.0, seed=seed, level=position.level, compiled=True, workers=1, parts=1,
                  player=game.current_player, bot=position.level.name)


def test_merge_parts_chooses_with_the_level_temperature() -> None:
    """The merge always took the most visited move: a level with a temperature searched in parts
    (parallel, long budgets, async time parts) played at temperature 0."""
    novice = _position()
    first = novice.game.decision(novice.game.legal_codes()[0])
    chosen = {suggest.merge([_part(novice, s, [5, 4, 3]), _part(novice, s + 1, [4, 4, 2])], novice).decision
              for s in range(40)}
    assert len(chosen) > 1
    parts = [_part(novice, 3, [5, 4, 3]), _part(novice, 4, [4, 4, 2])]
    assert suggest.merge(parts, novice) == suggest.merge(parts, novice)
    assert {suggest.merge([_part(novice, s, [5, 4, 3])], novice, temperature=0.0).decision
            for s in range(20)} == {first}
    expert = _position("expert")  # expert: temperature 0
    assert {suggest.merge([_part(expert, s, [5, 4, 3])], expert).decision for s in range(20)} == {first}


def test_expected_line_follows_the_chosen_move() -> None:
    lines = [(["a", "x"], 9), (["b", "y", "z"], 3), (["b", "w"], 2)]
    assert expected_line("b", lines) == ["b", "y", "z"]
    assert expected_line("c", lines) == ["c"]
