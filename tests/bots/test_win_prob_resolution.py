"""A fit that cannot tell alternatives apart gives them no win chance (`bots.win_prob.resolves`):
novice at the opening, where its slope in the mean reward is 0."""

from __future__ import annotations

from dataclasses import replace

import engine_ext
from bots import suggest, win_prob
from bots.answer import with_chances


def test_a_flat_fit_gives_no_chance_per_alternative_and_the_mover_s_chance_for_the_answer() -> None:
    weights = [0.03, -0.2, 0.0, 1.0]  # slope max(0, -0.2 + t): 0 until t = 0.2
    assert not win_prob.resolves(weights, 0.1) and win_prob.resolves(weights, 0.3)
    position = suggest.Position.of(engine_ext.new_game(players=2, seed=4), "novice")
    searched = suggest.search(position, suggest.Budget(40, None, 1))
    first, second = searched.alternatives[:2]
    answer = replace(searched, code=first.code, decision=first.decision,
                     alternatives=(replace(first, mean_reward=0.7), replace(second, mean_reward=0.4)))
    flat = with_chances(answer, weights, 0.1)
    assert [a.win_prob for a in flat.alternatives] == [None, None]
    assert flat.win_prob == round(win_prob.predict(weights, 0.7, 0.1), 6)
    apart = with_chances(answer, weights, 0.3)
    assert apart.alternatives[0].win_prob > apart.alternatives[1].win_prob  # type: ignore[operator]


def test_novice_at_the_opening_answers_no_chance_per_alternative() -> None:
    position = suggest.Position.of(engine_ext.new_game(players=2, seed=4), "novice")
    answer = suggest.suggest(position, [suggest.Budget(None, None, 1)])
    assert len(answer.alternatives) > 1 and all(a.win_prob is None for a in answer.alternatives)
    assert answer.win_prob is not None and 0.0 < answer.win_prob < 1.0
    master = suggest.suggest(suggest.Position.of(engine_ext.new_game(players=2, seed=4), "master"),
                             [suggest.Budget(200, None, 1)])
    assert all(a.win_prob is not None for a in master.alternatives if a.visits)
