"""Progressive widening of the macro search (`widen`, bots/ismcts.py): below the root, a node visited
`widen` times or more branches on the greedy decisions ranked first (`greedy_rank`), more of them as
its visits grow; with `widen` = 0 the search is the macro search as it was."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

import bots
import engine_ext
from bots import ismcts as search_py
from bots import kashgar_eval as kashgar_py
from bots.evaluate import HandWeightsValue
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig
from tests.engine_helpers import require_compiled_search

MASTER = {"rollout": "turn", "macro": 2, "evaluator": "tuned"}


def _midgame(engine: Any, seed: int, steps: int) -> Any:
    st = engine.new_game(players=2, seed=seed).state
    rng = random.Random(seed)
    for _ in range(steps):
        if st.is_terminal():
            break
        codes = st.legal_codes()
        st.apply(codes[rng.randrange(len(codes))])
    return st


def _values(k: Any, st: Any) -> list[float]:
    """The mover's value after each legal decision, as the greedy choice weighs them."""
    me, t = st.current_player(), k.progress(st)
    out = []
    for i in range(st.gen_legal()):
        nxt = st.clone()
        nxt.apply_unchecked(st.legal_buf[i])
        out.append(k._value(nxt, me, t, 2 * kashgar_py.MAX_FEATURES))
    return out


def test_greedy_rank_orders_the_legal_decisions_by_the_greedy_value(interpreted_engine: Any) -> None:
    ev = HandWeightsValue()
    checked = 0
    for seed in range(30):
        st = _midgame(interpreted_engine, seed, 15 + seed)
        if st.is_terminal() or len(st.legal_codes()) < 3:
            continue
        k = kashgar_py.KashgarSearchGame(ev.engine_weights(), ev.rollout_weights())
        k.start(st)
        values = _values(k, st)
        codes = st.legal_codes()
        out = search_py.int_array(64)
        n = k.greedy_rank(st, out, len(codes))
        ranked = list(out[:n])
        assert sorted(ranked) == sorted(codes)  # every legal decision once
        ranked_values = [values[codes.index(c)] for c in ranked]
        assert ranked_values == sorted(ranked_values, reverse=True)  # best first
        assert k.greedy_rank(st, out, 2) == 2 and list(out[:2]) == ranked[:2]  # the top k of the same order
        assert k.greedy_rank(st, search_py.int_array(1), 5) == 1  # never more than `out` holds
        checked += 1
    assert checked > 15


def test_both_builds_rank_alike(compiled_engine: Any, interpreted_engine: Any) -> None:
    require_compiled_search()
    ev = HandWeightsValue()
    doc = engine_ext.Game(interpreted_engine, _midgame(interpreted_engine, 4, 30)).to_json()
    ranks = []
    for engine in (compiled_engine, interpreted_engine):
        compiled = bool(engine.COMPILED)
        st = engine.from_json(doc).state
        build = bots.load_build(compiled)
        k = build.kashgar.KashgarSearchGame(ev.engine_weights(), ev.rollout_weights())
        k.start(st)
        out = build.search.int_array(64)
        n = k.greedy_rank(st, out, 64)
        ranks.append(list(out[:n]))
    assert ranks[0] == ranks[1]


def test_widen_zero_and_an_unreached_threshold_search_as_the_macro_search() -> None:
    st = engine_ext.new_game(players=2, seed=8).state

    def key(**kw: Any) -> Any:
        an = ISMCTSBot(iterations=400, **MASTER, **kw).analyse(st, seed=2)
        return an.code, [(a.code, a.visits, round(a.mean_reward, 12)) for a in an.alternatives]

    plain = key()
    assert key(widen=0) == plain
    assert key(widen=10**6) == plain  # no node is visited that often: nothing widens


def _tree_nodes(search: Any) -> list[tuple[int, int, int, int]]:
    """(node, parent, chooser, visits) of every node below the root."""
    tr = search.tree
    return [(i, tr.parent[i], tr.player[i], tr.visits[i]) for i in range(1, tr.size)]


@pytest.mark.parametrize("compiled", [True, False])
def test_a_widened_tree_branches_on_the_other_seats_turns_within_the_rank_bound(compiled: bool) -> None:
    if compiled:
        require_compiled_search()
    st = engine_ext.get_engine(compiled).new_game(players=2, seed=8).state
    me = st.current_player()
    widen = 20
    plain = ISMCTSBot(iterations=600, **MASTER)
    plain.analyse(st, seed=2)
    assert {p for _, parent, p, _ in _tree_nodes(plain.last_search) if parent != 0} <= {me}  # macro=2: own turns only

    bot = ISMCTSBot(iterations=600, widen=widen, **MASTER)
    an = bot.analyse(st, seed=2)
    s = bot.last_search
    nodes = _tree_nodes(s)
    assert any(p != me for _, parent, p, _ in nodes if parent != 0)  # the other seat's turn branches now
    tr = s.tree
    widened = 0
    for node in range(1, tr.size):
        kids = [c for c in tr.children(node) if tr.player[c] != me]
        if kids and tr.player[node] == me:
            # the other seat's alternatives under one of mine: each pass through the node offers at
            # most k = sqrt(visits / widen) of them (the k this world's greedy ranking puts first)
            k = math.isqrt(tr.visits[node] // widen)
            assert 1 <= k and sum(tr.avail[c] for c in kids) <= (tr.visits[node] - widen + 1) * k
            widened += 1
    assert widened > 0
    assert an.iterations == 600 and sum(a.visits for a in an.alternatives) == 600
    assert an.code in st.legal_codes()


def test_a_bad_widen_is_refused() -> None:
    with pytest.raises(ValueError, match="widen must be a whole number >= 0"):
        ISMCTSConfig(widen=-1)
    with pytest.raises(ValueError, match="widen"):
        ISMCTSConfig(widen=2.5)  # type: ignore[arg-type]


def test_both_builds_widen_alike() -> None:
    require_compiled_search()
    doc = engine_ext.new_game(2, seed=6).to_json()
    answers = set()
    for compiled in (True, False):
        an = ISMCTSBot(iterations=300, widen=10, **MASTER).analyse(engine_ext.get_engine(compiled).from_json(doc).state,
                                                                   seed=4)
        answers.add((an.code, tuple((a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives)))
    assert len(answers) == 1
