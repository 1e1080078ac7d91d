"""Selection, expansion and backup of the search (`bots/ismcts.py`), pinned on small hand-built
trees and on a tiny hand-built game through the whole loop, as OpenSpiel's mcts_test does; for the
interpreted search and (when built) the compiled one."""

from __future__ import annotations

import array
import math
from types import ModuleType
from typing import Any

import pytest

import bots
from tests.engine_helpers import require_compiled_search


@pytest.fixture(params=["interpreted", "compiled"])
def search_mod(request: pytest.FixtureRequest) -> ModuleType:
    if request.param == "interpreted":
        return bots.load_build(False).search
    return require_compiled_search().search


def _codes(*codes: int) -> array.array:  # type: ignore[type-arg]
    return array.array("i", codes)


def _doubles(*xs: float) -> array.array:  # type: ignore[type-arg]
    return array.array("d", xs)


def _child(tr: Any, parent: int, move: int, player: int, visits: int, avail: int, reward: float) -> int:
    k = tr.new_node(parent, move, player)
    tr.visits[k] = visits
    tr.avail[k] = avail
    tr.reward[k] = reward
    return k


def _search(mod: ModuleType, c: float, seed: int = 1) -> Any:
    return mod.Search(mod.SearchGame(), mod.Rng(seed), c)


# ---- hand-built trees -------------------------------------------------------------------------

def test_ucb_value_formula(search_mod: ModuleType) -> None:
    assert search_mod.ucb_value(3.0, 4, 10, 0.7) == pytest.approx(0.75 + 0.7 * math.sqrt(math.log(10) / 4))
    assert search_mod.ucb_value(1.0, 1, 1, 2.0) == pytest.approx(1.0)  # ln 1 = 0


def test_selection_uses_availability_not_parent_visits(search_mod: ModuleType) -> None:
    s = _search(search_mod, 1.0)
    tr = s.tree
    tr.visits[0] = 100
    # same mean (0.5), same visits; b was available far more often -> more exploration bonus
    a = _child(tr, 0, 10, 0, 10, 12, 5.0)
    b = _child(tr, 0, 11, 0, 10, 90, 5.0)
    assert s.step(0, _codes(10, 11), 2, 0) == b
    assert s.expanded == 0
    # both legal children counted one more availability
    assert tr.avail[a] == 13 and tr.avail[b] == 91


def test_selection_ignores_children_not_legal_in_this_determinization(search_mod: ModuleType) -> None:
    s = _search(search_mod, 0.0)
    tr = s.tree
    best = _child(tr, 0, 10, 0, 10, 10, 9.0)   # mean 0.9 but illegal now
    other = _child(tr, 0, 11, 0, 10, 10, 2.0)  # mean 0.2
    third = _child(tr, 0, 12, 0, 10, 10, 4.0)  # mean 0.4
    assert s.step(0, _codes(11, 12), 2, 0) == third
    assert tr.avail[best] == 10  # not available: not counted
    assert tr.avail[other] == 11


def test_only_the_first_n_codes_are_legal(search_mod: ModuleType) -> None:
    s = _search(search_mod, 0.0)
    tr = s.tree
    low = _child(tr, 0, 10, 0, 10, 10, 1.0)
    _child(tr, 0, 11, 0, 10, 10, 9.0)
    assert s.step(0, _codes(10, 11), 1, 0) == low  # 11 is past n: not legal here


def test_greedy_selection_with_c_zero_and_tie_keeps_oldest(search_mod: ModuleType) -> None:
    s = _search(search_mod, 0.0, seed=3)
    tr = s.tree
    first = _child(tr, 0, 20, 1, 4, 4, 2.0)
    _child(tr, 0, 21, 1, 4, 4, 2.0)
    assert s.step(0, _codes(20, 21), 2, 1) == first


def test_expansion_adds_one_unexpanded_legal_decision(search_mod: ModuleType) -> None:
    s = _search(search_mod, 0.7, seed=5)
    tr = s.tree
    _child(tr, 0, 30, 0, 3, 3, 1.0)
    k = s.step(0, _codes(30, 31, 32), 3, 0)
    assert s.expanded == 1
    assert tr.move[k] in (31, 32)
    assert tr.parent[k] == 0 and tr.player[k] == 0 and tr.avail[k] == 1 and tr.visits[k] == 0
    assert tr.size == 3
    assert sorted(tr.move[c] for c in tr.children(0)) == sorted([30, tr.move[k]])


def test_backup_adds_each_nodes_choosers_reward(search_mod: ModuleType) -> None:
    s = _search(search_mod, 0.7)
    tr = s.tree
    a = _child(tr, 0, 1, 0, 0, 1, 0.0)      # chosen by player 0
    b = _child(tr, a, 2, 1, 0, 1, 0.0)      # chosen by player 1
    c = _child(tr, b, 3, 2, 0, 1, 0.0)      # chosen by player 2
    s.set_path([0, a, b, c])
    s.backup(_doubles(0.2, 0.5, 0.3), _doubles(10.0, 20.0, 30.0))
    assert tr.visits[0] == 1
    assert [tr.visits[x] for x in (a, b, c)] == [1, 1, 1]
    assert [tr.reward[x] for x in (a, b, c)] == pytest.approx([0.2, 0.5, 0.3])
    assert [tr.vpsum[x] for x in (a, b, c)] == pytest.approx([10.0, 20.0, 30.0])
    s.backup(_doubles(1.0, 0.0, 0.0), _doubles(25.0, 3.0, 1.0))
    assert [tr.reward[x] for x in (a, b, c)] == pytest.approx([1.2, 0.5, 0.3])


def test_tree_grows_past_its_capacity(search_mod: ModuleType) -> None:
    tr = search_mod.Tree(16)
    prev = 0
    for i in range(100):
        prev = tr.new_node(prev, i, i % 2)
    assert tr.size == 101 and tr.cap >= 101
    assert tr.child(0, 0) == 1 and tr.parent[100] == 99 and tr.move[100] == 99


def test_softmax_into(search_mod: ModuleType) -> None:
    out = _doubles(0.0, 0.0, 0.0, 0.0)
    search_mod.softmax_into([1.0, 2.0, 3.0], 1.0, out, 3)
    ex = [math.exp(v) for v in (1.0, 2.0, 3.0)]
    assert list(out[:3]) == pytest.approx([e / sum(ex) for e in ex])


def test_the_random_stream_is_xorshift64_star(search_mod: ModuleType) -> None:
    rng = search_mod.Rng(7)
    x = (7 * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & (2**64 - 1)
    for _ in range(5):
        x ^= x >> 12
        x ^= (x << 25) & (2**64 - 1)
        x ^= x >> 27
        assert rng.next() == (x * 0x2545F4914F6CDD1D) & (2**64 - 1)


# ---- a tiny hand-built game through the whole loop ----------------------------------------------

class Tiny:
    """Two seats, two plies: seat 0 picks 1, 2 or (in the worlds where the hidden card is up) 3;
    then seat 1 picks 1 or 2; then the game is over. Who wins depends on the line (`WINS`)."""

    WINS = {(1, 1): 0, (1, 2): 1, (2, 1): 0, (2, 2): 0, (3, 1): 1, (3, 2): 1}
    players = 2

    def __init__(self, hidden: int = 1) -> None:
        self.hidden = hidden
        self.line: tuple[int, ...] = ()

    def determinize(self, observer: int, seed: int) -> Tiny:
        return Tiny(seed % 3 == 0)  # the card is up in a third of the worlds

    def is_terminal(self) -> bool:
        return len(self.line) == 2

    def current_player(self) -> int:
        return -1 if self.is_terminal() else len(self.line)

    def legal_codes(self) -> list[int]:
        return ([1, 2, 3] if self.hidden else [1, 2]) if not self.line else [1, 2]

    def apply_unchecked(self, code: int) -> None:
        self.line += (code,)

    def winner(self) -> int:
        return self.WINS[self.line]

    def vp(self, p: int) -> int:
        return 10 * p + sum(self.line)


class LineValues:
    """Seat 0's value of an unfinished line (a leaf below the root before the game's end)."""

    def values(self, st: Tiny) -> list[float]:
        return [{(1,): 0.3, (2,): 1.0, (3,): -0.5}[st.line], 0.0]


def _reference(mod: ModuleType, iterations: int, c: float, seed: int) -> dict[tuple[int, ...], tuple[int, int, float]]:
    """SO-ISMCTS written plainly, one object per node (OpenSpiel's style), with the same random
    draws: (visits, availability, reward sum) of every node, keyed by its line."""
    rng = mod.Rng(seed)
    stats: dict[tuple[int, ...], list[float]] = {(): [0, 0, 0.0]}
    order: dict[tuple[int, ...], list[int]] = {(): []}  # children's moves, oldest first
    for _ in range(iterations):
        d = Tiny().determinize(0, rng.next() & 0x7FFFFFFF)
        path = [()]
        while not d.is_terminal():
            line, legal = d.line, d.legal_codes()
            best, best_value = None, -math.inf
            for m in order[line]:
                if m in legal:
                    st = stats[line + (m,)]
                    st[1] += 1
                    value = st[2] / st[0] + c * math.sqrt(math.log(max(st[1], 1)) / st[0])
                    if value > best_value:  # the oldest wins a tie
                        best, best_value = m, value
            new = [m for m in legal if m not in order[line]]
            if new:
                best = new[rng.next() % len(new)]
                order[line].append(best)
                stats[line + (best,)] = [0, 1, 0.0]
                order[line + (best,)] = []
            d.apply_unchecked(best)
            path.append(d.line)
            if new:
                break
        if d.is_terminal():
            rewards = [1.0 if p == d.winner() else 0.0 for p in range(2)]
        else:
            e = [math.exp(0.35 * v) for v in LineValues().values(d)]
            rewards = [x / sum(e) for x in e]
        for line in path:
            st = stats[line]
            st[0] += 1
            if line:
                st[2] += rewards[len(line) - 1]  # the reward of the seat that chose its last move
    return {line: (int(v), int(a), r) for line, (v, a, r) in stats.items()}


def _lines(s: Any) -> dict[tuple[int, ...], tuple[int, int, float]]:
    tr = s.tree
    out = {}
    todo: list[tuple[int, tuple[int, ...]]] = [(0, ())]
    while todo:
        node, line = todo.pop()
        out[line] = (tr.visits[node], tr.avail[node], tr.reward[node])
        todo += [(ch, line + (tr.move[ch],)) for ch in tr.children(node)]
    return out


@pytest.mark.parametrize("c", [0.0, 0.7, 2.0])
def test_the_loop_is_so_ismcts_on_a_hand_built_game(search_mod: ModuleType, c: float) -> None:
    s = search_mod.Search(search_mod.SearchGame(LineValues(), 0.35), search_mod.Rng(11), c)
    assert s.run(Tiny(), 0, 200, 0.0) == 200
    got, want = _lines(s), _reference(search_mod, 200, c, 11)
    assert got.keys() == want.keys()
    for line, (visits, avail, reward) in want.items():
        assert got[line][:2] == (visits, avail if line else 0), line
        assert got[line][2] == pytest.approx(reward, abs=1e-9), line
    # move 3 is legal in about a third of the worlds: it was available far less often than the others
    assert got[(3,)][1] < got[(1,)][1] / 2


class OnePly(Tiny):
    """One decision of seat 0 among 1, 2 and 3, every one legal; 2 wins, the others lose."""

    def determinize(self, observer: int, seed: int) -> OnePly:
        return OnePly()

    def is_terminal(self) -> bool:
        return len(self.line) == 1

    def legal_codes(self) -> list[int]:
        return [1, 2, 3]

    def winner(self) -> int:
        return 0 if self.line == (2,) else 1


def test_with_c_zero_the_best_decision_takes_every_visit_after_expansion(search_mod: ModuleType) -> None:
    """c = 0 tries each decision once, then takes only the best; each node adds its chooser's reward."""
    s = search_mod.Search(search_mod.SearchGame(), search_mod.Rng(3), 0.0)
    assert s.run(OnePly(), 0, 50, 0.0) == 50
    assert {code: (v, r, vp) for code, v, r, vp in s.root_stats()} == {
        1: (1, 0.0, 1.0), 2: (48, 48.0, 2.0 * 48), 3: (1, 0.0, 3.0)}
    assert s.tree.visits[0] == 50 and s.principal_line() == [2]


def test_a_python_evaluator_runs_in_the_same_loop(search_mod: ModuleType) -> None:
    """A Python subclass of the search's SearchGame overrides its methods (here the leaf's rewards),
    in either build of the loop."""

    class FavourTwo(search_mod.SearchGame):  # type: ignore[name-defined,misc]
        def evaluate(self, d: Any, rng: Any) -> None:
            self.rew[0] = 1.0 if d.line[0] == 2 else 0.0
            self.rew[1] = 1.0 - self.rew[0]
            self.vps[0] = self.vps[1] = float(len(d.line))

    s = search_mod.Search(FavourTwo(), search_mod.Rng(5), 0.7)
    s.run(Tiny(), 0, 300, 0.0)
    stats = {code: (v, r) for code, v, r, _vp in s.root_stats()}
    best = max(stats, key=lambda code: stats[code][0])
    assert best == 2 and stats[2][1] == stats[2][0]  # every visit of 2 backed up seat 0's reward 1


def test_both_builds_agree_on_the_toy_game() -> None:
    from bots.evaluate import VPValue
    from lab.toygame import ToyState

    stats = []
    for compiled in (False, True):
        try:
            mod = bots.load_build(compiled).search
        except ImportError:
            continue
        s = mod.Search(mod.SearchGame(VPValue(), 0.35, 8), mod.Rng(42), 0.7)
        s.run(ToyState(3, seed=4), 0, 300, 0.0)
        stats.append(s.root_stats())
    assert all(x == stats[0] for x in stats)
