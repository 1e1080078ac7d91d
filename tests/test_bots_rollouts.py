"""Greedy rollouts: the mover takes the decision it values most; both builds search alike."""

from __future__ import annotations

import random

import pytest

import engine_ext
from bots import ismcts as search_py
from bots.evaluate import KashgarEvaluator
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig


def _midgame(engine: object, players: int, seed: int, steps: int = 50) -> object:
    st = engine.new_game(players=players, seed=seed).state  # type: ignore[attr-defined]
    rng = random.Random(seed)
    for _ in range(steps):
        codes = st.legal_codes()
        st.apply(codes[rng.randrange(len(codes))])
    return st


def test_greedy_choice_is_the_movers_best_next_value(interpreted_engine: object) -> None:
    ev = KashgarEvaluator()
    checked = 0
    for seed in range(40):
        st = _midgame(interpreted_engine, 2, seed, 20 + seed)
        n = st.gen_legal()  # type: ignore[attr-defined]
        if n < 2:
            continue
        s = search_py.Search(seed=seed)
        s.set_weights(ev.engine_weights(), ev.rollout_weights())
        s.scratch = st.clone()  # type: ignore[attr-defined]
        me, t = st.current_player(), s.progress(st)  # type: ignore[attr-defined]
        values = []
        for i in range(n):
            nxt = st.clone()  # type: ignore[attr-defined]
            nxt.apply_unchecked(st.legal_buf[i])  # type: ignore[attr-defined]
            values.append(s._value(nxt, me, t, 2 * search_py.MAX_FEATURES))
        i = s._greedy_choice(st, n)
        assert values[i] == pytest.approx(max(values))
        checked += 1
    assert checked > 30


def test_rollout_weights_are_the_hand_heuristics_whatever_the_leaf() -> None:
    ev = KashgarEvaluator()
    from bots.evaluate import FittedEvaluator

    assert FittedEvaluator().rollout_weights() == ev.engine_weights()


@pytest.mark.parametrize("rollout", ["eval", "greedy"])
def test_both_builds_search_alike(compiled_engine: object, interpreted_engine: object, rollout: str) -> None:
    # The compiled loop and the interpreted one make the same random draws and the same float
    # arithmetic: the same seed gives the same root statistics.
    cfg = ISMCTSConfig(iterations=150, rollout=rollout, depth=4)
    stats = []
    for eng, compiled in ((compiled_engine, True), (interpreted_engine, False)):
        st = _midgame(eng, 2, 5)
        bot = ISMCTSBot(cfg.with_(compiled=compiled))
        a = bot.analyse(st, seed=9)
        stats.append([(x.code, x.visits, round(x.mean_reward, 9)) for x in a.alternatives])
    assert stats[0] == stats[1]


def test_greedy_rollouts_stay_legal_to_the_end() -> None:
    eng = engine_ext.get_engine(None)
    st = eng.new_game(players=3, seed=2).state
    bot = ISMCTSBot(ISMCTSConfig(iterations=40, rollout="greedy", depth=30))
    k = 0
    while not st.is_terminal() and k < 400:
        code = bot.choose(st, seed=k)
        assert code in st.legal_codes()
        st.apply(code)
        k += 1
    assert st.is_terminal()
