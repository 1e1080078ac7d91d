"""Reward vectors for 2, 3 and 4 players, and their perspective in the tree."""

from __future__ import annotations

import math

import pytest

from bots.evaluate import HandWeightsValue, VPValue, softmax_rewards, terminal_rewards
from bots.features import HAND_SCALE
from bots.ismcts_bot import ISMCTSBot
from lab.toygame import ToyState


def _finished(players: int, seed: int) -> ToyState:
    st = ToyState(players, seed=seed)
    st.playout(seed)
    return st


@pytest.mark.parametrize("players", [2, 3, 4])
def test_terminal_reward_vector_one_for_the_winner(players: int) -> None:
    for seed in range(10):
        st = _finished(players, seed)
        r = terminal_rewards(st)
        assert len(r) == players
        assert sum(r) == 1.0
        assert r[st.winner()] == 1.0


@pytest.mark.parametrize("players", [2, 3, 4])
def test_softmax_rewards_sum_to_one_and_order(players: int) -> None:
    vals = [float(3 * p) for p in range(players)]
    r = softmax_rewards(vals, 0.35)
    assert len(r) == players and sum(r) == pytest.approx(1.0)
    assert r == sorted(r)
    assert softmax_rewards([5.0] * players, 0.35) == pytest.approx([1.0 / players] * players)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_engine_heuristic_rewards(engine: object, players: int) -> None:
    g = engine.new_game(players=players, seed=players)  # type: ignore[attr-defined]
    for k in range(30):
        codes = g.legal_codes()
        g.state.apply(codes[k % len(codes)])
    vals = HandWeightsValue().values(g.state)
    assert len(vals) == players
    # every term of the hand-made heuristic is >= 0: a value is at least VP, in log-odds units
    assert all(v >= HAND_SCALE * g.vp(p) - 1e-9 for p, v in enumerate(vals))
    r = softmax_rewards(vals, 1.0)
    assert sum(r) == pytest.approx(1.0)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_root_rewards_are_the_deciding_players(players: int) -> None:
    # In the toy game drawing is clearly better than banking for whoever moves: the root's mean
    # rewards are from the root player's point of view, whatever the seat count.
    st = ToyState(players, seed=11)
    for _p in range(players - 1):  # give the move to the last seat
        st.apply(256)
    a = ISMCTSBot(iterations=1500, evaluator="vp").analyse(st, seed=3)
    assert a.player == players - 1
    by = {x.code: x for x in a.alternatives}
    assert by[512].mean_reward > by[256].mean_reward
    assert a.code == 512
    assert 0.0 <= a.mean_reward <= 1.0 and math.isnan(a.win_prob)  # no chance: the answer calibrates one


def test_vp_evaluator() -> None:
    st = ToyState(3, seed=1)
    st.apply(256)
    assert VPValue().values(st) == [1.0, 0.0, 0.0]
