# cython: annotation_typing=False
"""Single-observer information-set MCTS (SO-ISMCTS; Cowling, Powley and Whitehouse 2012).

The tree and the loop, which know nothing of any game: what is game-specific (sampling a world,
legal decisions, the rollout and the value of a leaf, the greedy choices of the macro search) is
asked of a `SearchGame` (the game as the search sees it, with its leaf evaluation) injected into the
`Search`, with the random stream (`Rng`), as OpenSpiel's MCTSBot gets its evaluator and random state
(`open_spiel/python/algorithms/mcts.py`). `SearchGame` here plays any game through its state's
Python methods; Kashgar's own, compiled, is `bots/kashgar_eval.py` (`KashgarSearchGame`).

One tree of information sets, seen from the searching player (the *observer*, the player to move
at the root). Every iteration:

1. **Determinize**: sample a full state consistent with what the observer knows
   (`SearchGame.determinize`); the true hidden order is never read.
2. **Select**: from the root, while every decision legal in this determinization already has a
   child, go to the child maximising UCB with *availability* counts::

       mean_reward(child) + c * sqrt(ln(avail(child)) / visits(child))

   where `avail(child)` counts the iterations in which the child's decision was legal when its
   parent was reached (not the parent's visits: a decision that is rarely legal must not be
   over-explored). Every legal child's availability is counted on the way.
3. **Expand**: one random decision legal here that has no child yet gets a node.
4. **Evaluate**: `SearchGame.evaluate` plays its rollout from the leaf and writes a reward per
   seat (`SearchGame.rew`: win probabilities, summing to 1) and each seat's VP (`SearchGame.vps`).
5. **Back up**: each node on the path adds the reward *of the player who chose its decision*
   (the player to move at its parent): `reward / visits` of a node is always from the point of
   view of the player who decides between it and its siblings; this is what makes the one tree
   right for 2, 3 and 4 players.

With `macro` set (for games whose search game plays turns, `SearchGame.has_turns`), the tree branches
only on what starts a turn and on every decision at the root: below the root, a decision within a
turn (`SearchGame.within_turn`) is the mover's greedy choice (`SearchGame.play_greedy`), made without
a node; with `macro=2` the other seats' decisions below the root are greedy too, so the tree holds
only the observer's own turns (a greedy model of the opponents). With `widen` > 0 (progressive
widening), a node below the root visited at least `widen` times no longer takes the next greedy
decision for granted: it branches on the k decisions the greedy choice ranks first
(`SearchGame.greedy_rank`), k = floor(sqrt(visits / widen)), so a long search searches more of the
game (the other seats' alternatives, its own within a turn) instead of refining one greedy line.
A widened node's children may be two movers' decisions (the branch's and, from before, those after
the greedy line): selection there matches a child only to its own mover's legal decisions.

With `prior` > 0 and a search game that gives priors over the legal decisions (`SearchGame.priors`:
Kashgar's learned policy, `bots.policy`), selection at the root is PUCT-style (AlphaZero's, with availability
counts): the child maximising ``mean + prior * P * sqrt(avail) / (1 + visits)``, where a legal
decision without a child scores as one whose mean is its visited siblings' (their reward sum over
their visits; 0.5 when none is visited), with the parent's visits + 1 for its availability and no
visit, and is expanded when it scores highest. The root's priors are computed once, while its legal
decisions stay the same (they are the observer's, whose information every determinization keeps).

The tree lives in flat typed arrays (one index per node: decision code, chooser, parent, first
child, next sibling, visits, availability, reward sum, VP sum). This same file compiles as
`bots.ismcts_c` (see `ismcts_c.pxd`), where the arrays are C memoryviews, the search game's methods
are C calls and the loop runs without per-node Python objects. The budget (iterations and/or a
wall-clock deadline) is checked inside the loop, every iteration, so compiled code stops on time
without signals.
"""

from __future__ import annotations

import array
import math
import time
from collections.abc import Callable
from typing import Any

MASK64 = 0xFFFFFFFFFFFFFFFF
YIELD_S = 0.005  # how often a search lets other threads of its process have the GIL (the switch interval)


def ucb_value(reward_sum: float, visits: int, avail: int, c: float) -> float:
    """UCB1 with availability counts: the score that selection maximises (visits >= 1)."""
    mean = reward_sum / visits
    if avail < 1:
        avail = 1
    return mean + c * math.sqrt(math.log(avail) / visits)


def softmax_into(vals: list, scale: float, out: Any, n: int) -> None:  # type: ignore[type-arg]
    """out[0:n] = softmax(scale * vals)."""
    m = -1e300
    s = 0.0
    for i in range(n):
        if vals[i] > m:
            m = vals[i]
    for i in range(n):
        out[i] = math.exp(scale * (vals[i] - m))
        s += out[i]
    for i in range(n):
        out[i] = out[i] / s


def int_array(n: int) -> array.array:  # type: ignore[type-arg]
    """n C ints, zero."""
    return array.array("i", bytes(4 * n))


def double_array(n: int) -> array.array:  # type: ignore[type-arg]
    """n C doubles, zero."""
    return array.array("d", bytes(8 * n))


class Rng:
    """xorshift64*: the search's random stream, which its search game draws from too."""

    def __init__(self, seed: int = 0) -> None:
        self.state = (seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & MASK64
        if self.state == 0:
            self.state = 0x2545F4914F6CDD1D

    def next(self) -> int:
        """The next 64-bit pseudo-random number."""
        x = self.state
        x ^= x >> 12
        x ^= (x << 25) & MASK64
        x ^= x >> 27
        self.state = x
        return (x * 0x2545F4914F6CDD1D) & MASK64


class Tree:
    """The search tree as parallel flat arrays; node 0 is the root."""

    def __init__(self, capacity: int = 1024) -> None:
        self.size = 0
        self.cap = 0
        self._grow(max(capacity, 16))
        self.new_node(-1, -1, -1)

    def _grow(self, cap: int) -> None:
        names = ("move", "player", "parent", "first_child", "next_sibling", "visits", "avail")
        old_i = [getattr(self, "_a_" + nm, None) for nm in names]
        old_r = getattr(self, "_a_reward", None)
        old_v = getattr(self, "_a_vpsum", None)
        new_i = [int_array(cap) for _ in names]
        new_r = double_array(cap)
        new_v = double_array(cap)
        n = self.size
        if n:
            for a, b in zip(new_i, old_i, strict=False):
                a[:n] = b[:n]  # type: ignore[index]
            new_r[:n] = old_r[:n]  # type: ignore[index]
            new_v[:n] = old_v[:n]  # type: ignore[index]
        self._a_move, self._a_player, self._a_parent, self._a_first_child, self._a_next_sibling, \
            self._a_visits, self._a_avail = new_i
        self._a_reward = new_r
        self._a_vpsum = new_v
        self.move = new_i[0]
        self.player = new_i[1]
        self.parent = new_i[2]
        self.first_child = new_i[3]
        self.next_sibling = new_i[4]
        self.visits = new_i[5]
        self.avail = new_i[6]
        self.reward = new_r
        self.vpsum = new_v
        self.cap = cap

    def new_node(self, parent: int, move: int, player: int) -> int:
        """Add a child of `parent` for decision `move` chosen by `player`; returns its index."""
        if self.size >= self.cap:
            self._grow(self.cap * 2)
        k = self.size
        self.size += 1
        self.move[k] = move
        self.player[k] = player
        self.parent[k] = parent
        self.first_child[k] = -1
        self.visits[k] = 0
        self.avail[k] = 0
        self.reward[k] = 0.0
        self.vpsum[k] = 0.0
        if parent >= 0:
            self.next_sibling[k] = self.first_child[parent]
            self.first_child[parent] = k
        else:
            self.next_sibling[k] = -1
        return k

    def child(self, node: int, move: int) -> int:
        """The child of `node` for decision `move`, or -1."""
        ch = self.first_child[node]
        while ch != -1:
            if self.move[ch] == move:
                return ch
            ch = self.next_sibling[ch]
        return -1

    def children(self, node: int) -> list[int]:
        """Child indices of `node`, oldest first."""
        out = []
        ch = self.first_child[node]
        while ch != -1:
            out.append(ch)
            ch = self.next_sibling[ch]
        out.reverse()
        return out

    def nbytes(self) -> int:
        """Bytes held by the arrays (the whole tree)."""
        return self.cap * (7 * 4 + 2 * 8)


class SearchGame:
    """What the search asks of a game: sample a world, list and apply decisions, value a leaf.

    This one plays any game through its state's own methods (`determinize`, `is_terminal`,
    `current_player`, `legal_codes`, `apply_unchecked`, `vp`, `winner`, `players`): a leaf is
    valued after `depth` random decisions, 1 for the winner and 0 for the others at the game's end,
    else `softmax(scale * values)` of `value.values(state)` (a value function, `bots.evaluate`: one
    value per seat, e.g. `VPValue`; None: the seats' VP). A game's own search game overrides these
    methods (`bots.kashgar_eval.KashgarSearchGame`, compiled: no Python call per leaf); a Python
    subclass may override any of them.

    `evaluate` writes its results into `rew` (the reward of each seat) and `vps` (each seat's VP),
    which `Search.backup` reads.
    """

    def __init__(self, value: Any = None, scale: float = 0.35, depth: int = 0) -> None:
        self.value = value
        self.scale = scale
        self.depth = depth
        self.players = 0
        self._rew = double_array(8)
        self._vps = double_array(8)
        self.rew = self._rew
        self.vps = self._vps

    def start(self, root: Any) -> None:
        """Get ready to search from `root` (once per `Search.run`)."""
        self.players = root.players
        if self.players > len(self._rew):
            self._rew = double_array(self.players)
            self._vps = double_array(self.players)
            self.rew = self._rew
            self.vps = self._vps

    def determinize(self, root: Any, observer: int, seed: int) -> Any:
        """A world sampled from what `observer` knows of `root`, from `seed`."""
        return root.determinize(observer, seed)

    def is_terminal(self, d: Any) -> bool:
        return bool(d.is_terminal())

    def current_player(self, d: Any) -> int:
        return int(d.current_player())

    def legal(self, d: Any, out: Any) -> int:
        """How many decisions are legal in `d`; their codes written to `out` (as many as fit)."""
        codes = d.legal_codes()
        n = len(codes)
        m = n if n <= len(out) else len(out)
        for i in range(m):
            out[i] = codes[i]
        return n

    def apply(self, d: Any, code: int) -> None:
        d.apply_unchecked(code)

    def has_turns(self) -> bool:
        """Whether this game's decisions make turns that the macro search plays greedily."""
        return False

    def within_turn(self, d: Any) -> bool:
        """Whether the decision due in `d` is inside a turn (not what starts one)."""
        return False

    def play_greedy(self, d: Any, rng: Rng) -> None:
        """Apply the mover's greedy decision to `d` (ties broken with `rng`)."""
        raise NotImplementedError("this search game makes no greedy choices (has_turns() is False)")

    def priors(self, d: Any, codes: Any, n: int, out: Any) -> int:
        """Write to `out[0:n]` a prior probability of each decision `codes[0:n]` legal in `d` (the
        order `legal` wrote them); 1 if it did, 0 if this search game has no priors."""
        return 0

    def greedy_rank(self, d: Any, out: Any, k: int) -> int:
        """Write to `out` the `k` decisions legal in `d` (fewer when fewer are legal) that the mover's
        greedy choice ranks first, best first; how many were written (at most `len(out)`)."""
        raise NotImplementedError("this search game makes no greedy choices (has_turns() is False)")

    def evaluate(self, d: Any, rng: Rng) -> None:
        """Play the rollout from leaf `d` (it changes `d`), then set `rew` and `vps`."""
        n = self.players
        for _k in range(self.depth):
            if d.is_terminal():
                break
            codes = d.legal_codes()
            nl = len(codes)
            d.apply_unchecked(codes[rng.next() % nl])
        if d.is_terminal():
            w = d.winner()
            for p in range(n):
                self.rew[p] = 1.0 if p == w else 0.0
        elif self.value is None:
            softmax_into([float(d.vp(p)) for p in range(n)], self.scale, self.rew, n)
        else:
            softmax_into(self.value.values(d), self.scale, self.rew, n)
        for p in range(n):
            self.vps[p] = d.vp(p)


class Search:
    """One tree, the loop, and the search game and random stream it was given. `bots.ismcts_bot`
    wraps it as a Bot."""

    def __init__(self, game: SearchGame | None = None, rng: Rng | None = None, c: float = 0.7,
                 macro: int = 0, capacity: int = 1024, widen: int = 0, prior: float = 0.0) -> None:
        self.game = game if game is not None else SearchGame()
        self.rng = rng if rng is not None else Rng(0)
        self.c = c
        self.macro = macro  # 1: decisions within a turn below the root are greedy; 2: other seats' too
        self.widen = widen  # > 0: a node visited this often branches on its next greedy decision (widening)
        self.prior = prior  # > 0: PUCT-style selection with the search game's priors (`SearchGame.priors`)
        self.haspri = 0  # whether the priors of the current step are set (`pri`)
        self.nroot = -1  # how many root decisions the priors in `pri` are of (`rcodes`); -1: none yet
        self.rootpri = 0  # whether the search game gave the root priors
        self.tree = Tree(capacity)
        self.iterations = 0
        self.expanded = 0
        self.plen = 0
        self.next_poll = 0.0
        self.next_yield = 0.0
        self.legcap = 64
        self.pathcap = 64
        self._leg = int_array(64)
        self._found = int_array(64)
        self._path = int_array(64)
        self._pri = double_array(64)
        self._rcodes = int_array(64)
        self.rcodes = self._rcodes
        self.legbuf = self._leg
        self.found = self._found
        self.path = self._path
        self.pri = self._pri

    def _ensure_legal_cap(self, n: int) -> None:
        if n > self.legcap:
            m = max(n, 2 * self.legcap)
            self._leg = int_array(m)
            self._found = int_array(m)
            self._pri = double_array(m)
            self._rcodes = int_array(m)
            self.rcodes = self._rcodes
            self.nroot = -1
            self.legbuf = self._leg
            self.found = self._found
            self.pri = self._pri
            self.legcap = m

    def _ensure_path_cap(self, n: int) -> None:
        if n > self.pathcap:
            new = int_array(max(n, 2 * self.pathcap))
            new[: self.plen] = self._path[: self.plen]
            self._path = new
            self.path = new
            self.pathcap = len(new)

    def step(self, node: int, codes: Any, n: int, player: int) -> int:
        """One selection or expansion step at `node`, where the `n` decisions `codes[0:n]` are
        legal in this determinization and `player` chooses.

        Counts availability of every legal child; if some legal decision has no child yet, adds
        one for a random such decision (`self.expanded` = 1) and returns it; otherwise returns the
        child of highest UCB (ties: the oldest).
        """
        i = 0
        k = 0
        ch = 0
        mv = 0
        nexp = 0
        best = -1
        val = 0.0
        bestval = -1e300
        tr = self.tree
        if n > self.legcap:
            self._ensure_legal_cap(n)
        if self.haspri:
            return self._step_prior(node, codes, n, player)
        for i in range(n):
            self.found[i] = 0
        ch = tr.first_child[node]
        while ch != -1:
            mv = tr.move[ch]
            if self.widen > 0 and tr.player[ch] != player:  # a widened node holds two movers' children
                ch = tr.next_sibling[ch]
                continue
            for i in range(n):
                if codes[i] == mv:
                    self.found[i] = 1
                    nexp += 1
                    tr.avail[ch] += 1
                    if tr.visits[ch] > 0:
                        val = ucb_value(tr.reward[ch], tr.visits[ch], tr.avail[ch], self.c)
                    else:
                        val = 1e300
                    if val >= bestval:  # children are newest first: >= keeps the oldest on ties
                        bestval = val
                        best = ch
                    break
            ch = tr.next_sibling[ch]
        if nexp < n:
            k = self.rng.next() % (n - nexp)
            for i in range(n):
                if self.found[i] == 0:
                    if k == 0:
                        ch = tr.new_node(node, codes[i], player)
                        tr.avail[ch] = 1
                        self.expanded = 1
                        return ch
                    k -= 1
        self.expanded = 0
        return best

    def _root_priors(self, d: Any, n: int) -> int:
        """The priors of the root's `n` legal decisions (`legbuf`) into `pri`, unless they are there
        already for the same decisions; whether the search game gives priors."""
        i = 0
        same = 1 if n == self.nroot else 0
        if same:
            for i in range(n):
                if self.rcodes[i] != self.legbuf[i]:
                    same = 0
                    break
        if not same:
            self.rootpri = self.game.priors(d, self.legbuf, n, self.pri)
            for i in range(n):
                self.rcodes[i] = self.legbuf[i]
            self.nroot = n
        return self.rootpri

    def _step_prior(self, node: int, codes: Any, n: int, player: int) -> int:
        """`step` with the priors `pri[0:n]` of `codes[0:n]`: PUCT-style (the module docstring)."""
        i = 0
        ch = 0
        mv = 0
        best = -1
        besti = -1
        val = 0.0
        bestval = -1e300
        rsum = 0.0
        vsum = 0
        fpu = 0.5
        tr = self.tree
        for i in range(n):
            self.found[i] = -1
        ch = tr.first_child[node]
        while ch != -1:
            mv = tr.move[ch]
            if self.widen > 0 and tr.player[ch] != player:
                ch = tr.next_sibling[ch]
                continue
            for i in range(n):
                if codes[i] == mv:
                    self.found[i] = ch
                    tr.avail[ch] += 1
                    rsum += tr.reward[ch]
                    vsum += tr.visits[ch]
                    break
            ch = tr.next_sibling[ch]
        if vsum > 0:
            fpu = rsum / vsum
        for i in range(n):
            ch = self.found[i]
            if ch >= 0:
                if tr.visits[ch] > 0:
                    val = tr.reward[ch] / tr.visits[ch]
                else:
                    val = fpu
                val += self.prior * self.pri[i] * math.sqrt(tr.avail[ch]) / (1 + tr.visits[ch])
            else:
                val = fpu + self.prior * self.pri[i] * math.sqrt(tr.visits[node] + 1)
            if val > bestval:  # ties: the first legal decision
                bestval = val
                best = ch
                besti = i
        if best < 0:
            best = tr.new_node(node, codes[besti], player)
            tr.avail[best] = 1
            self.expanded = 1
            return best
        self.expanded = 0
        return best

    def backup(self, rewards: Any, vps: Any) -> None:
        """Add one visit to every node of the current path (`self.path[0:plen]`, root first), and
        to each, the reward and the VP of the player who chose its decision."""
        tr = self.tree
        tr.visits[0] += 1
        for i in range(1, self.plen):
            nd = self.path[i]
            p = tr.player[nd]
            tr.visits[nd] += 1
            tr.reward[nd] += rewards[p]
            tr.vpsum[nd] += vps[p]

    def set_path(self, nodes: list[int]) -> None:
        """Set the path (root first) that `backup` walks."""
        self._ensure_path_cap(len(nodes) + 1)
        for i in range(len(nodes)):
            self.path[i] = nodes[i]
        self.plen = len(nodes)

    def _push_path(self, plen: int, node: int) -> int:
        """Append `node` to the descent path (growing it when full); the new length."""
        if plen >= self.pathcap:
            self.plen = plen
            self._ensure_path_cap(plen + 1)
        self.path[plen] = node
        return plen + 1

    def _budget_spent(self, done: int, iterations: int, deadline: float,
                      should_stop: Callable[[], bool] | None, progress: Callable[[int], None] | None) -> bool:
        """Whether to stop before another iteration: the iteration budget is used, the deadline
        has passed, or a stop was requested (asked, with a progress report, every 50 ms). Every
        YIELD_S the search lets go of the GIL for a moment, so that another thread of its process
        that waits for it (a health probe, a short request, a job's part) runs within a few ms."""
        if iterations > 0 and done >= iterations:
            return True
        if done > 0 and (deadline > 0.0 or should_stop is not None or progress is not None or done & 15 == 0):
            t = time.perf_counter()
            if t >= self.next_yield:
                self.next_yield = t + YIELD_S
                time.sleep(0)  # releases the GIL: a thread waiting for it takes it now
            if deadline > 0.0 and t >= deadline:
                return True
            if (should_stop is not None or progress is not None) and t >= self.next_poll:
                self.next_poll = t + 0.05
                if should_stop is not None and should_stop():
                    return True
                if progress is not None:
                    progress(done)
        return False

    def run(self, root: Any, observer: int, iterations: int, deadline: float,
            should_stop: Callable[[], bool] | None = None,
            progress: Callable[[int], None] | None = None) -> int:
        """Run iterations from `root`, for `observer`, until `iterations` are done (0: no limit) or
        `time.perf_counter()` reaches `deadline` (0: none) or `should_stop()` says so; returns how
        many were run (`progress(done)` is told every 50 ms)."""
        done = 0
        node = 0
        plen = 0
        n = 0
        k = 0
        game = self.game
        rng = self.rng
        tr = self.tree
        macro = self.macro if game.has_turns() else 0
        game.start(root)
        self.nroot = -1
        self.next_poll = time.perf_counter() + 0.05
        self.next_yield = time.perf_counter() + YIELD_S
        while not self._budget_spent(done, iterations, deadline, should_stop, progress):
            d = game.determinize(root, observer, rng.next() & 0x7FFFFFFF)
            node = 0
            self.path[0] = 0
            plen = 1
            while not game.is_terminal(d):
                if macro and plen > 1 and (game.within_turn(d) or (macro == 2 and game.current_player(d) != observer)):
                    if self.widen > 0 and tr.visits[node] >= self.widen:
                        # widening: a node visited often enough branches here, among the k greedy
                        # choices ranked first, k = sqrt(visits / widen)
                        k = int(math.sqrt(tr.visits[node] / self.widen))
                        n = game.greedy_rank(d, self.legbuf, k)
                        node = self.step(node, self.legbuf, n, game.current_player(d))
                        plen = self._push_path(plen, node)
                        game.apply(d, tr.move[node])
                        if self.expanded:
                            break
                        continue
                    game.play_greedy(d, rng)  # below the root, within a turn: the mover's greedy choice, no node
                    continue
                n = game.legal(d, self.legbuf)
                if n > self.legcap:
                    self._ensure_legal_cap(n)
                    n = game.legal(d, self.legbuf)
                if self.prior > 0.0 and plen == 1:
                    self.haspri = self._root_priors(d, n)
                node = self.step(node, self.legbuf, n, game.current_player(d))
                self.haspri = 0
                plen = self._push_path(plen, node)
                game.apply(d, tr.move[node])
                if self.expanded:
                    break
            self.plen = plen
            game.evaluate(d, rng)
            self.backup(game.rew, game.vps)
            done += 1
        self.iterations += done
        return done

    def root_stats(self) -> list[tuple[int, int, float, float]]:
        """(decision code, visits, reward sum, VP sum) of each root child, oldest first."""
        tr = self.tree
        return [(tr.move[ch], tr.visits[ch], tr.reward[ch], tr.vpsum[ch]) for ch in tr.children(0)]

    def principal_line(self, max_len: int = 24) -> list[int]:
        """The expected line: most visited child after most visited child."""
        tr = self.tree
        line: list[int] = []
        node = 0
        while len(line) < max_len:
            kids = tr.children(node)
            if not kids:
                break
            best = max(kids, key=lambda k: (tr.visits[k], tr.reward[k]))
            if tr.visits[best] < 2 and line:
                break
            line.append(tr.move[best])
            node = best
        return line
