"""Observation keys (`observe=1`): below the root, a node's children are also keyed by what the
searching player has seen, so that nodes are its information sets. The key must be the same for
every determinization of one information set (else the search would peek), and must tell apart
worlds where the same decisions drew or revealed different cards."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots import load_search
from bots.ismcts_bot import ISMCTSBot
from engine_ext.game import Game
from tests.engine_helpers import random_walk


def _random_state(engine: Any, seed: int, moves: int) -> Any:
    return random_walk(engine, 2, seed, moves).state


def test_one_key_per_information_set_and_different_keys_for_different_draws(engine: Any) -> None:
    s = load_search(engine.COMPILED).Search()
    rng = random.Random(5)
    split = 0
    for g in range(40):
        st = _random_state(engine, g, rng.randrange(0, 80))
        if st.is_terminal():
            continue
        me = st.current_player()
        w1, w2 = st.determinize(me, 11), st.determinize(me, 22)
        # the true state and any determinization of it look the same to `me`
        assert s.observation(st, me) == s.observation(w1, me) == s.observation(w2, me)
        for _ in range(12):  # the same decisions in two worlds
            if w1.is_terminal() or sorted(w1.legal_codes()) != sorted(w2.legal_codes()):
                break
            m = rng.choice(w1.legal_codes())
            w1.apply_unchecked(m)
            w2.apply_unchecked(m)
        same_view = Game(engine, w1).to_json(observer=me) == Game(engine, w2).to_json(observer=me)
        # one key exactly when the two worlds look the same to `me`
        assert (s.observation(w1, me) == s.observation(w2, me)) == same_view
        split += not same_view
    assert split >= 5  # draws and reveals do lead worlds apart


def test_search_splits_children_by_observation_only_when_asked(engine: Any) -> None:
    st = _random_state(engine, 3, 30)
    while st.pending() != 0:  # start of a turn
        st.apply_unchecked(st.legal_codes()[0])
    me = st.current_player()
    keyed = []
    for observe in (0, 1, 2):
        bot = ISMCTSBot(iterations=400, macro=1, rollout="turn", observe=observe,
                        compiled=engine.COMPILED)
        s, done, _ = bot.search(st, seed=4)
        assert done == 400
        tr = s.tree
        obs = [tr.obs[k] for k in range(1, tr.size)]
        keyed.append(sum(1 for o in obs if o != 0))
        if observe == 2:  # keyed only before the searching player's own decisions
            assert all(tr.player[k] == me for k in range(1, tr.size) if tr.obs[k] != 0)
        # root children are never keyed: the root state is what the player sees
        assert all(tr.obs[k] == 0 for k in tr.children(0))
        # under one parent, one decision has one child per observation key
        seen = set()
        for k in range(1, tr.size):
            key = (tr.parent[k], tr.move[k], tr.obs[k])
            assert key not in seen
            seen.add(key)
    assert keyed[0] == 0
    assert keyed[1] > keyed[2] > 0


def test_observe_takes_0_1_or_2(engine: Any) -> None:
    st = _random_state(engine, 1, 10)
    with pytest.raises(ValueError, match="observe must be 0, 1 or 2"):
        ISMCTSBot(iterations=10, observe=3, compiled=engine.COMPILED).search(st, seed=1)
