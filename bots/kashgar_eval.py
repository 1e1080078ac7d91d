# cython: annotation_typing=False
"""Kashgar as the search (`bots.ismcts.Search`) sees it, `KashgarSearchGame`: everything the loop needs that
is Kashgar's, computed on the engine's state array.

- the engine's hooks: a world sampled from what the observer knows (`State.determinize`), legal
  decisions from the state's own buffer, `apply_unchecked`;
- the features of a seat (`bots.features`: VP, capped resources, contracts in reach, caravans and
  the cards in them) and its value, linear in them: sum_i (a_i + b_i * t) * f_i, t the game's
  progress (the leader's VP / the engine's END_VP, at most 1);
- the greedy choice (the decision after which the mover's own value, by the rollout weights, is
  highest) that plays the turns of the macro search and the "turn" rollout;
- the rollout and the leaf's rewards: `depth` random decisions ("eval") or the rest of the current
  turn epsilon-greedily ("turn"), then 1/0 by the winner at the game's end, else the softmax of
  the seats' values times `scale`.

This same file compiles as `bots.kashgar_eval_c` (see `kashgar_eval_c.pxd`): a subclass of the
compiled search's `SearchGame` whose methods the compiled loop calls through the C vtable, on
compiled engine states read as C structs. Interpreted, it runs on interpreted engine states.
"""

from __future__ import annotations

import math
from typing import Any

try:
    import cython
except ImportError:  # interpreted, without Cython installed
    from engine_ext import cython_shim as cython  # type: ignore[no-redef]

if not cython.compiled:  # compiled, the base class is cimported from bots.ismcts_c (kashgar_eval_c.pxd)
    from bots.ismcts import Rng, SearchGame, double_array, int_array

ROLLOUTS = ("eval", "turn")  # `depth` random decisions, or the rest of the turn epsilon-greedily; then the value
ROLL_EVAL = 0
ROLL_TURN = 1
FIXED_FEATURES = 8  # features before the per-card-kind counts (bots.features.FIXED)
MAX_FEATURES = 72  # FIXED_FEATURES + the engine's 64 card kinds at most
# The learned model's input (bots.learned.MODEL_SEAT, MODEL_GLOBAL): a block per seat (the seat's
# own, then the others in turn order after it, padded to 3), then what is the table's.
SEAT_FIXED = 24  # a seat block's scalars, then its card kinds in caravans, then how soon each comes round
GLOBAL_FIXED = 13  # the table's scalars, then each card kind's count in the Standard and Special decks
MAX_KINDS = 64
MAX_BLOCK = SEAT_FIXED + 2 * MAX_KINDS
MAX_HIDDEN = 256  # units per hidden layer at most
MAX_LAYERS = 4  # weight layers at most
MAX_DISPLAY = 8  # face-up contracts at most (the engine shows 4)
# The learned policy's input for one decision (bots.policy.policy_feature_names): the change the
# decision makes to the mover's seat block (`_seat_block`), that of its linear features times the
# game's progress, the change of the mover's greedy value and of the other seats' summed, the
# decision's kind and its select option (one-hot), and whether the mover's turn goes on after it.
POLICY_KINDS = 9  # the engine's decision kinds (K_SELECT = 1 .. K_ROUTE = 9)
POLICY_OPTIONS = 4  # a select's options (OPT_A .. OPT_PASS)
POLICY_EXTRA = 2 + POLICY_KINDS + POLICY_OPTIONS + 1
MAX_POLICY = MAX_BLOCK + FIXED_FEATURES + POLICY_EXTRA
POL_OFF = 4 * MAX_BLOCK + GLOBAL_FIXED + MAX_KINDS  # in `blk`: the mover's block before, then after


class KashgarSearchGame(SearchGame):
    """Kashgar engine states, valued by weights (`a` then `b` per feature, `bots.features`; none:
    every value 0, for the features alone); the greedy choices use `rollout_weights` (default: the
    same weights)."""

    def __init__(self, weights: Any = (), rollout_weights: Any = None, scale: float = 1.0, rollout: str = "eval",
                 depth: int = 8, eps: float = 0.1) -> None:
        SearchGame.__init__(self, None, scale, depth)
        if rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, not {rollout!r}")
        self.rollout = ROLLOUTS.index(rollout)
        self.eps = eps  # rollout "turn": the chance of a random decision instead of the greedy one
        self.scratch: Any = None
        self._w = double_array(4 * MAX_FEATURES)  # the leaf's weights (a, b), then the greedy choices' (a, b)
        self._f = double_array(MAX_FEATURES)
        self._vals = double_array(8)
        self._rv = double_array(64)  # greedy_rank's values, one per legal decision
        self.rv = self._rv
        self.w = self._w
        self.f = self._f
        self.vals = self._vals
        self.nfeat = 0
        self._miss = int_array(MAX_DISPLAY)  # `_features`: units each face-up contract lacks for the seat
        self.miss = self._miss
        self._blk = double_array(POL_OFF + 2 * MAX_BLOCK)  # every seat's block, the table's; the policy's two
        self._hid = double_array(2 * MAX_HIDDEN)
        self._mw = double_array(1)
        self._lsz = int_array(MAX_LAYERS + 1)
        self.blk = self._blk
        self.hid = self._hid
        self.mw = self._mw
        self.lsz = self._lsz
        self.nlayers = 0  # 0: no model (the linear value); else weight layers of the learned model
        self.blend = 0.0  # with a model: a leaf's value is its logit + blend x the linear value
        self.bsize = 0
        self._pw = double_array(MAX_POLICY)  # the learned policy's weights, one per input
        self._pf = double_array(MAX_POLICY)  # one decision's input
        self._ps = double_array(64)  # the scores of the legal decisions
        self.pw = self._pw
        self.pf = self._pf
        self.ps = self._ps
        self.npol = 0  # 0: no policy (the greedy choices); else the policy's inputs
        self.ptemp = 0.0  # 0: the policy's best decision; > 0: sampled by softmax(score / ptemp)
        self.pbelow = 1  # 1: the policy plays the choices below the root; 0: it is only the root's prior
        self._load_layout()
        self.set_weights(weights, rollout_weights)

    def _load_layout(self) -> None:
        """The engine's state-array offsets that the features read."""
        from engine_ext import core as core_py  # the offsets (the compiled module has them as C ints)

        lay = core_py.layout()
        self.o_res = lay["O_RES"]
        self.o_disp = lay["O_DISP"]
        self.s_disp_n = lay["S_DISP_N"]
        self.s_players = lay["S_PLAYERS"]
        self.s_turn = lay["S_TURN"]
        self.s_phase = lay["S_PHASE"]
        self.o_ncar = lay["O_NCAR"]
        self.o_car = lay["O_CAR"]
        self.o_nxt = lay["O_NXT"]
        self.o_flip = lay["O_FLIP"]
        self.ph_effect = core_py.PH_EFFECT
        self.s_start = lay["S_START"]
        self.s_turnpl = lay["S_TURNPL"]
        self.s_turnlim = lay["S_TURNLIM"]
        self.s_endtrig = lay["S_ENDTRIG"]
        self.s_std_n = lay["S_STD_N"]
        self.s_spc_n = lay["S_SPC_N"]
        self.s_con_n = lay["S_CON_N"]
        self.s_disc_n = lay["S_DISC_N"]
        self.o_pl = lay["O_PL"]
        self.o_loc = lay["O_LOC"]
        self.l_std = lay["L_STD"]
        self.l_spc = lay["L_SPC"]
        self.pl_ncon = lay["PL_NCON"]
        self.pl_nwheat = lay["PL_NWHEAT"]
        self.ncards = core_py.NCARDS
        self.end_vp = core_py.END_VP

    def set_weights(self, weights: Any, rollout_weights: Any = None) -> None:
        """The value's weights: `a` then `b`, one of each per feature (see `features`); the value of
        a seat is sum_i (a_i + b_i * t) * f_i, t = the game's progress (`progress`). The greedy
        choices are by `rollout_weights` (default: the same weights)."""
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

    # ---- the search's hooks --------------------------------------------------------------

    def start(self, root: Any) -> None:
        s = root
        self.players = s.d[self.s_players]
        if self.scratch is None:
            self.scratch = s.clone()

    def determinize(self, root: Any, observer: int, seed: int) -> Any:
        s = root
        return s.determinize(observer, seed)

    def is_terminal(self, d: Any) -> bool:
        s = d
        return s.is_terminal()

    def current_player(self, d: Any) -> int:
        s = d
        return s.current_player()

    def legal(self, d: Any, out: Any) -> int:
        s = d
        n = s.gen_legal()
        m = n if n <= len(out) else len(out)
        for i in range(m):
            out[i] = s.legal_buf[i]
        return n

    def apply(self, d: Any, code: int) -> None:
        s = d
        s.apply_unchecked(code)

    def has_turns(self) -> bool:
        return True

    def within_turn(self, d: Any) -> bool:
        s = d
        return s.d[self.s_phase] == self.ph_effect

    def play_greedy(self, d: Any, rng: Rng) -> None:
        s = d
        n = s.gen_legal()
        s.apply_unchecked(s.legal_buf[self._greedy_choice(s, n, rng) if n > 1 else 0])

    def evaluate(self, d: Any, rng: Rng) -> None:
        s = d
        if self.rollout == ROLL_TURN:
            turn = s.d[self.s_turn]
            while not s.is_terminal() and s.d[self.s_turn] == turn:
                self._rollout_step(s, 1, rng)
        else:
            for _k in range(self.depth):
                if s.is_terminal():
                    break
                self._rollout_step(s, 0, rng)
        self._leaf_rewards(s, self.players)

    # ---- features and values ----------------------------------------------------------------

    def _features(self, d: Any, p: int) -> None:
        """Fill `self.f` with seat `p`'s features (the order of `bots.features.feature_names`), and
        `self.miss[i]` with the units seat `p` lacks for face-up contract `i`."""
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
            self.miss[i] = total - covered
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
                c = d._card_kind(card)  # the kind it is now: a turned Patriarch is a Matriarch
                self.f[FIXED_FEATURES + c] += 1.0
                card = d.d[self.o_nxt + card]

    def progress(self, d: Any) -> float:
        """How far the game is: the leader's VP / `engine_ext.core.END_VP`, at most 1."""
        p = 0
        best = 0
        for p in range(d.d[self.s_players]):
            if d.vp(p) > best:
                best = d.vp(p)
        return best * 1.0 / self.end_vp if best < self.end_vp else 1.0

    def features(self, d: Any, p: int) -> list[float]:
        """Seat `p`'s features of state `d` (an engine state of this build), as a list."""
        self._features(d, p)
        return [self.f[i] for i in range(FIXED_FEATURES + d.R.nkinds)]

    def heuristic(self, d: Any, p: int) -> float:
        """Seat `p`'s value: sum_i (a_i + b_i * t) * f_i over its features (`set_weights`)."""
        return self._value(d, p, self.progress(d), 0)

    def _value(self, d: Any, p: int, t: float, base: int) -> float:
        """The value with the leaf's weights (`base` 0) or the greedy choices' (`base` 2 * MAX_FEATURES)."""
        i = 0
        v = 0.0
        self._features(d, p)
        for i in range(self.nfeat):
            v += (self.w[base + i] + self.w[base + MAX_FEATURES + i] * t) * self.f[i]
        return v

    # ---- greedy choices, rollouts, leaves ----------------------------------------------------

    def _greedy_choice(self, d: Any, n: int, rng: Rng) -> int:
        """The index (in `d.legal_buf[0:n]`) of the decision after which the mover's own value is
        highest (ties broken at random), tried on the scratch state; with a learned policy set
        (`set_policy`), the policy's choice instead."""
        i = 0
        if self.npol > 0 and self.pbelow:
            return self._policy_choice(d, n, rng)
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
                if rng.next() % ties == 0:
                    best = i
        return best

    def greedy_rank(self, d: Any, out: Any, k: int) -> int:
        """The `k` legal decisions after which the mover's own value is highest, best first (ties:
        the earlier legal decision first), written to `out`; how many (at most `len(out)`)."""
        s = d
        i = 0
        j = 0
        best = 0
        bestv = 0.0
        n = s.gen_legal()
        m = k if k < n else n
        if m > len(out):
            m = len(out)
        if n > len(self.rv):
            self._rv = double_array(2 * n)
            self.rv = self._rv
        me = s.current_player()
        t = self.progress(s)
        sc = self.scratch
        for i in range(n):
            sc.copy_from(s)
            sc.apply_unchecked(s.legal_buf[i])
            self.rv[i] = self._value(sc, me, t, 2 * MAX_FEATURES)
        for j in range(m):
            best = 0
            bestv = -1e308
            for i in range(n):
                if self.rv[i] > bestv:
                    bestv = self.rv[i]
                    best = i
            out[j] = s.legal_buf[best]
            self.rv[best] = -1e308  # taken: never above the floor that a search for the best starts from
        return m

    def greedy_choice(self, d: Any, rng: Rng) -> int:
        """The mover's greedy decision in `d` (its code)."""
        if self.scratch is None:
            self.scratch = d.clone()
        n = d.gen_legal()
        return d.legal_buf[self._greedy_choice(d, n, rng) if n > 1 else 0]

    def _rollout_step(self, d: Any, greedy: int, rng: Rng) -> None:
        """One rollout decision on `d`: random, or (`greedy`) the mover's greedy choice except with
        probability `eps`."""
        n = d.gen_legal()
        if greedy and n > 1 and rng.next() % 1000000 >= self.eps * 1000000:
            d.apply_unchecked(d.legal_buf[self._greedy_choice(d, n, rng)])
        else:
            d.apply_unchecked(d.legal_buf[rng.next() % n])

    def _leaf_rewards(self, d: Any, np_: int) -> None:
        """`self.rew` and `self.vps` for state `d`: 1/0 by the winner at the end of the game, else
        the softmax of the seats' values times `scale`."""
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
        if self.nlayers > 0:
            self._stage(d, np_, t)
        for p in range(np_):
            if self.nlayers > 0:
                self.vals[p] = self._logit(p, np_)
                if self.blend != 0.0:
                    self.vals[p] += self.blend * self._value(d, p, t, 0)
                self.vals[p] = self.scale * self.vals[p]
            else:
                self.vals[p] = self.scale * self._value(d, p, t, 0)
            if self.vals[p] > m:
                m = self.vals[p]
            self.vps[p] = d.vp(p)
        for p in range(np_):
            self.rew[p] = math.exp(self.vals[p] - m)
            sm += self.rew[p]
        for p in range(np_):
            self.rew[p] = self.rew[p] / sm

    def leaf_rewards(self, d: Any) -> list[float]:
        """The rewards per seat that the search backs up from leaf state `d` (no rollout)."""
        np_ = d.d[self.s_players]
        self._leaf_rewards(d, np_)
        return [self.rew[p] for p in range(np_)]

    # ---- the learned model: its input per seat and a forward pass -----------------------------

    def set_model(self, sizes: Any, weights: Any) -> None:
        """The learned value model (`bots.learned`): `sizes` = [inputs, hidden..., 1], `weights` every
        layer's matrix (inputs x outputs, row-major) then its biases, layer by layer; ReLU between
        layers, the last output a logit (an `array('d')` of weights is shared, not copied). The leaves
        are then valued by the seats' logits (softmax times `scale`); the greedy choices keep the
        linear weights. Empty `sizes`: no model."""
        i = 0
        total = 0
        if len(sizes) == 0:
            self.nlayers = 0
            return
        if len(sizes) < 2 or len(sizes) > MAX_LAYERS + 1 or sizes[len(sizes) - 1] != 1:
            raise ValueError(f"model sizes must be [inputs, hidden..., 1] with at most {MAX_LAYERS} layers, "
                             f"not {list(sizes)}")
        for i in range(1, len(sizes) - 1):
            if sizes[i] < 1 or sizes[i] > MAX_HIDDEN:
                raise ValueError(f"a hidden layer has 1 to {MAX_HIDDEN} units, not {sizes[i]}")
        for i in range(len(sizes) - 1):
            total += sizes[i] * sizes[i + 1] + sizes[i + 1]
        if len(weights) != total:
            raise ValueError(f"model sizes {list(sizes)} take {total} weights, not {len(weights)}")
        if getattr(weights, "typecode", "") == "d":  # an array of C doubles: shared, not copied
            self._mw = weights
            self.mw = self._mw
        else:
            self._mw = double_array(total)
            self.mw = self._mw
            for i in range(total):
                self.mw[i] = weights[i]
        for i in range(len(sizes)):
            self.lsz[i] = sizes[i]
        self.nlayers = len(sizes) - 1

    def _seat_block(self, d: Any, q: int, off: int) -> None:
        """Seat `q`'s block of the model's input at `self.blk[off:]` (`bots.learned.MODEL_SEAT`)."""
        r = self.o_res + q * 7
        k = 0
        i = 0
        j = 0
        c = 0
        car = 0
        card = 0
        have = 0
        missing = 0
        ncards = 0
        payable = 0
        cycle = 0
        payvp = 0
        cyclevp = 0
        fewest = 99
        np_ = d.d[self.s_players]
        R = d.R
        nk = R.nkinds
        self._features(d, q)
        for i in range(FIXED_FEATURES):
            self.blk[off + i] = self.f[i]
        for k in range(7):
            have = d.d[r + k]
            self.blk[off + 8 + k] = have if have < 10 else 10
        self.blk[off + 15] = d.d[self.o_pl + q * 8 + self.pl_ncon]
        self.blk[off + 16] = d.d[self.o_pl + q * 8 + self.pl_nwheat]
        for i in range(d.d[self.o_ncar + q]):
            ncards += d.d[self.o_car + (q * 4 + i) * 3 + 2]
        for i in range(d.d[self.s_disp_n]):
            c = d.d[self.o_disp + i]
            missing = self.miss[i]  # (`_features`, above)
            if missing == 0:
                payable += 1
                if R.con_vp[c] > payvp:
                    payvp = R.con_vp[c]
            if missing <= ncards:
                cycle += 1
                if R.con_vp[c] > cyclevp:
                    cyclevp = R.con_vp[c]
            if missing < fewest:
                fewest = missing
        self.blk[off + 17] = payable
        self.blk[off + 18] = payvp
        self.blk[off + 19] = cycle
        self.blk[off + 20] = cyclevp
        self.blk[off + 21] = (fewest if fewest < 10 else 10) if d.d[self.s_disp_n] > 0 else 10
        self.blk[off + 22] = (q - d.d[self.s_start] + np_) % np_
        self.blk[off + 23] = (q - d.d[self.s_turnpl] + np_) % np_
        for k in range(nk):
            self.blk[off + SEAT_FIXED + k] = self.f[FIXED_FEATURES + k]
            self.blk[off + SEAT_FIXED + nk + k] = 0.0
        for i in range(d.d[self.o_ncar + q]):
            car = q * 4 + i
            card = d.d[self.o_car + car * 3]
            for j in range(d.d[self.o_car + car * 3 + 2]):
                c = d._card_kind(card)
                self.blk[off + SEAT_FIXED + nk + c] += 1.0 / (1.0 + j)
                card = d.d[self.o_nxt + card]

    def _stage(self, d: Any, np_: int, t: float) -> None:
        """Every seat's block and the table's part of the model's input, into `self.blk`."""
        q = 0
        i = 0
        c = 0
        loc = 0
        nk = d.R.nkinds
        g = 0
        self.bsize = SEAT_FIXED + 2 * nk
        for q in range(np_):
            self._seat_block(d, q, q * self.bsize)
        g = 4 * self.bsize
        for i in range(GLOBAL_FIXED + nk):
            self.blk[g + i] = 0.0
        for i in range(3):
            self.blk[g + i] = 1.0 if i + 1 < np_ else 0.0
        self.blk[g + 3 + np_ - 2] = 1.0
        self.blk[g + 6] = d.d[self.s_turn] * 1.0 / np_  # a C double division
        self.blk[g + 7] = (d.d[self.s_turnlim] - d.d[self.s_turn]) * 1.0 / np_
        self.blk[g + 8] = 1.0 if d.d[self.s_endtrig] != 0 else 0.0
        self.blk[g + 9] = t
        self.blk[g + 10] = d.d[self.s_std_n]
        self.blk[g + 11] = d.d[self.s_spc_n]
        self.blk[g + 12] = d.d[self.s_con_n]
        for i in range(self.ncards):
            loc = d.d[self.o_loc + i]
            if loc == self.l_std or loc == self.l_spc:
                c = d.R.ckind[i]
                self.blk[g + GLOBAL_FIXED + c] += 1.0
        self.nin = 4 * self.bsize + GLOBAL_FIXED + nk

    def _logit(self, p: int, np_: int) -> float:
        """The model's logit that seat `p` wins, from the staged input (`_stage`): the first layer
        reads the blocks in seat-relative order (own, then the next seats in turn order) and skips
        zero inputs."""
        s = 0
        q = 0
        i = 0
        j = 0
        lay = 0
        nin = 0
        nout = 0
        w = 0
        src = 0
        dst = 0
        bias = 0
        x = 0.0
        nin = self.lsz[0]
        nout = self.lsz[1]
        dst = 0
        bias = nin * nout
        for j in range(nout):
            self.hid[j] = self.mw[bias + j]
        for s in range(4):
            if s >= np_:
                break
            q = (p + s) % np_
            for i in range(self.bsize):
                x = self.blk[q * self.bsize + i]
                if x != 0.0:
                    w = (s * self.bsize + i) * nout
                    for j in range(nout):
                        self.hid[j] += x * self.mw[w + j]
        for i in range(nin - 4 * self.bsize):
            x = self.blk[4 * self.bsize + i]
            if x != 0.0:
                w = (4 * self.bsize + i) * nout
                for j in range(nout):
                    self.hid[j] += x * self.mw[w + j]
        w = bias + nout
        for lay in range(1, self.nlayers):
            src = dst
            dst = MAX_HIDDEN - dst
            nin = nout
            nout = self.lsz[lay + 1]
            for j in range(nout):
                self.hid[dst + j] = self.mw[w + nin * nout + j]
            for i in range(nin):
                x = self.hid[src + i]
                if x > 0.0:  # ReLU
                    for j in range(nout):
                        self.hid[dst + j] += x * self.mw[w + i * nout + j]
            w += nin * nout + nout
        return self.hid[dst]

    def model_features(self, d: Any, p: int) -> list[float]:
        """Seat `p`'s input to the learned model in state `d` (`bots.learned.model_feature_names`)."""
        np_ = d.d[self.s_players]
        s = 0
        q = 0
        out: list[float] = []
        self._stage(d, np_, self.progress(d))
        for s in range(4):
            if s < np_:
                q = (p + s) % np_
                out.extend([self.blk[q * self.bsize + i] for i in range(self.bsize)])
            else:
                out.extend([0.0] * self.bsize)
        out.extend([self.blk[4 * self.bsize + i] for i in range(self.nin - 4 * self.bsize)])
        return out

    def model_logit(self, d: Any, p: int) -> float:
        """The learned model's logit that seat `p` wins state `d` (`set_model`)."""
        np_ = d.d[self.s_players]
        if self.nlayers == 0:
            raise ValueError("no model set (set_model)")
        self._stage(d, np_, self.progress(d))
        if self.nin != self.lsz[0]:
            raise ValueError(f"the model reads {self.lsz[0]} inputs, this engine has {self.nin}")
        return self._logit(p, np_)

    # ---- the learned policy: a linear softmax over each decision's input ----------------------

    def set_policy(self, weights: Any, temperature: float = 0.0, below: bool = True) -> None:
        """The learned policy (`bots.policy`): one weight per input of `policy_features`; with
        `below`, the mover's choices below the root (the continuation and the rollout's greedy
        steps) are then the decision of the highest score (`temperature` 0) or sampled by
        softmax(score / temperature); without, they stay greedy and the policy only gives the
        root's priors (`priors`). Empty `weights`: no policy, the greedy choices."""
        i = 0
        if len(weights) == 0:
            self.npol = 0
            return
        if len(weights) > MAX_POLICY:
            raise ValueError(f"a policy has at most {MAX_POLICY} weights, not {len(weights)}")
        if temperature < 0.0:
            raise ValueError(f"the policy's temperature must be >= 0, not {temperature!r}")
        for i in range(len(weights)):
            self.pw[i] = weights[i]
        self.npol = len(weights)
        self.ptemp = temperature
        self.pbelow = 1 if below else 0

    def _policy_before(self, d: Any, me: int, t: float) -> None:
        """Stage the mover's block of `d` (before its decision) at `blk[POL_OFF:]`, and its greedy
        value and the other seats' summed in `vals[0]` and `vals[1]`."""
        q = 0
        self.vals[1] = 0.0
        for q in range(d.d[self.s_players]):
            if q != me:
                self.vals[1] += self._value(d, q, t, 2 * MAX_FEATURES)
        self.vals[0] = self._value(d, me, t, 2 * MAX_FEATURES)
        self._seat_block(d, me, POL_OFF)

    def _policy_row(self, d: Any, code: int, me: int, t: float) -> int:
        """The policy's input for decision `code` of `d` into `pf` (`_policy_before` staged `d`),
        tried on the scratch state; how many inputs."""
        i = 0
        q = 0
        j = 0
        v = 0.0
        kind = code >> 8
        nb = SEAT_FIXED + 2 * d.R.nkinds
        sc = self.scratch
        sc.copy_from(d)
        sc.apply_unchecked(code)
        self._seat_block(sc, me, POL_OFF + MAX_BLOCK)  # its `_features` leaves the mover's in `f`
        for i in range(nb):
            self.pf[i] = self.blk[POL_OFF + MAX_BLOCK + i] - self.blk[POL_OFF + i]
        for i in range(FIXED_FEATURES):
            self.pf[nb + i] = t * self.pf[i]
        j = nb + FIXED_FEATURES
        for i in range(self.nfeat):
            v += (self.w[2 * MAX_FEATURES + i] + self.w[3 * MAX_FEATURES + i] * t) * self.f[i]
        self.pf[j] = v - self.vals[0]
        v = 0.0
        for q in range(sc.d[self.s_players]):
            if q != me:
                v += self._value(sc, q, t, 2 * MAX_FEATURES)
        self.pf[j + 1] = v - self.vals[1]
        for i in range(POLICY_KINDS + POLICY_OPTIONS + 1):
            self.pf[j + 2 + i] = 0.0
        if 1 <= kind <= POLICY_KINDS:
            self.pf[j + 1 + kind] = 1.0
        if kind == 1:  # K_SELECT: its option
            self.pf[j + 2 + POLICY_KINDS + (code & 3)] = 1.0
        if not sc.is_terminal() and sc.d[self.s_turn] == d.d[self.s_turn]:
            self.pf[j + 2 + POLICY_KINDS + POLICY_OPTIONS] = 1.0
        return j + 3 + POLICY_KINDS + POLICY_OPTIONS

    def _policy_scores(self, d: Any, n: int) -> None:
        """The policy's score of each decision `d.legal_buf[0:n]` into `ps`."""
        i = 0
        k = 0
        m = 0
        v = 0.0
        me = d.current_player()
        t = self.progress(d)
        if n > len(self.ps):
            self._ps = double_array(2 * n)
            self.ps = self._ps
        self._policy_before(d, me, t)
        for i in range(n):
            m = self._policy_row(d, d.legal_buf[i], me, t)
            if m > self.npol:
                m = self.npol
            v = 0.0
            for k in range(m):
                v += self.pw[k] * self.pf[k]
            self.ps[i] = v

    def _policy_choice(self, d: Any, n: int, rng: Rng) -> int:
        """The index (in `d.legal_buf[0:n]`) the policy chooses: the highest score (ties broken at
        random), or sampled by softmax(score / ptemp)."""
        i = 0
        best = 0
        ties = 0
        bestv = -1e300
        sm = 0.0
        x = 0.0
        self._policy_scores(d, n)
        for i in range(n):
            if self.ps[i] > bestv + 1e-12:
                bestv = self.ps[i]
                best = i
                ties = 1
            elif self.ps[i] > bestv - 1e-12:
                ties += 1
                if rng.next() % ties == 0:
                    best = i
        if self.ptemp <= 0.0:
            return best
        for i in range(n):
            self.ps[i] = math.exp((self.ps[i] - bestv) / self.ptemp)
            sm += self.ps[i]
        x = (rng.next() % 1000000) * sm / 1000000.0
        for i in range(n):
            x -= self.ps[i]
            if x < 0.0:
                return i
        return best

    def priors(self, d: Any, codes: Any, n: int, out: Any) -> int:
        """The policy's softmax over the decisions legal in `d` (`codes[0:n]`, in `d.legal_buf`'s
        order, as `legal` wrote them) into `out[0:n]`: 1; 0 without a policy."""
        s = d
        i = 0
        m = -1e300
        sm = 0.0
        if self.npol == 0:
            return 0
        self._policy_scores(s, n)
        for i in range(n):
            if self.ps[i] > m:
                m = self.ps[i]
        for i in range(n):
            out[i] = math.exp(self.ps[i] - m)
            sm += out[i]
        for i in range(n):
            out[i] = out[i] / sm
        return 1

    def policy_features(self, d: Any) -> list[list[float]]:
        """The policy's input for each legal decision of state `d`, in the order of `d.legal_codes()`."""
        n = 0
        i = 0
        m = 0
        out: list[list[float]] = []
        if self.scratch is None:
            self.scratch = d.clone()
        me = d.current_player()
        t = self.progress(d)
        n = d.gen_legal()
        self._policy_before(d, me, t)
        for i in range(n):
            m = self._policy_row(d, d.legal_buf[i], me, t)
            out.append([self.pf[k] for k in range(m)])
        return out

    def policy_scores(self, d: Any) -> list[float]:
        """The policy's score of each legal decision of state `d` (`set_policy`), in legal order."""
        n = 0
        if self.npol == 0:
            raise ValueError("no policy set (set_policy)")
        if self.scratch is None:
            self.scratch = d.clone()
        n = d.gen_legal()
        self._policy_scores(d, n)
        return [self.ps[i] for i in range(n)]
