"""Kashgar's evaluator for the search: the greedy choice (the mover takes the decision it values
most), turn rollouts (leaves valued at a turn's end), the macro tree (it branches on turns); both
builds search alike."""

from __future__ import annotations

import random

import pytest

import engine_ext
from bots import ismcts as search_py
from bots import kashgar_eval as kashgar_py
from bots.evaluate import HandWeightsValue
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig


def _midgame(engine: object, players: int, seed: int, steps: int = 50) -> object:
    st = engine.new_game(players=players, seed=seed).state  # type: ignore[attr-defined]
    rng = random.Random(seed)
    for _ in range(steps):
        codes = st.legal_codes()
        st.apply(codes[rng.randrange(len(codes))])
    return st


def test_greedy_choice_is_the_movers_best_next_value(interpreted_engine: object) -> None:
    ev = HandWeightsValue()
    checked = 0
    for seed in range(40):
        st = _midgame(interpreted_engine, 2, seed, 20 + seed)
        n = st.gen_legal()  # type: ignore[attr-defined]
        if n < 2:
            continue
        k = kashgar_py.KashgarSearchGame(ev.engine_weights(), ev.rollout_weights())
        me, t = st.current_player(), k.progress(st)  # type: ignore[attr-defined]
        values = []
        for i in range(n):
            nxt = st.clone()  # type: ignore[attr-defined]
            nxt.apply_unchecked(st.legal_buf[i])  # type: ignore[attr-defined]
            values.append(k._value(nxt, me, t, 2 * kashgar_py.MAX_FEATURES))
        code = k.greedy_choice(st, search_py.Rng(seed))
        assert values[st.legal_codes().index(code)] == pytest.approx(max(values))  # type: ignore[attr-defined]
        checked += 1
    assert checked > 30


def test_rollout_weights_are_the_hand_heuristics_whatever_the_leaf() -> None:
    ev = HandWeightsValue()
    from bots.evaluate import FittedValue

    assert FittedValue().rollout_weights() == ev.engine_weights()


@pytest.mark.parametrize("rollout,macro", [("eval", 0), ("turn", 0), ("turn", 1), ("turn", 2)])
def test_both_builds_search_alike(compiled_engine: object, interpreted_engine: object, rollout: str,
                                  macro: int) -> None:
    # The compiled loop and the interpreted one make the same random draws and the same float
    # arithmetic: the same seed gives the same root statistics (each state searched by its build).
    cfg = ISMCTSConfig(iterations=150, rollout=rollout, depth=4, macro=macro)
    stats = []
    for eng in (compiled_engine, interpreted_engine):
        st = _midgame(eng, 2, 5)
        bot = ISMCTSBot(cfg)
        a = bot.analyse(st, seed=9)
        assert bot.last_search.game.__class__.__module__ == (
            "bots.kashgar_eval_c" if eng is compiled_engine else "bots.kashgar_eval")
        stats.append([(x.code, x.visits, round(x.mean_reward, 9)) for x in a.alternatives])
    assert stats[0] == stats[1]


@pytest.mark.parametrize("macro", [0, 2])
def test_turn_rollouts_and_greedy_turns_stay_legal_to_the_end(macro: int) -> None:
    eng = engine_ext.get_engine(None)
    st = eng.new_game(players=3, seed=2).state
    bot = ISMCTSBot(ISMCTSConfig(iterations=40, rollout="turn", macro=macro))
    k = 0
    while not st.is_terminal() and k < 400:
        code = bot.choose(st, seed=k)
        assert code in st.legal_codes()
        st.apply(code)
        k += 1
    assert st.is_terminal()


class _LeafRecorder(kashgar_py.KashgarSearchGame):
    """The interpreted Kashgar evaluator, noting the phase and turn of every state it values."""

    def __init__(self, *args: object, **kw: object) -> None:
        super().__init__(*args, **kw)  # type: ignore[arg-type]
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

    ev = HandWeightsValue()
    rec = _LeafRecorder(ev.engine_weights(), ev.rollout_weights(), 1.0, rollout, 3)
    s = search_py.Search(rec, search_py.Rng(4), 0.7, 0, 512)
    st = _mid_turn_state(interpreted_engine, 11)
    s.run(st, st.current_player(), 200, 0.0)  # type: ignore[attr-defined]
    assert len(rec.leaves) == 200
    ends = [ph == core.PH_SELECT or over for ph, _turn, over in rec.leaves]
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
    bot = ISMCTSBot(ISMCTSConfig(iterations=400, macro=macro))
    a = bot.analyse(st, seed=2)
    assert a.code in st.legal_codes()  # type: ignore[attr-defined]
    top, deep = _kinds_below_root(bot.last_search.tree)
    assert top and core.K_SELECT not in top  # the root is mid-turn: its own decisions are searched
    if macro:
        assert deep == {core.K_SELECT}  # below the root, only what starts a turn gets a node
    else:
        assert deep - {core.K_SELECT}  # the plain tree has mid-turn nodes too


@pytest.mark.parametrize("macro", [1, 2])
def test_macro_2_tree_holds_only_the_searchers_turns(engine: object, macro: int) -> None:
    """`macro=2`: below the root the other seats play their whole turns greedily, so every node
    there is a decision of the searching player (`macro=1` has nodes for every seat's turns)."""
    st = _midgame(engine, 3, 7)
    me = st.current_player()  # type: ignore[attr-defined]
    bot = ISMCTSBot(ISMCTSConfig(iterations=400, macro=macro, rollout="turn"))
    a = bot.analyse(st, seed=2)
    assert a.code in st.legal_codes()  # type: ignore[attr-defined]
    tr = bot.last_search.tree
    deep = {tr.player[nd] for nd in range(1, tr.size) if tr.parent[nd] != 0}  # type: ignore[attr-defined]
    assert (deep == {me}) if macro == 2 else (len(deep) == 3)
    with pytest.raises(ValueError, match="macro"):
        ISMCTSBot(ISMCTSConfig(iterations=10, macro=3)).analyse(st, seed=2)


