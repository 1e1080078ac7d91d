"""Greedy and turn rollouts, and the macro tree: the mover takes the decision it values most, leaves
are valued at a turn's end, the tree branches on turns; both builds search alike."""

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


@pytest.mark.parametrize("rollout,macro", [("eval", 0), ("greedy", 0), ("turn", 0), ("turn", 1)])
def test_both_builds_search_alike(compiled_engine: object, interpreted_engine: object, rollout: str,
                                  macro: int) -> None:
    # The compiled loop and the interpreted one make the same random draws and the same float
    # arithmetic: the same seed gives the same root statistics.
    cfg = ISMCTSConfig(iterations=150, rollout=rollout, depth=4, macro=macro)
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


class _LeafRecorder(search_py.Search):
    """The interpreted search core, noting the phase and turn of every state it values."""

    def __init__(self, **kw: object) -> None:
        super().__init__(**kw)  # type: ignore[arg-type]
        self.leaves: list[tuple[int, int, bool]] = []

    def _leaf_rewards(self, d: object, np_: int) -> None:
        self.leaves.append((d.d[self.s_phase], d.d[self.s_turn], d.is_terminal()))  # type: ignore[attr-defined]
        super()._leaf_rewards(d, np_)


def _mid_turn_state(engine: object, seed: int) -> object:
    rng = random.Random(seed)
    st = engine.new_game(players=2, seed=seed).state  # type: ignore[attr-defined]
    while True:
        codes = st.legal_codes()
        st.apply(codes[rng.randrange(len(codes))])
        if st.pending() != 0 and len(st.legal_codes()) > 1 and st.vp(0) + st.vp(1) > 0:
            return st


@pytest.mark.parametrize("rollout,at_turn_end", [("turn", True), ("eval", False)])
def test_turn_rollouts_value_leaves_at_a_turns_end(interpreted_engine: object, rollout: str,
                                                   at_turn_end: bool) -> None:
    from engine_ext import core

    ev = KashgarEvaluator()
    roll = {"eval": search_py.ROLL_EVAL, "turn": search_py.ROLL_TURN}[rollout]
    s = _LeafRecorder(rollout=roll, depth=3, seed=4, capacity=512)
    s.set_weights(ev.engine_weights(), ev.rollout_weights())
    st = _mid_turn_state(interpreted_engine, 11)
    s.run(st, st.current_player(), 200, 0.0, ev)  # type: ignore[attr-defined]
    assert len(s.leaves) == 200
    ends = [ph == core.PH_SELECT or over for ph, _turn, over in s.leaves]
    # "turn": every leaf is a turn's start (or the game's end); 3 random decisions often stop mid-turn
    assert all(ends) if at_turn_end else not all(ends)


def _kinds_below_root(tree: object) -> tuple[set[int], set[int]]:
    """The decision kinds of the root's children, and of every node deeper than them."""
    tr = tree
    top: set[int] = set()
    deep: set[int] = set()
    for nd in range(1, tr.size):  # type: ignore[attr-defined]
        (top if tr.parent[nd] == 0 else deep).add(tr.move[nd] >> 8)  # type: ignore[attr-defined]
    return top, deep


@pytest.mark.parametrize("macro", [0, 1])
def test_macro_tree_branches_on_turns_below_the_root(interpreted_engine: object, macro: int) -> None:
    from engine_ext import core

    st = _mid_turn_state(interpreted_engine, 3)
    bot = ISMCTSBot(ISMCTSConfig(iterations=400, macro=macro, compiled=False))
    a = bot.analyse(st, seed=2)
    assert a.code in st.legal_codes()  # type: ignore[attr-defined]
    top, deep = _kinds_below_root(bot.last_search.tree)
    assert top and core.K_SELECT not in top  # the root is mid-turn: its own decisions are searched
    if macro:
        assert deep == {core.K_SELECT}  # below the root, only what starts a turn gets a node
    else:
        assert deep - {core.K_SELECT}  # the plain tree has mid-turn nodes too


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("macro", [1, 2])
def test_macro_2_tree_holds_only_the_searchers_turns(compiled: bool, macro: int) -> None:
    """`macro=2`: below the root the other seats play their whole turns greedily, so every node
    there is a decision of the searching player (`macro=1` has nodes for every seat's turns)."""
    st = _midgame(engine_ext.get_engine(compiled), 3, 7)
    me = st.current_player()  # type: ignore[attr-defined]
    bot = ISMCTSBot(ISMCTSConfig(iterations=400, macro=macro, rollout="turn", compiled=compiled))
    a = bot.analyse(st, seed=2)
    assert a.code in st.legal_codes()  # type: ignore[attr-defined]
    tr = bot.last_search.tree
    deep = {tr.player[nd] for nd in range(1, tr.size) if tr.parent[nd] != 0}  # type: ignore[attr-defined]
    assert (deep == {me}) if macro == 2 else (len(deep) == 3)
    with pytest.raises(ValueError, match="macro"):
        ISMCTSBot(ISMCTSConfig(iterations=10, macro=3, compiled=compiled)).analyse(st, seed=2)


def _depths(tree: object) -> list[int]:
    tr = tree
    depth = [0] * tr.size  # type: ignore[attr-defined]
    for nd in range(1, tr.size):  # type: ignore[attr-defined]
        depth[nd] = depth[tr.parent[nd]] + 1  # type: ignore[attr-defined]  # parents come first
    return depth


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("macro", [0, 1])
def test_tree_depth_caps_the_tree(compiled: bool, macro: int) -> None:
    st = _midgame(engine_ext.get_engine(compiled), 2, 7)
    deepest = {}
    for cap in (0, 1, 2):
        bot = ISMCTSBot(ISMCTSConfig(iterations=600, macro=macro, rollout="turn", tree_depth=cap, compiled=compiled))
        a = bot.analyse(st, seed=3)
        assert a.code in st.legal_codes() and a.iterations == 600  # type: ignore[attr-defined]
        assert sum(x.visits for x in a.alternatives) == 600
        deepest[cap] = max(_depths(bot.last_search.tree))
    assert deepest[1] == 1 and deepest[2] == 2  # only the root's decisions, then one level more
    assert deepest[0] > 2  # uncapped, the same budget grows deeper
