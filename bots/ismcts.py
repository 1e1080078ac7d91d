# cython: annotation_typing=False
"""Single-observer information-set MCTS (SO-ISMCTS; Cowling, Powley and Whitehouse 2012).

One tree of information sets, seen from the searching player (the *observer*, the player to move
at the root). Every iteration:

1. **Determinize**: sample a full state consistent with what the observer knows
   (`state.determinize(observer, seed)`); the true hidden order is never read.
2. **Select**: from the root, while every decision legal in this determinization already has a
   child, go to the child maximising UCB with *availability* counts::

       mean_reward(child) + c * sqrt(ln(avail(child)) / visits(child))

   where `avail(child)` counts the iterations in which the child's decision was legal when its
   parent was reached (not the parent's visits: a decision that is rarely legal must not be
   over-explored). Every compatible child's availability is counted on the way.
3. **Expand**: one random decision legal here that has no child yet gets a node.
4. **Evaluate**: either a random playout to the end (`rollout="playout"`), or up to `depth`
   random decisions (`rollout="eval"`) or epsilon-greedy decisions (`rollout="greedy"`: the mover
   takes the decision whose result it values most, a random one with probability `eps`), or the
   rest of the current turn played epsilon-greedily (`rollout="turn"`: the leaf is valued at a
   turn's end, never halfway through one), and then the heuristic evaluator; the result is a
   reward vector with one entry per seat (`bots.evaluate`).
5. **Back up**: each node on the path adds the reward *of the player who chose its decision*
   (the player to move at its parent) -- so `mean_reward` of a node is always from the point of
   view of the player who decides between it and its siblings; this is what makes the one tree
   right for 2, 3 and 4 players.

With `macro` set, the tree branches only on what starts a turn (which card, which of its actions)
and on every decision at the root: below the root, the decisions within a turn (a resource to
take, a contract to fulfil...) are the mover's greedy choices, made in the simulation without
nodes. The tree then reaches whole turns deeper for the same budget. With `macro=2` the other
seats' whole turns below the root are greedy too (the tree holds only the searcher's own turns: a
greedy model of the opponents). `rollout="turn"` and `macro` need Kashgar engine states (other
games take the random `depth` decisions).

With `observe` set (Kashgar states only), a node's children below the root are also keyed by what
the observer has seen at that point (`Search.observation`: where every card and contract is, as far
as the observer can tell), so that each node is one of the observer's information sets: worlds in
which the same decisions drew or revealed different cards go on in different subtrees (1: before
every decision; 2: before the observer's own). Off by default: in Kashgar, where what is drawn is
seen at once, the split tree played level with the merged one at about a third of its speed
(BENCHMARKS.md).

The tree lives in flat typed arrays (one index per node: decision code, chooser, parent, first
child, next sibling, visits, availability, observation key, reward sum, VP sum). This same file
compiles as `bots.ismcts_c` (see `ismcts_c.pxd`), where the arrays are C memoryviews and the loop
runs without per-node Python objects. The budget (iterations and/or a wall-clock deadline) is checked
inside the loop, every iteration, so compiled code stops on time without signals.
"""

from __future__ import annotations

import array
import math
import time
from collections.abc import Callable
from typing import Any

try:
    import cython
except ImportError:  # interpreted, without Cython installed
    from engine_ext import cython_shim as cython  # type: ignore[no-redef]

MASK64 = 0xFFFFFFFFFFFFFFFF
ROLL_EVAL = 0
ROLL_PLAYOUT = 1
ROLL_GREEDY = 2
ROLL_TURN = 3
NO_NODE = -1  # (written as -1 in the code so that the compiled loop compares C ints)
FIXED_FEATURES = 8  # features before the per-card-kind counts (bots.features.FEATURES)
MAX_FEATURES = 72  # FIXED_FEATURES + the engine's 64 card kinds at most


def ucb_value(reward_sum: float, visits: int, avail: int, c: float) -> float:
    """UCB1 with availability counts: the score that selection maximises (visits >= 1)."""
    mean = reward_sum / visits
    if avail < 1:
        avail = 1
    return mean + c * math.sqrt(math.log(avail) / visits)


def fnv_mix(h: int, v: int) -> int:
    """One step of the FNV-1a hash (64 bits): `h` with `v` mixed in."""
    return ((h ^ v) * 0x100000001B3) & MASK64


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


def _int_array(n: int) -> array.array:  # type: ignore[type-arg]
    return array.array("i", bytes(4 * n))


def _dbl_array(n: int) -> array.array:  # type: ignore[type-arg]
    return array.array("d", bytes(8 * n))


class Tree:
    """The search tree as parallel flat arrays; node 0 is the root."""

    def __init__(self, capacity: int = 1024) -> None:
        self.size = 0
        self.cap = 0
        self._grow(max(capacity, 16))
        self.new_node(-1, -1, -1)

    def _grow(self, cap: int) -> None:
        names = ("move", "player", "parent", "first_child", "next_sibling", "visits", "avail", "obs")
        old_i = [getattr(self, "_a_" + nm, None) for nm in names]
        old_r = getattr(self, "_a_reward", None)
        old_v = getattr(self, "_a_vpsum", None)
        new_i = [_int_array(cap) for _ in names]
        new_r = _dbl_array(cap)
        new_v = _dbl_array(cap)
        n = self.size
        if n:
            for a, b in zip(new_i, old_i, strict=False):
                a[:n] = b[:n]  # type: ignore[index]
            new_r[:n] = old_r[:n]  # type: ignore[index]
            new_v[:n] = old_v[:n]  # type: ignore[index]
        self._a_move, self._a_player, self._a_parent, self._a_first_child, self._a_next_sibling, \
            self._a_visits, self._a_avail, self._a_obs = new_i
        self._a_reward = new_r
        self._a_vpsum = new_v
        self.move = new_i[0]
        self.player = new_i[1]
        self.parent = new_i[2]
        self.first_child = new_i[3]
        self.next_sibling = new_i[4]
        self.visits = new_i[5]
        self.avail = new_i[6]
        self.obs = new_i[7]
        self.reward = new_r
        self.vpsum = new_v
        self.cap = cap

    def new_node(self, parent: int, move: int, player: int, obs: int = 0) -> int:
        """Add a child of `parent` for decision `move` chosen by `player` after observation `obs`
        (0: none); returns its index."""
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
        self.obs[k] = obs
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
        return self.cap * (8 * 4 + 2 * 8)


class Search:
    """The search core: one tree, one RNG, the loop. `bots.ismcts.ISMCTSBot` wraps it as a Bot."""

    def __init__(self, c: float = 0.7, rollout: int = ROLL_EVAL, depth: int = 8, scale: float = 0.35,
                 seed: int = 0, capacity: int = 1024) -> None:
        self.c = c
        self.rollout = rollout
        self.depth = depth
        self.scale = scale
        self.tree = Tree(capacity)
        self.rs = (seed * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) & MASK64
        if self.rs == 0:
            self.rs = 0x2545F4914F6CDD1D
        self.iterations = 0
        self.nplayers = 0
        self.legcap = 64
        self.pathcap = 64
        self._leg = _int_array(64)
        self._found = _int_array(64)
        self._path = _int_array(64)
        self.legbuf = self._leg
        self.found = self._found
        self.path = self._path
        self._rew = _dbl_array(8)
        self._vps = _dbl_array(8)
        self._vals = _dbl_array(8)
        self.rew = self._rew
        self.vps = self._vps
        self.vals = self._vals
        self.o_res = self.o_disp = self.s_disp_n = self.s_players = self.s_turn = self.s_phase = 0
        self.o_ncar = self.o_car = self.o_nxt = self.o_flip = 0
        self.o_loc = self.o_known = self.o_cloc = self.o_cknown = self.ncards = self.ncon = 0
        self.l_std = self.l_spc = self.l_limbo = self.cl_deck = self.cl_limbo = self.s_limbo_src = self.deck_std = 0
        self.s_limbo_n = self.s_pend = self.s_decider = self.o_limbo = self.deck_con = 0
        self._w = _dbl_array(4 * MAX_FEATURES)  # leaf weights (a, b), then the greedy rollouts' (a, b)
        self._f = _dbl_array(MAX_FEATURES)
        self.w = self._w
        self.f = self._f
        self.nfeat = 0
        self.plen = 0
        self.next_poll = 0.0
        self.expanded = 0
        self.fixed = 0  # 1: perfect-information UCT on the root state itself (determinized baseline)
        self.eps = 0.1  # rollout="greedy": the chance of a random decision instead of the greedy one
        self.macro = 0  # 1: decisions within a turn below the root are greedy; 2: other seats' whole turns too
        self.observe = 0  # 1: below the root, children are keyed by what the observer has seen too
        self.tree_depth = 0  # > 0: the tree holds at most this many decisions on a path (then the rollout)
        self.tempo = 0.0  # leaf value added for each seat whose turn of the round is still to come
        self.s_start = self.s_turnpl = 0
        self.scratch: Any = None

    def rand(self) -> int:
        """xorshift64*: the next 64-bit pseudo-random number."""
        x = self.rs
        x ^= x >> 12
        x ^= (x << 25) & MASK64
        x ^= x >> 27
        self.rs = x
        return (x * 0x2545F4914F6CDD1D) & MASK64

    def _ensure_legal_cap(self, n: int) -> None:
        if n > self.legcap:
            m = max(n, 2 * self.legcap)
            self._leg = _int_array(m)
            self._found = _int_array(m)
            self.legbuf = self._leg
            self.found = self._found
            self.legcap = m

    def _ensure_path_cap(self, n: int) -> None:
        if n > self.pathcap:
            new = _int_array(max(n, 2 * self.pathcap))
            new[: self.plen] = self._path[: self.plen]
            self._path = new
            self.path = new
            self.pathcap = len(new)

    def step(self, node: int, codes: list[int], player: int, key: int = 0) -> int:
        """One selection or expansion step at `node` for the legal `codes` of this determinization,
        after observation `key` (children added after another observation are not compatible).

        Counts availability of every compatible child; if some legal decision has no compatible
        child yet, adds one for a random such decision (`self.expanded` = 1) and returns it;
        otherwise returns the compatible child of highest UCB (ties: the oldest).
        """
        n = len(codes)
        i = 0
        self._ensure_legal_cap(n)
        for i in range(n):
            self.legbuf[i] = codes[i]
        return self._step_buf(node, n, player, key)

    def _step_buf(self, node: int, n: int, player: int, key: int) -> int:
        """`step` on the first `n` codes of `self.legbuf`."""
        i = 0
        k = 0
        ch = 0
        mv = 0
        nexp = 0
        best = -1
        val = 0.0
        bestval = -1e300
        tr = self.tree
        for i in range(n):
            self.found[i] = 0
        ch = tr.first_child[node]
        while ch != -1:
            if tr.obs[ch] != key:
                ch = tr.next_sibling[ch]
                continue
            mv = tr.move[ch]
            for i in range(n):
                if self.legbuf[i] == mv:
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
            k = self.rand() % (n - nexp)
            for i in range(n):
                if self.found[i] == 0:
                    if k == 0:
                        ch = tr.new_node(node, self.legbuf[i], player, key)
                        tr.avail[ch] = 1
                        self.expanded = 1
                        return ch
                    k -= 1
        self.expanded = 0
        return best

    def backup(self) -> None:
        """Add one visit, and the reward of its chooser, to every node of the current path."""
        tr = self.tree
        tr.visits[0] += 1
        for i in range(1, self.plen):
            nd = self.path[i]
            p = tr.player[nd]
            tr.visits[nd] += 1
            tr.reward[nd] += self.rew[p]
            tr.vpsum[nd] += self.vps[p]

    def set_rewards(self, rewards: list[float], vps: list[float]) -> None:
        """Set the reward and VP vectors that `backup` adds (used by tests and by `run`)."""
        for i in range(len(rewards)):
            self.rew[i] = rewards[i]
            self.vps[i] = vps[i]

    def set_path(self, nodes: list[int]) -> None:
        """Set the path (root first) that `backup` walks."""
        self._ensure_path_cap(len(nodes) + 1)
        for i in range(len(nodes)):
            self.path[i] = nodes[i]
        self.plen = len(nodes)

    def _evaluate(self, d: Any, evaluator: Any) -> None:
        n = self.nplayers
        if not d.is_terminal():
            if self.rollout == ROLL_PLAYOUT:
                d.playout(self.rand() & 0x7FFFFFFF)
            else:
                for _k in range(self.depth):
                    if d.is_terminal():
                        break
                    codes = d.legal_codes()
                    nl = len(codes)
                    d.apply_unchecked(codes[self.rand() % nl])
        if d.is_terminal():
            w = d.winner()
            for p in range(n):
                self.rew[p] = 1.0 if p == w else 0.0
                self.vps[p] = d.vp(p)
        else:
            softmax_into(evaluator.values(d), self.scale, self.rew, n)
            for p in range(n):
                self.vps[p] = d.vp(p)

    def run(self, root: Any, observer: int, iterations: int, deadline: float, evaluator: Any,
            should_stop: Callable[[], bool] | None = None,
            progress: Callable[[int], None] | None = None) -> int:
        """Run iterations until `iterations` are done (0: no limit) or `time.perf_counter()`
        reaches `deadline` (0: none) or `should_stop()` says so; returns how many were run.

        Engine states (`engine_ext` core) take the fast path: legal decisions read straight from
        the state's buffer and the Kashgar heuristic computed here on the state array (C code in
        the compiled build when the engine is compiled too). Any other state (the toy game, or the
        interpreted engine under the compiled search) goes through its Python methods.
        """
        if self._engine_ok(root, evaluator):
            self._setup_engine(root, evaluator)
            return self._run_engine(root, observer, iterations, deadline, should_stop, progress)
        return self._run_generic(root, observer, iterations, deadline, evaluator, should_stop, progress)

    def _engine_ok(self, root: Any, evaluator: Any) -> bool:
        if getattr(evaluator, "engine_weights", None) is None:
            return False
        if cython.compiled:
            return isinstance(root, CState)  # type: ignore[name-defined]  # noqa: F821 - cimported in ismcts_c.pxd
        return hasattr(root, "d") and hasattr(root, "legal_buf") and hasattr(root, "R")

    def _setup_engine(self, root: Any, evaluator: Any) -> None:
        roll = getattr(evaluator, "rollout_weights", None)
        self.set_weights(evaluator.engine_weights(), roll() if roll is not None else None)

    def _load_layout(self) -> None:
        """The engine's state-array offsets the features read (once per search core)."""
        if self.o_car:
            return
        from engine_ext import core as core_py  # the offsets (the compiled module has them as C ints)

        lay = core_py.layout()
        self.o_res = lay["O_RES"]
        self.o_disp = lay["O_DISP"]
        self.s_disp_n = lay["S_DISP_N"]
        self.s_players = lay["S_PLAYERS"]
        self.s_turn = lay["S_TURN"]
        self.s_phase = lay["S_PHASE"]
        self.s_start = lay["S_START"]
        self.s_turnpl = lay["S_TURNPL"]
        self.o_ncar = lay["O_NCAR"]
        self.o_car = lay["O_CAR"]
        self.o_nxt = lay["O_NXT"]
        self.o_flip = lay["O_FLIP"]
        self.o_loc = lay["O_LOC"]
        self.o_known = lay["O_KNOWN"]
        self.o_cloc = lay["O_CLOC"]
        self.o_cknown = lay["O_CKNOWN"]
        self.ncards = lay["O_NXT"] - lay["O_LOC"]
        self.ncon = lay["O_CKNOWN"] - lay["O_CLOC"]
        self.l_std = lay["L_STD"]
        self.l_limbo = lay["L_LIMBO"]
        self.l_spc = lay["L_SPC"]
        self.cl_deck = lay["CL_DECK"]
        self.cl_limbo = lay["CL_LIMBO"]
        self.s_limbo_src = lay["S_LIMBO_SRC"]
        self.s_limbo_n = lay["S_LIMBO_N"]
        self.o_limbo = lay["O_LIMBO"]
        self.deck_con = core_py.DECK_CONTRACT
        self.s_pend = lay["S_PEND"]
        self.s_decider = lay["S_DECIDER"]
        self.deck_std = core_py.DECK_STANDARD

    def set_weights(self, weights: Any, rollout_weights: Any = None) -> None:
        """The evaluation's weights: `a` then `b`, one of each per feature (see `features`); the value
        of a seat is sum_i (a_i + b_i * t) * f_i, t = the game's progress (`progress`). The greedy
        rollouts choose by `rollout_weights` (default: the same weights)."""
        self._load_layout()
        if rollout_weights is None:
            rollout_weights = weights
        n = len(weights) // 2
        if len(weights) != 2 * n or n > MAX_FEATURES or len(rollout_weights) != 2 * n:
            raise ValueError(f"want 2 x (at most {MAX_FEATURES}) weights, got {len(weights)} and "
                             f"{len(rollout_weights)}")
        self.nfeat = n
        for i in range(n):
            self.w[i] = weights[i]
            self.w[MAX_FEATURES + i] = weights[n + i]
            self.w[2 * MAX_FEATURES + i] = rollout_weights[i]
            self.w[3 * MAX_FEATURES + i] = rollout_weights[n + i]

    def _features(self, d: Any, p: int) -> None:
        """Fill `self.f` with seat `p`'s features (the order of `bots.features.FEATURES`)."""
        r = self.o_res + p * 7
        k = 0
        i = 0
        c = 0
        car = 0
        card = 0
        _k = 0
        need = 0
        have = 0
        covered = 0
        total = 0
        best = 0.0
        reach = 0.0
        x = 0.0
        R = d.R
        for i in range(FIXED_FEATURES + R.nkinds):
            self.f[i] = 0.0
        self.f[0] = d.vp(p)
        for k in range(5):
            have = d.d[r + k]
            self.f[1] += have if have < 7 else 7
        have = d.d[r + 5]
        self.f[2] = have if have < 7 else 7
        have = d.d[r + 6]
        self.f[3] = have if have < 5 else 5
        for i in range(d.d[self.s_disp_n]):
            c = d.d[self.o_disp + i]
            covered = 0
            total = 0
            for k in range(6):
                need = R.con_cost[c * 7 + k]
                have = d.d[r + k]
                total += need
                covered += need if have >= need else have
            need = R.con_mules[c]
            if R.con_cost[c * 7 + 6] > need:
                need = R.con_cost[c * 7 + 6]
            have = d.d[r + 6]
            total += need
            covered += need if have >= need else have
            if total > 0:
                x = covered * 1.0 / total  # a C double division (the build sets cdivision)
                x = R.con_vp[c] * x * x
                reach += x
                if x > best:
                    best = x
        self.f[4] = best
        self.f[5] = reach
        self.f[6] = d.d[self.o_ncar + p]
        for i in range(d.d[self.o_ncar + p]):
            car = p * 4 + i
            self.f[7] += d.d[self.o_car + car * 3 + 2]
            card = d.d[self.o_car + car * 3]
            for _k in range(d.d[self.o_car + car * 3 + 2]):
                c = R.ckind[card]
                if c == R.k_patriarch and d.d[self.o_flip + card]:
                    c = R.k_matriarch
                self.f[FIXED_FEATURES + c] += 1.0
                card = d.d[self.o_nxt + card]

    def progress(self, d: Any) -> float:
        """How far the game is: the leader's VP / 25, at most 1."""
        p = 0
        best = 0
        self._load_layout()
        for p in range(d.d[self.s_players]):
            if d.vp(p) > best:
                best = d.vp(p)
        return best / 25.0 if best < 25 else 1.0

    def features(self, d: Any, p: int) -> list[float]:
        """Seat `p`'s features of state `d` (an engine state of this build), as a list."""
        self._load_layout()
        self._features(d, p)
        return [self.f[i] for i in range(FIXED_FEATURES + d.R.nkinds)]

    def heuristic(self, d: Any, p: int) -> float:
        """Seat `p`'s value: sum_i (a_i + b_i * t) * f_i over its features (`set_weights`)."""
        return self._value(d, p, self.progress(d), 0)

    def _value(self, d: Any, p: int, t: float, base: int) -> float:
        """The value with the leaf weights (`base` 0) or the rollouts' (`base` 2 * MAX_FEATURES)."""
        i = 0
        v = 0.0
        self._features(d, p)
        for i in range(self.nfeat):
            v += (self.w[base + i] + self.w[base + MAX_FEATURES + i] * t) * self.f[i]
        return v

    def _greedy_choice(self, d: Any, n: int) -> int:
        """The index (in `d.legal_buf[0:n]`) of the decision after which the mover's own heuristic
        value is highest (ties broken at random), tried on the scratch state."""
        i = 0
        best = 0
        ties = 0
        v = 0.0
        bestv = -1e300
        me = d.current_player()
        t = self.progress(d)
        sc = self.scratch
        for i in range(n):
            sc.copy_from(d)
            sc.apply_unchecked(d.legal_buf[i])
            v = self._value(sc, me, t, 2 * MAX_FEATURES)
            if v > bestv + 1e-12:
                bestv = v
                best = i
                ties = 1
            elif v > bestv - 1e-12:
                ties += 1
                if self.rand() % ties == 0:
                    best = i
        return best

    def _rollout_step(self, d: Any, greedy: int) -> None:
        """One rollout decision on `d`: random, or (`greedy`) the mover's greedy choice except with
        probability `eps`."""
        n = d.gen_legal()
        if greedy and n > 1 and self.rand() % 1000000 >= self.eps * 1000000:
            d.apply_unchecked(d.legal_buf[self._greedy_choice(d, n)])
        else:
            d.apply_unchecked(d.legal_buf[self.rand() % n])

    def _leaf_rewards(self, d: Any, np_: int) -> None:
        """`self.rew` and `self.vps` for state `d`: 1/0 by the winner at the end of the game, else
        the softmax of the seats' heuristic values times `scale`, each seat whose turn of this round
        is still to come (or under way) valued `tempo` more: a leaf after the start player's turn
        has not yet seen the others' replies of that round (the game ends only with a whole round)."""
        p = 0
        w = 0
        m = -1e300
        sm = 0.0
        t = 0.0
        if d.is_terminal():
            w = d.winner()
            for p in range(np_):
                self.rew[p] = 1.0 if p == w else 0.0
                self.vps[p] = d.vp(p)
            return
        t = self.progress(d)
        st = d.d[self.s_start]
        now = (d.d[self.s_turnpl] - st + np_) % np_  # the place in the round of the seat whose turn it is
        for p in range(np_):
            self.vals[p] = self.scale * self._value(d, p, t, 0)
            if self.tempo != 0.0 and (p - st + np_) % np_ >= now:  # its turn of the round is to come
                self.vals[p] += self.scale * self.tempo
            if self.vals[p] > m:
                m = self.vals[p]
            self.vps[p] = d.vp(p)
        for p in range(np_):
            self.rew[p] = math.exp(self.vals[p] - m)
            sm += self.rew[p]
        for p in range(np_):
            self.rew[p] = self.rew[p] / sm

    def leaf_rewards(self, d: Any) -> list[float]:
        """The rewards per seat that the search backs up from leaf state `d` (`_leaf_rewards`)."""
        self._load_layout()
        np_ = d.d[self.s_players]
        self._leaf_rewards(d, np_)
        return [self.rew[p] for p in range(np_)]

    def _budget_spent(self, done: int, iterations: int, deadline: float,
                      should_stop: Callable[[], bool] | None, progress: Callable[[int], None] | None) -> bool:
        """Whether to stop before another iteration: the iteration budget is used, the deadline
        has passed, or a stop was requested (asked, with a progress report, every 50 ms)."""
        if iterations > 0 and done >= iterations:
            return True
        if done > 0 and (deadline > 0.0 or should_stop is not None or progress is not None):
            t = time.perf_counter()
            if deadline > 0.0 and t >= deadline:
                return True
            if t >= self.next_poll:
                self.next_poll = t + 0.05
                if should_stop is not None and should_stop():
                    return True
                if progress is not None:
                    progress(done)
        return False

    def observation(self, d: Any, observer: int) -> int:
        """A key (1 .. 2**30) of what `observer` can see of where the cards and contracts of
        engine state `d` are, and of who waits for which kind of decision. Hidden (one value for
        all): every card in the Standard deck, and a card or contract in the Special or Contract
        deck, or drawn from one of them, that the observer has not seen (cards drawn from the
        Standard deck are shown to all). Determinizations of one information set get one key;
        those that the same decisions led apart (different cards drawn or revealed) get
        different keys, with a 64-bit hash."""
        i = 0
        v = 0
        car = 0
        card = 0
        _k = 0
        h = 0x84222325
        x = 0
        sm = 0
        R = d.R
        self._load_layout()
        secret = d.d[self.s_limbo_src] != self.deck_std  # drawn cards only their drawer sees
        # who decides what (a step may wait for a decision in one world and not in another)
        h = fnv_mix(h, d.d[self.s_phase])
        h = fnv_mix(h, d.d[self.s_pend])
        h = fnv_mix(h, d.d[self.s_decider])
        h = fnv_mix(h, d.d[self.s_limbo_n])
        # the caravans in order, by card kind (two copies of a kind look the same)
        for car in range(4 * d.d[self.s_players]):
            card = d.d[self.o_car + car * 3]
            for _k in range(d.d[self.o_car + car * 3 + 2]):
                h = fnv_mix(h, R.ckind[card] * 2 + d.d[self.o_flip + card] + 1)
                card = d.d[self.o_nxt + card]
            h = fnv_mix(h, 0xFFFF)
        # the drawn cards in order, when the observer sees them
        if d.d[self.s_limbo_src] != self.deck_con:
            for i in range(d.d[self.s_limbo_n]):
                card = d.d[self.o_limbo + i]
                if not secret or ((d.d[self.o_known + card] >> observer) & 1):
                    h = fnv_mix(h, R.ckind[card] + 1)
        # every other card: how many of each kind are where (an order-free sum)
        for i in range(self.ncards):
            v = d.d[self.o_loc + i]
            if v < self.l_std or v == self.l_limbo and not secret:
                continue
            if v == self.l_std or ((v == self.l_spc or v == self.l_limbo)
                                   and not ((d.d[self.o_known + i] >> observer) & 1)):
                v = 255
            x = fnv_mix(0, R.ckind[i] * 256 + v + 1)
            x = fnv_mix(0, x ^ (x >> 29))
            sm = (sm + (x ^ (x >> 32))) & MASK64
        h = fnv_mix(h, sm)
        for i in range(self.ncon):
            v = d.d[self.o_cloc + i]
            if (v == self.cl_deck or v == self.cl_limbo) and not ((d.d[self.o_cknown + i] >> observer) & 1):
                v = 255
            h = fnv_mix(h, v + 256)
        return (h >> 34) + 1

    def _push_path(self, plen: int, node: int) -> int:
        """Append `node` to the descent path (growing it when full); the new length."""
        if plen >= self.pathcap:
            self.plen = plen
            self._ensure_path_cap(plen + 1)
        self.path[plen] = node
        return plen + 1

    def _run_engine(self, root: Any, observer: int, iterations: int, deadline: float,
                    should_stop: Callable[[], bool] | None,
                    progress: Callable[[int], None] | None) -> int:
        done = 0
        node = 0
        plen = 0
        n = 0
        i = 0
        key = 0
        self.next_poll = time.perf_counter() + 0.05
        tr = self.tree
        np_ = root.d[self.s_players]
        self.nplayers = np_
        if (self.rollout >= 2 or self.macro) and self.scratch is None:
            self.scratch = root.clone()
        while not self._budget_spent(done, iterations, deadline, should_stop, progress):
            if self.fixed:
                d = root.clone()
            else:
                d = root.determinize(observer, self.rand() & 0x7FFFFFFF)
            node = 0
            self.path[0] = 0
            plen = 1
            while not d.is_terminal():
                n = d.gen_legal()
                if self.macro and plen > 1 and (d.d[self.s_phase] == 1
                                                 or (self.macro == 2 and d.current_player() != observer)):
                    # within a turn, below the root: the mover's greedy choice, no tree node
                    d.apply_unchecked(d.legal_buf[self._greedy_choice(d, n) if n > 1 else 0])
                    continue
                if self.tree_depth and plen > self.tree_depth:
                    break
                if n > self.legcap:
                    self._ensure_legal_cap(n)
                for i in range(n):
                    self.legbuf[i] = d.legal_buf[i]
                key = 0
                if self.observe and plen > 1 and (self.observe == 1 or d.current_player() == observer):
                    key = self.observation(d, observer)
                node = self._step_buf(node, n, d.current_player(), key)
                plen = self._push_path(plen, node)
                d.apply_unchecked(tr.move[node])
                if self.expanded:
                    break
            self.plen = plen
            # evaluate: a few random or greedy decisions, then the heuristic (or the end of the game)
            if self.rollout == 1 and not d.is_terminal():
                d.playout(self.rand() & 0x7FFFFFFF)
            elif self.rollout == 3:
                turn = d.d[self.s_turn]
                while not d.is_terminal() and d.d[self.s_turn] == turn:
                    self._rollout_step(d, 1)
            else:
                for _k in range(self.depth):
                    if d.is_terminal():
                        break
                    self._rollout_step(d, self.rollout == 2)
            self._leaf_rewards(d, np_)
            self.backup()
            done += 1
        self.iterations += done
        return done

    def _run_generic(self, root: Any, observer: int, iterations: int, deadline: float, evaluator: Any,
                     should_stop: Callable[[], bool] | None,
                     progress: Callable[[int], None] | None) -> int:
        done = 0
        self.next_poll = time.perf_counter() + 0.05
        tr = self.tree
        self.nplayers = root.players
        while not self._budget_spent(done, iterations, deadline, should_stop, progress):
            if self.fixed:
                d = root.clone()
            else:
                d = root.determinize(observer, self.rand() & 0x7FFFFFFF)
            node = 0
            self.path[0] = 0
            plen = 1
            while not d.is_terminal():
                if self.tree_depth and plen > self.tree_depth:
                    break
                node = self.step(node, d.legal_codes(), d.current_player(), 0)
                plen = self._push_path(plen, node)
                d.apply_unchecked(tr.move[node])
                if self.expanded:
                    break
            self.plen = plen
            self._evaluate(d, evaluator)
            self.backup()
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
