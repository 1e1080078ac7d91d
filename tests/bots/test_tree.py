"""Selection, expansion and backup of the SO-ISMCTS core, pinned on small hand-built trees,
for the interpreted search and (when built) the compiled one."""

from __future__ import annotations

import math
from types import ModuleType

import pytest

import bots
from tests.engine_helpers import require_compiled_search


def _modules() -> list[ModuleType]:
    mods = [bots.load_search(False)]
    try:
        mods.append(bots.load_search(True))
    except ImportError:
        pass
    return mods


@pytest.fixture(params=["interpreted", "compiled"])
def search_mod(request: pytest.FixtureRequest) -> ModuleType:
    if request.param == "interpreted":
        return bots.load_search(False)
    return require_compiled_search()


def _child(tr: object, parent: int, move: int, player: int, visits: int, avail: int, reward: float) -> int:
    k = tr.new_node(parent, move, player)  # type: ignore[attr-defined]
    tr.visits[k] = visits  # type: ignore[attr-defined]
    tr.avail[k] = avail  # type: ignore[attr-defined]
    tr.reward[k] = reward  # type: ignore[attr-defined]
    return k


def test_ucb_value_formula(search_mod: ModuleType) -> None:
    assert search_mod.ucb_value(3.0, 4, 10, 0.7) == pytest.approx(0.75 + 0.7 * math.sqrt(math.log(10) / 4))
    assert search_mod.ucb_value(1.0, 1, 1, 2.0) == pytest.approx(1.0)  # ln 1 = 0


def test_selection_uses_availability_not_parent_visits(search_mod: ModuleType) -> None:
    s = search_mod.Search(c=1.0, seed=1)
    tr = s.tree
    tr.visits[0] = 100
    # same mean (0.5), same visits; b was available far more often -> more exploration bonus
    a = _child(tr, 0, 10, 0, 10, 12, 5.0)
    b = _child(tr, 0, 11, 0, 10, 90, 5.0)
    assert s.step(0, [10, 11], 0) == b
    assert s.expanded == 0
    # both compatible children counted one more availability
    assert tr.avail[a] == 13 and tr.avail[b] == 91


def test_selection_ignores_children_not_legal_in_this_determinization(search_mod: ModuleType) -> None:
    s = search_mod.Search(c=0.0, seed=1)
    tr = s.tree
    best = _child(tr, 0, 10, 0, 10, 10, 9.0)   # mean 0.9 but illegal now
    other = _child(tr, 0, 11, 0, 10, 10, 2.0)  # mean 0.2
    third = _child(tr, 0, 12, 0, 10, 10, 4.0)  # mean 0.4
    assert s.step(0, [11, 12], 0) == third
    assert tr.avail[best] == 10  # not available: not counted
    assert tr.avail[other] == 11


def test_greedy_selection_with_c_zero_and_tie_keeps_oldest(search_mod: ModuleType) -> None:
    s = search_mod.Search(c=0.0, seed=3)
    tr = s.tree
    first = _child(tr, 0, 20, 1, 4, 4, 2.0)
    _child(tr, 0, 21, 1, 4, 4, 2.0)
    assert s.step(0, [20, 21], 1) == first


def test_expansion_adds_one_unexpanded_legal_decision(search_mod: ModuleType) -> None:
    s = search_mod.Search(c=0.7, seed=5)
    tr = s.tree
    _child(tr, 0, 30, 0, 3, 3, 1.0)
    k = s.step(0, [30, 31, 32], 0)
    assert s.expanded == 1
    assert tr.move[k] in (31, 32)
    assert tr.parent[k] == 0 and tr.player[k] == 0 and tr.avail[k] == 1 and tr.visits[k] == 0
    assert tr.size == 3
    assert sorted(tr.move[c] for c in tr.children(0)) == sorted([30, tr.move[k]])


def test_backup_adds_each_nodes_choosers_reward(search_mod: ModuleType) -> None:
    s = search_mod.Search(seed=1)
    tr = s.tree
    a = _child(tr, 0, 1, 0, 0, 1, 0.0)      # chosen by player 0
    b = _child(tr, a, 2, 1, 0, 1, 0.0)      # chosen by player 1
    c = _child(tr, b, 3, 2, 0, 1, 0.0)      # chosen by player 2
    s.set_path([0, a, b, c])
    s.set_rewards([0.2, 0.5, 0.3], [10.0, 20.0, 30.0])
    s.backup()
    assert tr.visits[0] == 1
    assert [tr.visits[x] for x in (a, b, c)] == [1, 1, 1]
    assert [tr.reward[x] for x in (a, b, c)] == pytest.approx([0.2, 0.5, 0.3])
    assert [tr.vpsum[x] for x in (a, b, c)] == pytest.approx([10.0, 20.0, 30.0])
    s.set_rewards([1.0, 0.0, 0.0], [25.0, 3.0, 1.0])
    s.backup()
    assert [tr.reward[x] for x in (a, b, c)] == pytest.approx([1.2, 0.5, 0.3])


def test_tree_grows_past_its_capacity(search_mod: ModuleType) -> None:
    tr = search_mod.Tree(16)
    prev = 0
    for i in range(100):
        prev = tr.new_node(prev, i, i % 2)
    assert tr.size == 101 and tr.cap >= 101
    assert tr.child(0, 0) == 1 and tr.parent[100] == 99 and tr.move[100] == 99


def test_softmax_into(search_mod: ModuleType) -> None:
    import array

    out = array.array("d", [0.0] * 4)
    search_mod.softmax_into([1.0, 2.0, 3.0], 1.0, out, 3)
    ex = [math.exp(v) for v in (1.0, 2.0, 3.0)]
    assert list(out[:3]) == pytest.approx([e / sum(ex) for e in ex])


def test_both_builds_agree_on_the_toy_game() -> None:
    from bots.evaluate import VPEvaluator
    from lab.toygame import ToyState

    stats = []
    for mod in _modules():
        s = mod.Search(c=0.7, seed=42)
        s.run(ToyState(3, seed=4), 0, 300, 0.0, VPEvaluator())
        stats.append(s.root_stats())
    assert all(x == stats[0] for x in stats)


def test_children_after_another_observation_are_not_compatible(search_mod: ModuleType) -> None:
    s = search_mod.Search(c=0.0, seed=1)
    tr = s.tree
    tr.visits[0] = 20
    seen_a = tr.new_node(0, 10, 0, 7)  # decision 10 after observation 7
    seen_b = tr.new_node(0, 10, 0, 8)  # the same decision after observation 8
    for k, r in ((seen_a, 1.0), (seen_b, 9.0)):
        tr.visits[k] = 10
        tr.avail[k] = 10
        tr.reward[k] = r
    assert tr.obs[seen_a] == 7 and tr.obs[seen_b] == 8
    # after observation 7 only the first is compatible, though the other has the higher mean
    assert s.step(0, [10], 0, 7) == seen_a
    assert s.expanded == 0
    assert tr.avail[seen_a] == 11 and tr.avail[seen_b] == 10
    # after an observation never seen here, decision 10 gets a new child keyed by it
    k = s.step(0, [10], 0, 9)
    assert s.expanded == 1
    assert k not in (seen_a, seen_b) and tr.move[k] == 10 and tr.obs[k] == 9 and tr.avail[k] == 1
