"""The Kashgar rules core: one source, run interpreted or compiled by Cython (as `core_c`).

Everything the game needs to change lives in one flat integer array `State.d` (offsets below),
so that cloning is one copy and nothing in the hot path (legal decisions, apply, playout,
determinize) creates Python objects in the compiled build. Card behaviour is not written here
card by card: every action is a short program of effect steps (`OP_*`), compiled from the card
data file by `engine_ext.carddata` into the `Rules` tables, and run by the small interpreter in
`State._run`. A turn is a sequence of decisions (`K_*` codes, `kind << 8 | arg`); a step that
needs a choice stops the interpreter with a pending decision (`P_*`) until `apply` gets it.

The step language itself (names, arguments, what each step does) is the table in
`engine_ext.steps`; the `OP_<STEP>` and `F_<MODIFIER>` constants here are the compiled build's C
copies of its numbers, checked against it when `engine_ext.carddata` is imported. The JSON layer
(`engine_ext.document`) reads and writes `State.d` through this module's rules (the interpreted
`State` over its list, `document.array.state_over`; the decks' ring buffers through `deck_slot`,
`deck_take` and `deck_put_under`), so that no rule is written twice.

Why one module of this size: it is one Cython extension, and `State` is one `cdef class` whose
methods call each other through its C vtable (a cdef class cannot be split across modules), with
the hot path (gen_legal, apply, the interpreter, playout, determinize) compiled as one unit. What
is not the state's own rules lives elsewhere: the step table (`steps`), its parser (`carddata`),
and where a program stops (`program`).
"""

import itertools

try:
    import cython
except ImportError:  # interpreted, without Cython installed
    from engine_ext import cython_shim as cython  # type: ignore[no-redef]

MASK64 = (1 << 64) - 1
XS_MUL = 2685821657736338717  # xorshift64*
LCG_MUL = 6364136223846793005
LCG_ADD = 1442695040888963407
FNV_OFFSET = 1469598103934665603
FNV_PRIME = 1099511628211


def _wrap(x: cython.ulonglong) -> cython.ulonglong:
    """Unsigned 64-bit wrap-around: free in C, a mask in Python."""
    if cython.compiled:
        return x
    return x & MASK64


def _mix(seed: cython.ulonglong) -> cython.ulonglong:
    """A non-zero xorshift state from any seed."""
    x: cython.ulonglong = _wrap(_wrap(seed * LCG_MUL) + LCG_ADD)
    if x == 0:
        x = 1
    return x

# ---- resources -------------------------------------------------------------------------
NRES = 7
GOLD = 5
MULES = 6
CINNAMON = 4
REG = 7  # "the resource chosen last" ($) in an effect step
SPICE_MASK = 31
TRADE_SPICE = 2  # a trade's gain for each gold paid: this many of a spice, ...
TRADE_MULES = 1  # ... or this many mules
END_VP = 25  # a seat with this many VP triggers the end of the game (the round is played out)

# ---- effect steps (opcodes); each step is 4 ints: op, a, b, c -------------------------------
OP_PAY = 1
OP_INC = 2
OP_SET = 3
OP_CHOOSE = 4
OP_DRAW = 5
OP_FULFIL = 6
OP_CONTRACTS_WHEAT = 7
OP_CONTRACTS_FREE = 8
OP_REFRESH_DISPLAY = 9
OP_OPP_INC = 10
OP_OPP_SET = 11
OP_OPP_DEC = 12
OP_OPP_DEC_IF_GE = 13
OP_IF_OPP_ZERO = 14
OP_STEAL = 15
OP_RAISE_TO_MAX_OPP = 16
OP_REMOVE_THIS = 17
OP_REMOVE_ANY = 18
OP_REMOVE_PATRIARCH = 19
OP_TURN_SELF = 20
OP_TURN_OPPONENTS = 21
OP_PATRIARCHS_FRONT = 22
OP_ROUTE_FRONTS = 23
OP_TAKE_DISCARD = 24
OP_NEW_CARAVAN = 25
OP_SHUFFLE = 26
OP_TRADE = 27
OP_SET_DISTINCT = 28

# amounts below zero are counts
AMT_CONTRACTS = -1
AMT_CARAVAN = -2
AMT_PATRIARCHS = -3
AMT_HALFMULES = -4

DECK_STANDARD = 0
DECK_SPECIAL = 1
DECK_CONTRACT = 2

F_FREE = 1
F_NOMULES = 2
F_SMALL = 4
F_GOLD_FOR_SPICES = 8
F_SPICES_FOR_CINNAMON = 16

# contract kinds
CK_SMALL = 0
CK_LARGE = 1
CK_WHEAT = 2
CK_PEPPER = 3
CK_GOLD = 4

# ---- decision kinds -------------------------------------------------------------------
K_SELECT = 1
K_CHOOSE = 2
K_KEEP = 3
K_FULFIL = 4
K_SKIP = 5
K_TAKE = 6
K_REMOVE = 7
K_PAY = 8
K_ROUTE = 9

OPT_A = 0
OPT_B = 1
OPT_PART = 2
OPT_PASS = 3

# ---- what the pending decision is -----------------------------------------------------
P_NONE = 0
P_CHOOSE = 1
P_KEEP = 2
P_FULFIL = 3
P_WHEAT = 4
P_CINNAMON = 5
P_REMOVE = 6
P_REMOVE_ANY = 7
P_REMOVE_PAT = 8
P_ROUTE = 9
P_TAKE = 10
P_TRADE_PAY = 11
P_TRADE = 12
P_SETDIST = 13
P_CFREE = 14

PH_SELECT = 0
PH_EFFECT = 1
PH_OVER = 2

# ---- person-card locations ----------------------------------------------------------
L_STD = 16
L_DISC = 17
L_SPC = 18
L_BOX = 19
L_UNUSED = 20
L_SPARE = 21
L_LIMBO = 22
# contract locations: 0..3 fulfilled by that player
CL_DECK = 4
CL_DISPLAY = 5
CL_LIMBO = 6

NCARDS = 125
NCON = 40
STD_CAP = 128
SPC_CAP = 16
CON_CAP = 64
DISC_CAP = 128
# drawn cards: a draw of one Special per fulfilled contract (N:contracts) may draw the whole Special deck
LIMBO_CAP = 16
LEGAL_CAP = 256

# ---- the layout of State.d ------------------------------------------------------------
S_PLAYERS = 0
S_TURNPL = 1
S_DECIDER = 2
S_PHASE = 3
S_START = 4
S_TURN = 5
S_TURNLIM = 6
S_ENDTRIG = 7
S_SPARE = 8
S_STD_TOP = 9
S_STD_N = 10
S_SPC_TOP = 11
S_SPC_N = 12
S_CON_TOP = 13
S_CON_N = 14
S_DISC_N = 15
S_DISP_N = 16
S_LIMBO_N = 17
S_LIMBO_SRC = 18
S_LIMBO_FRONT = 19
S_CARD = 20
S_CAR = 21
S_ACT = 22
S_SLOT = 23
S_PC = 24
S_REG = 25
S_REG2 = 26
S_N = 27
S_LAST = 28
S_PEND = 29
S_FLAGS = 30
S_ROUTER = 31
S_ROUTERS_LEFT = 32
S_CINNAMON_CON = 34  # (slot 33 is free)

O_NCAR = 40  # caravans per player (4)
O_RES = 44  # 4 players x 7
O_CAR = 72  # 16 caravans x (head, tail, len)
O_LOC = 120
O_NXT = O_LOC + NCARDS
O_FLIP = O_NXT + NCARDS
O_KNOWN = O_FLIP + NCARDS  # per card in a deck: the seats that know its place there (a bit each)
KNEW = 8  # a card drawn for one seat's eyes: the seats that knew its place before, from this bit up
O_STD = O_KNOWN + NCARDS
O_SPC = O_STD + STD_CAP
O_CON = O_SPC + SPC_CAP
O_DISC = O_CON + CON_CAP
O_DISP = O_DISC + DISC_CAP
O_LIMBO = O_DISP + 4
O_CLOC = O_LIMBO + LIMBO_CAP
O_CKNOWN = O_CLOC + NCON
O_PL = O_CKNOWN + NCON  # per player: 8 ints
PL_NCON = 0  # contracts fulfilled
PL_NWHEAT = 1  # of them wheat fields
PL_CVP = 2  # VP of the contracts
PL_CARDVP = 3  # VP of the caravans' cards (but those worth one per wheat field)
PL_NWHEATVP = 4  # caravan cards worth one VP per wheat field
PL_LAST = 5  # the turn at whose end the VP total last changed
PL_VPC = 6  # the VP total as last scored (at a turn's end)
D_SIZE = O_PL + 32
D_CAP = 1088  # the C array's size in core_c.pxd
assert D_SIZE <= D_CAP

# ---- the decks: one ring buffer each in State.d -------------------------------------------------
# by deck (DECK_*): where its slots start, its capacity - 1 (a power of two), and its top and count
DECK_OFF = [O_STD, O_SPC, O_CON]
DECK_MASK = [STD_CAP - 1, SPC_CAP - 1, CON_CAP - 1]
DECK_TOP = [S_STD_TOP, S_SPC_TOP, S_CON_TOP]
DECK_N = [S_STD_N, S_SPC_N, S_CON_N]


def deck_slot(d, deck: cython.int, i: cython.int) -> cython.int:
    """Where in the state array `d` the i-th card from the top of `deck` (DECK_*) lies."""
    return DECK_OFF[deck] + ((d[DECK_TOP[deck]] + i) & DECK_MASK[deck])


def deck_take(d, deck: cython.int) -> cython.int:
    """Take the top card off `deck` in the state array `d`: its id, or -1 when the deck is empty."""
    card: cython.int
    if d[DECK_N[deck]] == 0:
        return -1
    card = d[deck_slot(d, deck, 0)]
    d[DECK_TOP[deck]] = (d[DECK_TOP[deck]] + 1) & DECK_MASK[deck]
    d[DECK_N[deck]] -= 1
    return card


def deck_put_under(d, deck: cython.int, card: cython.int) -> None:
    """Put `card` under `deck` in the state array `d` (its place and who knows it: the caller's)."""
    d[deck_slot(d, deck, d[DECK_N[deck]])] = card
    d[DECK_N[deck]] += 1


# ---- small rules on the state array (C functions the compiler inlines; the JSON layer calls them on
# its list) ---------------------------------------------------------------------------------------
def mark_drawn(d, known_off: cython.int, card: cython.int, p: cython.int, knew: cython.int) -> None:
    """A card (`known_off` O_KNOWN) or contract (O_CKNOWN) drawn for seat `p`'s eyes: known to `p`
    now, and the seats that knew its place in the deck before (`knew`) kept from bit KNEW up."""
    d[known_off + card] = (1 << p) | (knew << KNEW)


def draw_is_private(d) -> cython.bint:
    """Whether the pending step chooses among cards drawn for the turn player's eyes only: Special
    cards or contracts (drawn Standard cards are shown to all)."""
    return d[S_LIMBO_N] > 0 and d[S_LIMBO_SRC] != DECK_STANDARD


def last_seat(d) -> cython.int:
    """The last seat in turn order (the one before the start player)."""
    return (d[S_START] + d[S_PLAYERS] - 1) % d[S_PLAYERS]


def at_turn_limit(d) -> cython.bint:
    """Whether as many turns as the game allows have been played (S_TURN counts those ended)."""
    return d[S_TURN] >= d[S_TURNLIM]


def ends_after(d, tp: cython.int) -> cython.bint:
    """Whether the game ends with the turn of seat `tp` that has just ended: the last seat's turn
    once someone has reached END_VP (the end is triggered), or the turn limit's."""
    return (d[S_ENDTRIG] != 0 and tp == last_seat(d)) or at_turn_limit(d)


def _route_tables() -> tuple:
    """The routes of `route_fronts` for 2, 3 and 4 non-empty caravans, as flat tables: every caravan's
    front card goes to the back of a different one (several may go to the same caravan, and
    then the order in which they are appended is chosen). For m caravans, route i is the m moves
    ROUTE[ROUTE_OFF[m] + (i * m + j) * 2 + (0, 1)] = (source, destination) for j in 0..m-1, as
    positions among the non-empty caravans, in the order they are made (grouped by destination,
    ascending). Routes are listed by destination function (lexicographic), then by the orders
    within each destination (lexicographic): 1, 14 and 225 routes."""
    counts = [0, 0, 0, 0, 0]
    offs = [0, 0, 0, 0, 0]
    flat: list = []
    for m in range(2, 5):
        offs[m] = len(flat)
        funcs: list = [[]]
        for i in range(m):
            funcs = [f + [t] for f in funcs for t in range(m) if t != i]
        for f in funcs:
            orders: list = [[]]
            for dst in range(m):
                group = [s for s in range(m) if f[s] == dst]
                orders = [o + list(g) for o in orders for g in itertools.permutations(group)]
            for o in orders:
                for s in o:
                    flat.append(s)
                    flat.append(f[s])
                counts[m] += 1
    return counts, offs, flat


_ROUTES = _route_tables()
ROUTE_N = _ROUTES[0]
ROUTE_OFF = _ROUTES[1]
ROUTE = _ROUTES[2]
ROUTE_SIZE = 1888  # len(ROUTE): the C array's size in core_c.pxd
assert len(_ROUTES[2]) == ROUTE_SIZE and _ROUTES[0] == [0, 0, 1, 14, 225]


def layout() -> dict:
    """The offsets of State.d, for the JSON layer (the compiled build has them as C ints)."""
    names = [n for n in globals() if n[:2] in ("S_", "O_", "L_", "P_", "K_") or n[:3] in ("PL_", "CL_", "CK_", "OP_")]
    return {n: globals()[n] for n in names}


def _zeros(n: cython.int) -> list:
    return [0] * n


class Rules:
    """The card and contract tables the interpreter reads (built by engine_ext.carddata)."""

    def __init__(self, tables: dict) -> None:
        i: cython.int
        if not cython.compiled:
            self.kvp = _zeros(64)
            self.kwheat = _zeros(64)
            self.kbang = _zeros(64)
            self.kact = _zeros(192)
            self.ckind = _zeros(128)
            self.a_start = _zeros(256)
            self.a_len = _zeros(256)
            self.a_cost = _zeros(256 * 7)
            self.a_minmask = _zeros(256)
            self.a_min = _zeros(256)
            self.a_trade = _zeros(256)
            self.ops = _zeros(4096)
            self.con_kind = _zeros(40)
            self.con_vp = _zeros(40)
            self.con_mules = _zeros(40)
            self.con_cost = _zeros(280)
            self.con_pay_res = _zeros(40)
            self.con_pay_n = _zeros(40)
        self.nkinds = len(tables["kvp"])
        self.k_patriarch = tables["k_patriarch"]
        self.k_matriarch = tables["k_matriarch"]
        for name, size in (("kvp", 64), ("kwheat", 64), ("kbang", 64), ("kact", 192),
                           ("ckind", 128), ("a_start", 256), ("a_len", 256), ("a_cost", 256 * 7),
                           ("a_minmask", 256), ("a_min", 256), ("a_trade", 256), ("ops", 4096),
                           ("con_kind", 40), ("con_vp", 40), ("con_mules", 40), ("con_cost", 280),
                           ("con_pay_res", 40), ("con_pay_n", 40)):
            values = tables[name]
            if len(values) > size:
                raise ValueError(f"card table {name} too large: {len(values)} > {size}")
            for i in range(len(values)):
                self._set(name, i, values[i])

    def _set(self, name: str, i: cython.int, v: cython.int) -> None:
        if name == "kvp":
            self.kvp[i] = v
        elif name == "kwheat":
            self.kwheat[i] = v
        elif name == "kbang":
            self.kbang[i] = v
        elif name == "kact":
            self.kact[i] = v
        elif name == "ckind":
            self.ckind[i] = v
        elif name == "a_start":
            self.a_start[i] = v
        elif name == "a_len":
            self.a_len[i] = v
        elif name == "a_cost":
            self.a_cost[i] = v
        elif name == "a_minmask":
            self.a_minmask[i] = v
        elif name == "a_min":
            self.a_min[i] = v
        elif name == "a_trade":
            self.a_trade[i] = v
        elif name == "ops":
            self.ops[i] = v
        elif name == "con_kind":
            self.con_kind[i] = v
        elif name == "con_vp":
            self.con_vp[i] = v
        elif name == "con_mules":
            self.con_mules[i] = v
        elif name == "con_cost":
            self.con_cost[i] = v
        elif name == "con_pay_res":
            self.con_pay_res[i] = v
        elif name == "con_pay_n":
            self.con_pay_n[i] = v
        else:  # pragma: no cover
            raise KeyError(name)


class State:
    """A full game state (decks in a definite order). See the module docstring."""

    def __init__(self, rules: Rules) -> None:
        self.R = rules
        self.rng = 0x1E3779B97F4A7C15
        self.nlegal = 0
        if not cython.compiled:
            self.d = _zeros(D_SIZE)
            self.legal_buf = _zeros(LEGAL_CAP)

    # ---- raw access (for the JSON layer and tests) ------------------------------------
    def export(self) -> list:
        return [self.d[i] for i in range(D_SIZE)]

    def load(self, values: list, rng: cython.ulonglong) -> None:
        i: cython.int
        if len(values) != D_SIZE:
            raise ValueError("state array has the wrong size")
        for i in range(D_SIZE):
            self.d[i] = values[i]
        self.rng = rng

    def get_rng(self) -> cython.ulonglong:
        return self.rng

    def rules(self) -> Rules:
        return self.R

    # ---- random numbers (xorshift64*) ---------------------------------------------------
    def _rand(self) -> cython.ulonglong:
        x: cython.ulonglong = self.rng
        x ^= x >> 12
        x ^= _wrap(x << 25)
        x ^= x >> 27
        self.rng = x
        return _wrap(x * XS_MUL)

    def _randint(self, n: cython.int) -> cython.int:
        r: cython.ulonglong = self._rand() >> 33
        return cython.cast(cython.int, r % cython.cast(cython.ulonglong, n))

    # ---- copying ---------------------------------------------------------------------
    def clone(self) -> "State":
        i: cython.int
        s: State = State.__new__(State)
        s.R = self.R
        s.rng = self.rng
        s.nlegal = 0
        if cython.compiled:
            for i in range(D_SIZE):
                s.d[i] = self.d[i]
        else:
            s.d = self.d[:]
            s.legal_buf = _zeros(LEGAL_CAP)
        return s

    def copy_from(self, other: "State") -> None:
        """Make this (already allocated) state a copy of `other`: a clone without allocation."""
        i: cython.int
        self.R = other.R
        self.rng = other.rng
        if cython.compiled:
            for i in range(D_SIZE):
                self.d[i] = other.d[i]
        else:
            self.d = other.d[:]

    # ---- simple queries --------------------------------------------------------------
    @property
    def players(self) -> int:
        return self.d[S_PLAYERS]

    def current_player(self) -> cython.int:
        if self.d[S_PHASE] == PH_OVER:
            return -1
        return self.d[S_DECIDER]

    def turn_player(self) -> cython.int:
        return self.d[S_TURNPL]

    def is_terminal(self) -> cython.bint:
        return self.d[S_PHASE] == PH_OVER

    def pending(self) -> cython.int:
        return self.d[S_PEND]

    def res(self, p: cython.int, r: cython.int) -> cython.int:
        return self.d[O_RES + p * 7 + r]

    def vp(self, p: cython.int) -> cython.int:
        b: cython.int = O_PL + p * 8
        return self.d[b + PL_CVP] + self.d[b + PL_CARDVP] + self.d[b + PL_NWHEATVP] * self.d[b + PL_NWHEAT]

    def winner(self) -> cython.int:
        """The winner of a finished game (-1 while it goes on): most VP; ties go to the
        tied player whose total changed last, then to the later seat in turn order."""
        n: cython.int = self.d[S_PLAYERS]
        best: cython.int = -1
        p: cython.int
        i: cython.int
        v: cython.int
        bv: cython.int = -1000
        bl: cython.int = -2
        if self.d[S_PHASE] != PH_OVER:
            return -1
        for i in range(n):
            p = (self.d[S_START] + i) % n
            v = self.vp(p)
            if v > bv or (v == bv and self.d[O_PL + p * 8 + PL_LAST] >= bl):
                bv = v
                bl = self.d[O_PL + p * 8 + PL_LAST]
                best = p
        return best

    # ---- resources -----------------------------------------------------------------
    def _add(self, p: cython.int, r: cython.int, n: cython.int) -> None:
        i: cython.int = O_RES + p * 7 + r
        v: cython.int = self.d[i] + n
        cap: cython.int = 6 if r == MULES else 9
        if v > cap:
            v = cap
        if v < 0:
            v = 0
        self.d[i] = v

    def _setres(self, p: cython.int, r: cython.int, v: cython.int) -> None:
        cap: cython.int = 6 if r == MULES else 9
        if v > cap:
            v = cap
        if v < 0:
            v = 0
        self.d[O_RES + p * 7 + r] = v

    # ---- caravans (linked lists of cards) -------------------------------------------------
    def _card_kind(self, card: cython.int) -> cython.int:
        """The kind whose actions the card offers now (a turned Patriarch is a Matriarch)."""
        k: cython.int = self.R.ckind[card]
        if k == self.R.k_patriarch and self.d[O_FLIP + card]:
            return self.R.k_matriarch
        return k

    def _card_enter(self, p: cython.int, card: cython.int) -> None:
        k: cython.int = self.R.ckind[card]
        if self.R.kwheat[k]:
            self.d[O_PL + p * 8 + PL_NWHEATVP] += 1
        else:
            self.d[O_PL + p * 8 + PL_CARDVP] += self.R.kvp[k]

    def _card_leave(self, p: cython.int, card: cython.int) -> None:
        k: cython.int = self.R.ckind[card]
        if self.R.kwheat[k]:
            self.d[O_PL + p * 8 + PL_NWHEATVP] -= 1
        else:
            self.d[O_PL + p * 8 + PL_CARDVP] -= self.R.kvp[k]

    def _front(self, car: cython.int) -> cython.int:
        if self.d[O_CAR + car * 3 + 2] == 0:
            return -1
        return self.d[O_CAR + car * 3]

    def _push_back(self, car: cython.int, card: cython.int) -> None:
        """A card arrives at the back of caravan `car` (and counts for its owner)."""
        self._relink_back(car, card)
        self._arrive(car, card)

    def _push_front(self, car: cython.int, card: cython.int) -> None:
        self._relink_front(car, card)
        self._arrive(car, card)

    def _arrive(self, car: cython.int, card: cython.int) -> None:
        if self.d[O_LOC + card] != car:
            self.d[O_LOC + card] = car
            self._card_enter(car >> 2, card)

    def _unlink(self, car: cython.int, card: cython.int) -> None:
        """Take a card out of its caravan's list (its location is set by the caller)."""
        b: cython.int = O_CAR + car * 3
        prev: cython.int = -1
        c: cython.int = self.d[b]
        while c != card:
            prev = c
            c = self.d[O_NXT + c]
        if prev < 0:
            self.d[b] = self.d[O_NXT + card]
        else:
            self.d[O_NXT + prev] = self.d[O_NXT + card]
        if self.d[b + 1] == card:
            self.d[b + 1] = prev
        self.d[b + 2] -= 1
        self.d[O_NXT + card] = -1

    def _leave_caravan(self, card: cython.int, newloc: cython.int) -> None:
        car: cython.int = self.d[O_LOC + card]
        self._unlink(car, card)
        self.d[O_LOC + card] = newloc
        self._card_leave(car >> 2, card)

    def _at(self, car: cython.int, pos: cython.int) -> cython.int:
        c: cython.int = self.d[O_CAR + car * 3]
        _i: cython.int
        if pos >= self.d[O_CAR + car * 3 + 2]:
            return -1
        for _i in range(pos):
            c = self.d[O_NXT + c]
        return c

    def _has_front(self, p: cython.int) -> cython.bint:
        c: cython.int
        for c in range(self.d[O_NCAR + p]):
            if self.d[O_CAR + (p * 4 + c) * 3 + 2] > 0:
                return True
        return False

    # ---- decks --------------------------------------------------------------------
    def _draw_standard(self) -> cython.int:
        """The Standard deck's top card, taken (an empty deck is first refilled from the discard
        pile); -1 when there is none."""
        if self.d[S_STD_N] == 0:
            self._reshuffle_standard()
        return deck_take(self.d, DECK_STANDARD)

    def _reshuffle_standard(self) -> None:
        """The Standard deck is empty: the discard pile, shuffled, becomes the new deck."""
        n: cython.int = self.d[S_DISC_N]
        i: cython.int
        self.d[S_STD_TOP] = 0
        self.d[S_STD_N] = 0
        for i in range(n):
            deck_put_under(self.d, DECK_STANDARD, self.d[O_DISC + i])
            self.d[O_LOC + self.d[O_DISC + i]] = L_STD
        self._deck_shuffle(DECK_STANDARD)
        self.d[S_DISC_N] = 0

    def _deck_shuffle(self, deck: cython.int) -> None:
        """Shuffle a deck in place (Fisher-Yates, from its bottom card up, by the state's stream)."""
        i: cython.int
        a: cython.int
        b: cython.int
        t: cython.int
        for i in range(self.d[DECK_N[deck]] - 1, 0, -1):
            a = deck_slot(self.d, deck, i)
            b = deck_slot(self.d, deck, self._randint(i + 1))
            t = self.d[a]
            self.d[a] = self.d[b]
            self.d[b] = t

    def _special_under(self, card: cython.int, known: cython.int) -> None:
        deck_put_under(self.d, DECK_SPECIAL, card)
        self.d[O_LOC + card] = L_SPC
        self.d[O_KNOWN + card] = known

    def _contract_under(self, c: cython.int, known: cython.int) -> None:
        deck_put_under(self.d, DECK_CONTRACT, c)
        self.d[O_CLOC + c] = CL_DECK
        self.d[O_CKNOWN + c] = known

    def _known_under(self, known_off: cython.int, p: cython.int, kept: cython.int,
                     free_taken: cython.bint) -> cython.int:
        """Who knows the place of each card that a private draw of seat `p` puts back under its deck,
        all but `kept` (kept or fulfilled: not put back; with `free_taken`, the contracts other than
        large ones are taken too): `p`, and every seat that knew the place of each of them before
        the draw. They go under in the order they were drawn, and what was kept is seen by all, so
        such a seat knows where each went; a seat that knew some of them only is not told where
        they are among the others. A Special card is kept by its kind, the first drawn of that kind:
        where another of that kind goes back, a seat tells which copy was kept only if it knew the
        kept one's place too (else knowing where the other went would tell it what it did not see)."""
        i: cython.int
        c: cython.int
        common: cython.int = (1 << self.d[S_PLAYERS]) - 1
        for i in range(self.d[S_LIMBO_N]):
            c = self.d[O_LIMBO + i]
            if c == kept or (free_taken and self._cfree(c, -1)):
                continue
            common &= self.d[known_off + c] >> KNEW
            if known_off == O_KNOWN and kept >= 0 and self.R.ckind[c] == self.R.ckind[kept]:
                common &= self.d[known_off + kept] >> KNEW
        return (1 << p) | common

    def _discard(self, card: cython.int) -> None:
        self.d[O_DISC + self.d[S_DISC_N]] = card
        self.d[S_DISC_N] += 1
        self.d[O_LOC + card] = L_DISC
        self.d[O_KNOWN + card] = 0

    def _take_discard_kind(self, kind: cython.int) -> cython.int:
        n: cython.int = self.d[S_DISC_N]
        i: cython.int
        j: cython.int
        card: cython.int
        for i in range(n):
            card = self.d[O_DISC + i]
            if self.R.ckind[card] == kind:
                for j in range(i, n - 1):
                    self.d[O_DISC + j] = self.d[O_DISC + j + 1]
                self.d[S_DISC_N] = n - 1
                return card
        return -1

    def _refill_display(self) -> None:
        c: cython.int
        while self.d[S_DISP_N] < 4:
            c = deck_take(self.d, DECK_CONTRACT)
            if c < 0:
                return
            self.d[O_DISP + self.d[S_DISP_N]] = c
            self.d[S_DISP_N] += 1
            self.d[O_CLOC + c] = CL_DISPLAY
            self.d[O_CKNOWN + c] = 0

    def _display_remove(self, c: cython.int) -> None:
        n: cython.int = self.d[S_DISP_N]
        i: cython.int
        j: cython.int
        for i in range(n):
            if self.d[O_DISP + i] == c:
                for j in range(i, n - 1):
                    self.d[O_DISP + j] = self.d[O_DISP + j + 1]
                self.d[S_DISP_N] = n - 1
                return

    def _limbo_add(self, card: cython.int) -> None:
        self.d[O_LIMBO + self.d[S_LIMBO_N]] = card
        self.d[S_LIMBO_N] += 1

    def _limbo_remove_at(self, i: cython.int) -> None:
        n: cython.int = self.d[S_LIMBO_N]
        j: cython.int
        for j in range(i, n - 1):
            self.d[O_LIMBO + j] = self.d[O_LIMBO + j + 1]
        self.d[S_LIMBO_N] = n - 1

    # ---- contracts -------------------------------------------------------------------
    def _take_contract(self, p: cython.int, c: cython.int, payout: cython.bint) -> None:
        b: cython.int = O_PL + p * 8
        self.d[O_CLOC + c] = p
        self.d[O_CKNOWN + c] = 0
        self.d[b + PL_NCON] += 1
        self.d[b + PL_CVP] += self.R.con_vp[c]
        if self.R.con_kind[c] == CK_WHEAT:
            self.d[b + PL_NWHEAT] += 1
        if payout and self.R.con_pay_n[c] > 0:
            self._add(p, self.R.con_pay_res[c], self.R.con_pay_n[c])

    def _can_fulfil(self, p: cython.int, c: cython.int, flags: cython.int) -> cython.bint:
        r: cython.int
        need: cython.int
        have: cython.int
        lack: cython.int = 0
        surplus: cython.int = 0
        rb: cython.int = O_RES + p * 7
        if (flags & F_SMALL) and self.R.con_kind[c] != CK_SMALL:
            return False
        if flags & F_FREE:
            return True
        if not (flags & F_NOMULES) and self.d[rb + MULES] < self.R.con_mules[c]:
            return False
        if self.d[rb + MULES] < self.R.con_cost[c * 7 + MULES]:
            return False
        for r in range(5):
            need = self.R.con_cost[c * 7 + r]
            have = self.d[rb + r]
            if flags & F_SPICES_FOR_CINNAMON:
                if r == CINNAMON:
                    surplus += have
                elif have < need:
                    return False
                else:
                    surplus += have - need
            elif have < need:
                lack += need - have
        if flags & F_SPICES_FOR_CINNAMON:
            if surplus < self.R.con_cost[c * 7 + CINNAMON]:
                return False
            lack = 0
        if flags & F_GOLD_FOR_SPICES:
            return self.d[rb + GOLD] >= self.R.con_cost[c * 7 + GOLD] + lack
        return lack == 0 and self.d[rb + GOLD] >= self.R.con_cost[c * 7 + GOLD]

    def _pay_contract(self, p: cython.int, c: cython.int, flags: cython.int) -> None:
        """Pay a contract's cost (not its cinnamon under `spices_for_cinnamon`: chosen step by step)."""
        r: cython.int
        need: cython.int
        have: cython.int
        lack: cython.int = 0
        rb: cython.int = O_RES + p * 7
        for r in range(5):
            if r == CINNAMON and (flags & F_SPICES_FOR_CINNAMON):
                continue
            need = self.R.con_cost[c * 7 + r]
            have = self.d[rb + r]
            if have >= need:
                self.d[rb + r] = have - need
            else:
                lack += need - have
                self.d[rb + r] = 0
        self.d[rb + GOLD] -= self.R.con_cost[c * 7 + GOLD] + lack
        self.d[rb + MULES] -= self.R.con_cost[c * 7 + MULES]

    # ---- counts for amounts ----------------------------------------------------------
    def _amount(self, p: cython.int, a: cython.int) -> cython.int:
        n: cython.int = 0
        c: cython.int
        card: cython.int
        if a >= 0:
            return a
        if a == AMT_CONTRACTS:
            return self.d[O_PL + p * 8 + PL_NCON]
        if a == AMT_CARAVAN:
            n = self.d[O_CAR + self.d[S_CAR] * 3 + 2]
            if self.d[S_SLOT] == OPT_PART:
                n += 1
            return n
        if a == AMT_HALFMULES:
            return self.d[O_RES + p * 7 + MULES] // 2
        if a == AMT_PATRIARCHS:
            for c in range(self.d[O_NCAR + p]):
                card = self.d[O_CAR + (p * 4 + c) * 3]
                if self.d[O_CAR + (p * 4 + c) * 3 + 2] == 0:
                    continue
                while card >= 0:
                    if self.R.ckind[card] == self.R.k_patriarch and not self.d[O_FLIP + card]:
                        n += 1
                    card = self.d[O_NXT + card]
            return n
        return 0

    # ---- turn flow -------------------------------------------------------------------
    def _can_start(self, p: cython.int, kind: cython.int, slot: cython.int) -> cython.bint:
        a: cython.int = self.R.kact[kind * 3 + slot]
        r: cython.int
        m: cython.int
        ok: cython.bint
        if a < 0:
            return False
        for r in range(NRES):
            if self.d[O_RES + p * 7 + r] < self.R.a_cost[a * 7 + r]:
                return False
        if self.R.a_trade[a] and self.d[O_RES + p * 7 + GOLD] < 1:
            return False
        m = self.R.a_minmask[a]
        if m:
            ok = False
            for r in range(NRES):
                if (m >> r) & 1 and self.d[O_RES + p * 7 + r] >= self.R.a_min[a]:
                    ok = True
            if not ok:
                return False
        return True

    def _end_turn(self) -> None:
        n: cython.int = self.d[S_PLAYERS]
        p: cython.int
        v: cython.int
        tp: cython.int
        self.d[S_PEND] = P_NONE
        self.d[S_LIMBO_N] = 0
        while True:
            for p in range(n):
                v = self.vp(p)
                if v != self.d[O_PL + p * 8 + PL_VPC]:
                    self.d[O_PL + p * 8 + PL_VPC] = v
                    self.d[O_PL + p * 8 + PL_LAST] = self.d[S_TURN]
                if v >= END_VP:
                    self.d[S_ENDTRIG] = 1
            tp = self.d[S_TURNPL]
            self.d[S_TURN] += 1
            if ends_after(self.d, tp):
                self.d[S_PHASE] = PH_OVER
                return
            tp = (tp + 1) % n
            self.d[S_TURNPL] = tp
            self.d[S_DECIDER] = tp
            self.d[S_PHASE] = PH_SELECT
            if self._has_front(tp):
                return

    # ---- legal decisions ---------------------------------------------------------------
    def _emit(self, code: cython.int) -> None:
        if self.nlegal < LEGAL_CAP:
            self.legal_buf[self.nlegal] = code
            self.nlegal += 1

    def gen_legal(self) -> cython.int:
        """Fill legal_buf with the legal decision codes; return how many."""
        p: cython.int = self.d[S_DECIDER]
        pend: cython.int = self.d[S_PEND]
        c: cython.int
        card: cython.int
        kind: cython.int
        slot: cython.int
        r: cython.int
        i: cython.int
        j: cython.int
        k: cython.int
        m: cython.int
        pos: cython.int
        seen: cython.ulonglong
        self.nlegal = 0
        if self.d[S_PHASE] == PH_OVER:
            return 0
        if self.d[S_PHASE] == PH_SELECT:
            for c in range(self.d[O_NCAR + p]):
                card = self._front(p * 4 + c)
                if card < 0:
                    continue
                kind = self._card_kind(card)
                for slot in range(3):
                    if self._can_start(p, kind, slot):
                        self._emit((K_SELECT << 8) | (c * 4 + slot))
                if not self.R.kbang[kind]:
                    self._emit((K_SELECT << 8) | (c * 4 + OPT_PASS))
            return self.nlegal
        if pend == P_CHOOSE:
            m = self.d[S_N]
            for r in range(NRES):
                if (m >> r) & 1 and self.d[O_RES + p * 7 + r] >= self.d[S_LAST]:
                    if not (self.d[S_FLAGS] and r == self.d[S_REG]):
                        self._emit((K_CHOOSE << 8) | r)
        elif pend == P_KEEP:
            seen = 0
            for i in range(self.d[S_LIMBO_N]):
                kind = self.R.ckind[self.d[O_LIMBO + i]]
                if not ((seen >> kind) & 1):
                    seen |= cython.cast(cython.ulonglong, 1) << kind
                    self._emit((K_KEEP << 8) | kind)
        elif pend == P_FULFIL:
            for i in range(self.d[S_DISP_N]):
                c = self.d[O_DISP + i]
                if self._can_fulfil(p, c, self.d[S_FLAGS]):
                    self._emit((K_FULFIL << 8) | c)
            self._emit(K_SKIP << 8)
        elif pend == P_WHEAT:
            for i in range(self.d[S_LIMBO_N]):
                c = self.d[O_LIMBO + i]
                if self.R.con_kind[c] == CK_WHEAT:
                    self._emit((K_FULFIL << 8) | c)
            self._emit(K_SKIP << 8)
        elif pend == P_CFREE:
            # the contracts to fulfil free among those drawn (not large ones), one at a time in
            # increasing contract order, never into a dead end: S_N picks are left, S_LAST was the last
            k = self._cfree_count(self.d[S_LAST])
            if k > self.d[S_N]:
                k = self.d[S_N]
            if k <= 0:
                self._emit(K_SKIP << 8)  # nothing left to pick (only in a state sampled for another player)
            else:
                for i in range(self.d[S_LIMBO_N]):
                    c = self.d[O_LIMBO + i]
                    if self._cfree(c, self.d[S_LAST]) and self._cfree_count(c) >= k - 1:
                        self._emit((K_FULFIL << 8) | c)
        elif pend == P_CINNAMON:
            # one spice per cinnamon unit, in non-decreasing order, never into a dead end
            k = self.d[S_N]
            for r in range(self.d[S_LAST], 5):
                m = 0
                for j in range(r, 5):
                    m += self._cinnamon_surplus(p, j)
                if self._cinnamon_surplus(p, r) > 0 and m >= k:
                    self._emit((K_CHOOSE << 8) | r)
        elif pend == P_REMOVE or pend == P_REMOVE_PAT:
            c = self.d[S_CAR]
            card = self.d[O_CAR + c * 3]
            pos = 0
            while card >= 0 and pos < 64:
                if card != self.d[S_CARD] and (pend == P_REMOVE or self.R.ckind[card] == self.R.k_patriarch):
                    self._emit((K_REMOVE << 8) | ((c & 3) * 64 + pos))
                card = self.d[O_NXT + card]
                pos += 1
            if pend == P_REMOVE:
                self._emit(K_SKIP << 8)
        elif pend == P_REMOVE_ANY:
            for c in range(self.d[O_NCAR + p]):
                card = self.d[O_CAR + (p * 4 + c) * 3]
                for pos in range(min(self.d[O_CAR + (p * 4 + c) * 3 + 2], 64)):
                    self._emit((K_REMOVE << 8) | (c * 64 + pos))
            self._emit(K_SKIP << 8)
        elif pend == P_ROUTE:
            m = self._nonempty(p)
            for i in range(ROUTE_N[m]):
                self._emit((K_ROUTE << 8) | i)
        elif pend == P_TAKE:
            seen = 0
            for i in range(self.d[S_DISC_N]):
                kind = self.R.ckind[self.d[O_DISC + i]]
                if not ((seen >> kind) & 1):
                    seen |= cython.cast(cython.ulonglong, 1) << kind
                    self._emit((K_TAKE << 8) | kind)
        elif pend == P_TRADE_PAY:
            for i in range(1, self.d[O_RES + p * 7 + GOLD] + 1):
                self._emit((K_PAY << 8) | i)
        elif pend == P_TRADE:
            for r in range(self.d[S_LAST], 7):
                if r != GOLD:
                    self._emit((K_CHOOSE << 8) | r)
        elif pend == P_SETDIST:
            k = self.d[S_N]
            for r in range(self.d[S_LAST] + 1, 5):
                if (self.d[S_REG2] >> r) & 1 and 5 - r >= k:
                    self._emit((K_CHOOSE << 8) | r)
        return self.nlegal

    def legal_codes(self) -> list:
        n: cython.int = self.gen_legal()
        return [self.legal_buf[i] for i in range(n)]

    def _cinnamon_surplus(self, p: cython.int, r: cython.int) -> cython.int:
        """What spice r can still give towards a contract's cinnamon (`spices_for_cinnamon`; the rest of the
        contract's cost is already paid)."""
        return self.d[O_RES + p * 7 + r]

    def _cfree(self, c: cython.int, after: cython.int) -> cython.bint:
        """Whether drawn contract `c` may be fulfilled free by `contracts_free` (all but the large
        ones), picked after contract `after` (picks go in increasing order; -1: none yet)."""
        return self.R.con_kind[c] != CK_LARGE and c > after

    def _cfree_count(self, after: cython.int) -> cython.int:
        """How many drawn contracts (in limbo) above number `after` could be fulfilled free."""
        i: cython.int
        m: cython.int = 0
        for i in range(self.d[S_LIMBO_N]):
            if self._cfree(self.d[O_LIMBO + i], after):
                m += 1
        return m

    def _cfree_waits(self, n: cython.int, last: cython.int) -> cython.bint:
        """Whether the pick of `contracts_free k n` waits for the player, with n picks left after
        pick `last` (-1: none yet): before the first pick when as many drawn contracts as it may
        take are free, or more (asked when exactly n are too: the other seats see n taken either
        way); after one while a free one is left above it (else the step ends)."""
        return self._cfree_count(last) >= (n if last < 0 else 1)

    def _nonempty(self, p: cython.int) -> cython.int:
        c: cython.int
        m: cython.int = 0
        for c in range(self.d[O_NCAR + p]):
            if self.d[O_CAR + (p * 4 + c) * 3 + 2] > 0:
                m += 1
        return m

    # ---- applying decisions ------------------------------------------------------------
    def is_legal(self, code: cython.int) -> cython.bint:
        n: cython.int = self.gen_legal()
        i: cython.int
        for i in range(n):
            if self.legal_buf[i] == code:
                return True
        return False

    def apply(self, code: cython.int) -> None:
        """Apply a decision after checking that it is legal (ValueError otherwise)."""
        if not self.is_legal(code):
            raise ValueError(f"illegal decision code {code}")
        self.apply_unchecked(code)

    def apply_unchecked(self, code: cython.int) -> None:
        """Apply a legal decision, then any mid-turn step that has only one possible
        outcome (a forced choice is made, not asked), except a choice among cards drawn for the
        turn player's eyes only (Special cards, contracts): that one is asked even when forced,
        as whether it is asked would tell the other seats about those cards (all of one kind,
        none it can fulfil)."""
        self._apply1(code)
        while self.d[S_PHASE] == PH_EFFECT and self.gen_legal() == 1 and not draw_is_private(self.d):
            self._apply1(self.legal_buf[0])

    def private_draw(self) -> bool:
        """Whether the pending step chooses among cards drawn for the turn player's eyes only
        (`draw_is_private`)."""
        return bool(draw_is_private(self.d))

    def _apply1(self, code: cython.int) -> None:
        kind: cython.int = code >> 8
        arg: cython.int = code & 255
        p: cython.int = self.d[S_DECIDER]
        pend: cython.int = self.d[S_PEND]
        car: cython.int
        card: cython.int
        k: cython.int
        slot: cython.int
        i: cython.int
        if kind == K_SELECT:
            car = p * 4 + (arg >> 2)
            slot = arg & 3
            card = self._front(car)
            k = self._card_kind(card)
            self._unlink(car, card)
            if slot == OPT_PART:
                self.d[O_LOC + card] = L_BOX
                self._card_leave(p, card)
            else:
                self._relink_back(car, card)  # still in this caravan: no VP change
            if slot == OPT_PASS:
                self._end_turn()
                return
            self.d[S_CARD] = card
            self.d[S_CAR] = car
            self.d[S_SLOT] = slot
            self.d[S_ACT] = self.R.kact[k * 3 + slot]
            self.d[S_PC] = 0
            self.d[S_REG] = -1
            self.d[S_REG2] = -1
            self.d[S_PHASE] = PH_EFFECT
            self._run()
            return
        if pend == P_CHOOSE:
            self.d[S_REG2] = self.d[S_REG]
            self.d[S_REG] = arg
            self.d[S_PC] += 1
        elif pend == P_KEEP:
            self._resolve_keep(p, arg)
            self.d[S_PC] += 1
        elif pend == P_FULFIL:
            if kind == K_SKIP:
                self.d[S_PC] += 1
            else:
                self._resolve_fulfil(p, arg)
                if self.d[S_PEND] == P_CINNAMON:
                    return
                self.d[S_PC] += 1
        elif pend == P_CINNAMON:
            self.d[O_RES + p * 7 + arg] -= 1
            self.d[S_LAST] = arg
            self.d[S_N] -= 1
            if self.d[S_N] > 0:
                return
            self._finish_fulfil(p, self.d[S_CINNAMON_CON])
            self.d[S_PC] += 1
        elif pend == P_WHEAT:
            k = self._known_under(O_CKNOWN, p, arg if kind == K_FULFIL else -1, False)
            for i in range(self.d[S_LIMBO_N]):
                card = self.d[O_LIMBO + i]
                if kind == K_FULFIL and card == arg:
                    self._take_contract(p, card, False)
                else:
                    self._contract_under(card, k)
            self.d[S_LIMBO_N] = 0
            self.d[S_PC] += 1
        elif pend == P_CFREE:
            if kind == K_FULFIL:
                for i in range(self.d[S_LIMBO_N]):
                    if self.d[O_LIMBO + i] == arg:
                        self._limbo_remove_at(i)
                        break
                self._take_contract(p, arg, False)
                self.d[S_LAST] = arg
                self.d[S_N] -= 1
                if self.d[S_N] > 0 and self._cfree_waits(self.d[S_N], arg):
                    return
            k = self._known_under(O_CKNOWN, p, -1, False)
            for i in range(self.d[S_LIMBO_N]):
                self._contract_under(self.d[O_LIMBO + i], k)
            self.d[S_LIMBO_N] = 0
            self.d[S_PC] += 1
        elif pend == P_REMOVE or pend == P_REMOVE_PAT:
            if kind == K_REMOVE:
                self._remove_at(p * 4 + (arg >> 6), arg & 63)
            self.d[S_PC] += 1
        elif pend == P_REMOVE_ANY:
            if kind == K_REMOVE:
                self._remove_at(p * 4 + (arg >> 6), arg & 63)
                self.d[S_N] -= 1
                if self.d[S_N] > 0 and self._has_front(p):
                    return
            self.d[S_PC] += 1
        elif pend == P_ROUTE:
            self._route(p, arg)
            if self._next_router():
                return
            self.d[S_DECIDER] = self.d[S_TURNPL]
            self.d[S_PC] += 1
        elif pend == P_TAKE:
            card = self._take_discard_kind(arg)
            self._push_back(self.d[S_CAR], card)
            self.d[S_PC] += 1
        elif pend == P_TRADE_PAY:
            self.d[O_RES + p * 7 + GOLD] -= arg
            self.d[S_N] = arg
            self.d[S_LAST] = 0
            self.d[S_PEND] = P_TRADE
            return
        elif pend == P_TRADE:
            self._add(p, arg, TRADE_MULES if arg == MULES else TRADE_SPICE)
            self.d[S_LAST] = arg
            self.d[S_N] -= 1
            if self.d[S_N] > 0:
                return
            self.d[S_PC] += 1
        elif pend == P_SETDIST:
            self._setres(p, arg, self.d[S_REG])
            self.d[S_LAST] = arg
            self.d[S_N] -= 1
            if self.d[S_N] > 0:
                return
            self.d[S_PC] += 1
        self.d[S_PEND] = P_NONE
        self._run()

    def _relink_back(self, car: cython.int, card: cython.int) -> None:
        """Put a card that was unlinked from `car` at its back again (no VP change)."""
        b: cython.int = O_CAR + car * 3
        self.d[O_NXT + card] = -1
        if self.d[b + 2] == 0:
            self.d[b] = card
        else:
            self.d[O_NXT + self.d[b + 1]] = card
        self.d[b + 1] = card
        self.d[b + 2] += 1

    def _relink_front(self, car: cython.int, card: cython.int) -> None:
        b: cython.int = O_CAR + car * 3
        if self.d[b + 2] == 0:
            self.d[b + 1] = card
            self.d[O_NXT + card] = -1
        else:
            self.d[O_NXT + card] = self.d[b]
        self.d[b] = card
        self.d[b + 2] += 1

    def _remove_at(self, car: cython.int, pos: cython.int) -> None:
        card: cython.int = self._at(car, pos)
        if card >= 0:
            self._leave_caravan(card, L_BOX)

    def _resolve_keep(self, p: cython.int, kind: cython.int) -> None:
        i: cython.int
        card: cython.int
        kept: cython.int = -1
        src: cython.int = self.d[S_LIMBO_SRC]
        k: cython.int = 0
        for i in range(self.d[S_LIMBO_N]):
            card = self.d[O_LIMBO + i]
            if self.R.ckind[card] == kind:
                kept = card
                break
        if src != DECK_STANDARD:
            k = self._known_under(O_KNOWN, p, kept, False)
        for i in range(self.d[S_LIMBO_N]):
            card = self.d[O_LIMBO + i]
            if card == kept:
                continue
            if src == DECK_STANDARD:
                self._discard(card)
            else:
                self._special_under(card, k)
        self.d[S_LIMBO_N] = 0
        self.d[O_KNOWN + kept] = 0
        self.d[O_LOC + kept] = L_LIMBO
        if self.d[S_LIMBO_FRONT]:
            self._push_front(self.d[S_CAR], kept)
        else:
            self._push_back(self.d[S_CAR], kept)

    def _resolve_fulfil(self, p: cython.int, c: cython.int) -> None:
        flags: cython.int = self.d[S_FLAGS]
        if not (flags & F_FREE):
            self._pay_contract(p, c, flags)
            if (flags & F_SPICES_FOR_CINNAMON) and self.R.con_cost[c * 7 + CINNAMON] > 0:
                self.d[S_CINNAMON_CON] = c
                self.d[S_N] = self.R.con_cost[c * 7 + CINNAMON]
                self.d[S_LAST] = 0
                self.d[S_PEND] = P_CINNAMON
                return
        self._finish_fulfil(p, c)

    def _finish_fulfil(self, p: cython.int, c: cython.int) -> None:
        self._display_remove(c)
        self._take_contract(p, c, True)
        self._refill_display()

    def _route(self, p: cython.int, idx: cython.int) -> None:
        """`route_fronts`: the front card of each non-empty caravan of p goes to the back of a
        different non-empty caravan of p, by route `idx` of ROUTE (several may go to the same
        caravan, appended in the route's order). Every front is taken first, so moving them
        one after another or all at once is the same."""
        cars: cython.int[4]
        fronts: cython.int[4]
        m: cython.int
        i: cython.int
        j: cython.int
        src: cython.int
        dst: cython.int
        if not cython.compiled:
            cars = [0, 0, 0, 0]
            fronts = [0, 0, 0, 0]
        m = self._route_cars(p, cars)
        for i in range(m):
            fronts[i] = self._front(cars[i])
            self._unlink(cars[i], fronts[i])
        j = ROUTE_OFF[m] + idx * m * 2
        for i in range(m):
            src = ROUTE[j + i * 2]
            dst = ROUTE[j + i * 2 + 1]
            self._relink_back(cars[dst], fronts[src])
            self.d[O_LOC + fronts[src]] = cars[dst]

    def _route_cars(self, p: cython.int, cars: cython.p_int) -> cython.int:
        """The caravans `route_fronts` moves the front cards of for p: its non-empty ones, in caravan
        order, into `cars` (4 ints); how many."""
        c: cython.int
        m: cython.int = 0
        for c in range(self.d[O_NCAR + p]):
            if self.d[O_CAR + (p * 4 + c) * 3 + 2] > 0:
                cars[m] = p * 4 + c
                m += 1
        return m

    def route_sources(self) -> list:
        """The deciding player's caravans (0..3) whose front cards a route (`K_ROUTE`) moves, in
        the order the route tables number them (none when the game is over)."""
        p: cython.int = self.current_player()
        m: cython.int = 0
        cars: cython.int[4]
        if not cython.compiled:
            cars = [0, 0, 0, 0]
        if p >= 0:
            m = self._route_cars(p, cars)
        return [cars[i] - p * 4 for i in range(m)]

    def _next_router(self) -> cython.bint:
        """Move `route_fronts` on to the next player who has to route; False when all are done."""
        n: cython.int = self.d[S_PLAYERS]
        q: cython.int
        while self.d[S_ROUTERS_LEFT] > 0:
            q = self.d[S_ROUTER]
            self.d[S_ROUTER] = (q + 1) % n
            self.d[S_ROUTERS_LEFT] -= 1
            if self._nonempty(q) >= 2:
                self.d[S_DECIDER] = q
                self.d[S_PEND] = P_ROUTE
                return True
        return False

    # ---- the effect interpreter ------------------------------------------------------------
    def _run(self) -> None:
        """Run the current action's steps until one needs a decision or the action ends."""
        p: cython.int = self.d[S_TURNPL]
        act: cython.int = self.d[S_ACT]
        base: cython.int = self.R.a_start[act]
        alen: cython.int = self.R.a_len[act]
        pc: cython.int
        op: cython.int
        a: cython.int
        b: cython.int
        c: cython.int
        r: cython.int
        q: cython.int
        i: cython.int
        _i: cython.int
        k: cython.int
        n: cython.int = self.d[S_PLAYERS]
        card: cython.int
        m: cython.int
        while True:
            pc = self.d[S_PC]
            if pc >= alen:
                self._end_turn()
                return
            op = self.R.ops[(base + pc) * 4]
            a = self.R.ops[(base + pc) * 4 + 1]
            b = self.R.ops[(base + pc) * 4 + 2]
            c = self.R.ops[(base + pc) * 4 + 3]
            r = self.d[S_REG] if a == REG else a
            if op == OP_PAY:
                self.d[O_RES + p * 7 + r] -= b
            elif op == OP_INC:
                self._add(p, r, self._amount(p, b))
            elif op == OP_SET:
                self._setres(p, r, b)
            elif op == OP_CHOOSE:
                self.d[S_N] = a
                self.d[S_LAST] = b
                self.d[S_FLAGS] = c
                self.d[S_PEND] = P_CHOOSE
                if self.gen_legal() > 0:
                    return
                self.d[S_PEND] = P_NONE
            elif op == OP_DRAW:
                k = self._amount(p, b)
                self.d[S_LIMBO_N] = 0
                self.d[S_LIMBO_SRC] = a
                self.d[S_LIMBO_FRONT] = c
                for _i in range(min(k, LIMBO_CAP)):
                    card = self._draw_standard() if a == DECK_STANDARD else deck_take(self.d, DECK_SPECIAL)
                    if card < 0:
                        break
                    self.d[O_LOC + card] = L_LIMBO
                    # a Special card: who knew its place before (a Standard card is seen by all)
                    mark_drawn(self.d, O_KNOWN, card, p, self.d[O_KNOWN + card] if a == DECK_SPECIAL else 0)
                    self._limbo_add(card)
                if self.d[S_LIMBO_N] > 0:
                    self.d[S_PEND] = P_KEEP
                    return
            elif op == OP_FULFIL:
                self.d[S_FLAGS] = a
                self.d[S_PEND] = P_FULFIL
                if self.gen_legal() > 1:
                    return
                self.d[S_PEND] = P_NONE
            elif op == OP_CONTRACTS_WHEAT or op == OP_CONTRACTS_FREE:
                self.d[S_LIMBO_N] = 0
                self.d[S_LIMBO_SRC] = DECK_CONTRACT
                for _i in range(min(a, LIMBO_CAP)):
                    card = deck_take(self.d, DECK_CONTRACT)
                    if card < 0:
                        break
                    self.d[O_CLOC + card] = CL_LIMBO
                    mark_drawn(self.d, O_CKNOWN, card, p, self.d[O_CKNOWN + card])
                    self._limbo_add(card)
                if op == OP_CONTRACTS_WHEAT and self.d[S_LIMBO_N] > 0:
                    # asked even when none has a wheat field (only `skip`): the drawn contracts are
                    # the player's alone, and a turn going on without a pause would tell the others
                    self.d[S_PEND] = P_WHEAT
                    return
                if op == OP_CONTRACTS_FREE and b > 0 and self._cfree_waits(b, -1):
                    # as many free contracts as may be taken (b) or more: the player picks b of them.
                    # Asked when exactly b are free too (a pick with one outcome): the other seats
                    # see b contracts taken either way, and a turn going on without a pause would
                    # tell them that every contract put back was a large one
                    self.d[S_N] = b
                    self.d[S_LAST] = -1
                    self.d[S_PEND] = P_CFREE
                    return
                k = self._known_under(O_CKNOWN, p, -1, op == OP_CONTRACTS_FREE)
                for i in range(self.d[S_LIMBO_N]):
                    card = self.d[O_LIMBO + i]
                    if op == OP_CONTRACTS_FREE and self._cfree(card, -1):
                        self._take_contract(p, card, False)
                    else:
                        self._contract_under(card, k)
                self.d[S_LIMBO_N] = 0
            elif op == OP_REFRESH_DISPLAY:
                m = self.d[S_DISP_N]
                for i in range(m):
                    self._contract_under(self.d[O_DISP + i], (1 << n) - 1)
                self.d[S_DISP_N] = 0
                self._refill_display()
            elif op == OP_OPP_INC or op == OP_OPP_SET or op == OP_OPP_DEC:
                for q in range(n):
                    if q != p:
                        if op == OP_OPP_INC:
                            self._add(q, r, b)
                        elif op == OP_OPP_SET:
                            self._setres(q, r, b)
                        else:
                            self._add(q, r, -b)
            elif op == OP_OPP_DEC_IF_GE:
                for q in range(n):
                    if q != p and self.d[O_RES + q * 7 + r] >= b:
                        self._add(q, r, -c)
            elif op == OP_IF_OPP_ZERO:
                m = 0
                for q in range(n):
                    if q != p and self.d[O_RES + q * 7 + r] == 0:
                        m = 1
                if not m:
                    self.d[S_PC] += 1  # skip the next step
            elif op == OP_STEAL:
                m = 0
                for q in range(n):
                    if q != p and self.d[O_RES + q * 7 + r] > 0:
                        self._add(q, r, -b)
                        m += b
                self._add(p, r, m)
            elif op == OP_RAISE_TO_MAX_OPP:
                m = self.d[O_RES + p * 7 + r]
                for q in range(n):
                    if q != p and self.d[O_RES + q * 7 + r] > m:
                        m = self.d[O_RES + q * 7 + r]
                self._setres(p, r, m)
            elif op == OP_REMOVE_THIS or op == OP_REMOVE_PATRIARCH:
                self.d[S_PEND] = P_REMOVE if op == OP_REMOVE_THIS else P_REMOVE_PAT
                m = self.gen_legal()
                if (op == OP_REMOVE_THIS and m > 1) or (op == OP_REMOVE_PATRIARCH and m > 0):
                    return
                self.d[S_PEND] = P_NONE
            elif op == OP_REMOVE_ANY:
                if self._has_front(p):
                    self.d[S_N] = a
                    self.d[S_PEND] = P_REMOVE_ANY
                    return
            elif op == OP_TURN_SELF:
                self.d[O_FLIP + self.d[S_CARD]] ^= 1
            elif op == OP_TURN_OPPONENTS:
                for q in range(n):
                    if q != p:
                        self._turn_all(q)
            elif op == OP_PATRIARCHS_FRONT:
                for q in range(n):
                    self._patriarchs_front(q)
            elif op == OP_ROUTE_FRONTS:
                self.d[S_ROUTER] = p
                self.d[S_ROUTERS_LEFT] = n
                if self._next_router():
                    return
                self.d[S_DECIDER] = p
            elif op == OP_TAKE_DISCARD:
                if self.d[S_DISC_N] > 0:
                    self.d[S_PEND] = P_TAKE
                    return
            elif op == OP_NEW_CARAVAN:
                card = self.d[S_SPARE]
                if card >= 0 and self.d[O_NCAR + p] < 4:
                    k = p * 4 + self.d[O_NCAR + p]
                    self.d[O_NCAR + p] += 1
                    self.d[S_SPARE] = -1
                    self.d[O_FLIP + card] = 0
                    self._push_back(k, card)
            elif op == OP_SHUFFLE:
                self._shuffle_special()
            elif op == OP_TRADE:
                self.d[S_PEND] = P_TRADE_PAY
                return
            elif op == OP_SET_DISTINCT:
                self.d[S_REG2] = a
                self.d[S_N] = b
                self.d[S_REG] = c
                self.d[S_LAST] = -1
                self.d[S_PEND] = P_SETDIST
                return
            self.d[S_PC] += 1

    def _turn_all(self, q: cython.int) -> None:
        c: cython.int
        card: cython.int
        for c in range(self.d[O_NCAR + q]):
            if self.d[O_CAR + (q * 4 + c) * 3 + 2] == 0:
                continue
            card = self.d[O_CAR + (q * 4 + c) * 3]
            while card >= 0:
                if self.R.ckind[card] == self.R.k_patriarch:
                    self.d[O_FLIP + card] ^= 1
                card = self.d[O_NXT + card]

    def _patriarchs_front(self, q: cython.int) -> None:
        """Move each face-up Patriarch of q to the front of its caravan, in their order."""
        c: cython.int
        car: cython.int
        card: cython.int
        nxt: cython.int
        i: cython.int
        m: cython.int
        pats: cython.int[64]
        if not cython.compiled:
            pats = [0] * 64
        for c in range(self.d[O_NCAR + q]):
            car = q * 4 + c
            if self.d[O_CAR + car * 3 + 2] == 0:
                continue
            m = 0
            card = self.d[O_CAR + car * 3]
            while card >= 0:
                nxt = self.d[O_NXT + card]
                if self.R.ckind[card] == self.R.k_patriarch and not self.d[O_FLIP + card] and m < 64:
                    self._unlink(car, card)
                    pats[m] = card
                    m += 1
                card = nxt
            for i in range(m - 1, -1, -1):
                self._relink_front(car, pats[i])

    def _shuffle_special(self) -> None:
        """Shuffle the Special deck: no seat knows where any of its cards is any more."""
        i: cython.int
        for i in range(self.d[S_SPC_N]):
            self.d[O_KNOWN + self.d[deck_slot(self.d, DECK_SPECIAL, i)]] = 0
        self._deck_shuffle(DECK_SPECIAL)

    # ---- whole games and information sets ------------------------------------------------
    def playout(self, seed: cython.ulonglong) -> cython.int:
        """Play uniformly random legal decisions to the end; return how many were made.
        ValueError on a state that is not over and offers no decision (the loader lets none
        through, and play reaches none: a safety net, where the compiled build would divide by 0)."""
        steps: cython.int = 0
        n: cython.int
        self.rng = _mix(seed)
        while self.d[S_PHASE] != PH_OVER:
            n = self.gen_legal()
            if n <= 0:
                raise ValueError("no legal decision in a state that is not over")
            self.apply_unchecked(self.legal_buf[self._randint(n)])
            steps += 1
        return steps

    def playout_limit(self, seed: cython.ulonglong, max_decisions: cython.int) -> cython.int:
        """Like playout, but stop after `max_decisions` decisions; returns how many were made
        (ValueError as playout's)."""
        steps: cython.int = 0
        n: cython.int
        self.rng = _mix(seed)
        while self.d[S_PHASE] != PH_OVER and steps < max_decisions:
            n = self.gen_legal()
            if n <= 0:
                raise ValueError("no legal decision in a state that is not over")
            self.apply_unchecked(self.legal_buf[self._randint(n)])
            steps += 1
        return steps

    def determinize_into(self, dst: "State", observer: cython.int, seed: cython.ulonglong) -> None:
        """determinize() into an existing state (no allocation)."""
        dst.copy_from(self)
        dst.rng = _mix(seed)
        dst._resample(DECK_STANDARD, O_LOC, L_LIMBO, observer)
        dst._resample(DECK_SPECIAL, O_KNOWN, L_LIMBO, observer)
        dst._resample(DECK_CONTRACT, O_CKNOWN, CL_LIMBO, observer)

    def determinize(self, observer: cython.int, seed: cython.ulonglong) -> "State":
        """A copy in which everything `observer` cannot know is sampled afresh: the order of
        the Standard deck, the unknown part of the Special and Contract decks (and of drawn
        cards only the drawer saw), and the state's own random stream. What it returns
        depends only on what the observer knows and on `seed`."""
        s: State = self.clone()
        self.determinize_into(s, observer, seed)
        return s

    def shuffle_unknown(self, seed: cython.ulonglong) -> None:
        """Shuffle afresh what no seat knows, by `seed`: the Standard deck's order, the places in
        the Special and Contract decks that no seat knows, and the state's own random stream.
        Every seat's information stays as it was (a place some seat knows keeps its card); only
        what is to come changes (the web table: a request played again draws other cards)."""
        self.rng = _mix(seed)
        self._deck_shuffle(DECK_STANDARD)
        self._shuffle_places(DECK_SPECIAL, O_KNOWN)
        self._shuffle_places(DECK_CONTRACT, O_CKNOWN)

    def _shuffle_places(self, deck: cython.int, known_off: cython.int) -> None:
        """Shuffle the cards of `deck` whose place no seat knows among those places."""
        pos: cython.int[136]
        m: cython.int = 0
        i: cython.int
        j: cython.int
        t: cython.int
        x: cython.int
        if not cython.compiled:
            pos = [0] * 136
        for i in range(self.d[DECK_N[deck]]):
            x = self.d[deck_slot(self.d, deck, i)]
            if self.d[known_off + x] == 0:
                pos[m] = deck_slot(self.d, deck, i)
                m += 1
        for i in range(m - 1, 0, -1):
            j = self._randint(i + 1)
            t = self.d[pos[i]]
            self.d[pos[i]] = self.d[pos[j]]
            self.d[pos[j]] = t

    def _resample(self, deck: cython.int, known_off: cython.int, limbo_loc: cython.int,
                  observer: cython.int) -> None:
        pos: cython.int[136]
        cards: cython.int[136]
        m: cython.int = 0
        i: cython.int
        j: cython.int
        t: cython.int
        x: cython.int
        n: cython.int = self.d[DECK_N[deck]]
        drawn: cython.bint = False
        if not cython.compiled:
            pos = [0] * 136
            cards = [0] * 136
        # positions the observer does not know: deck slots, then hidden drawn cards
        for i in range(n):
            x = self.d[deck_slot(self.d, deck, i)]
            if deck == DECK_STANDARD or not ((self.d[known_off + x] >> observer) & 1):
                pos[m] = deck_slot(self.d, deck, i)
                cards[m] = x
                m += 1
        if self.d[S_PHASE] == PH_EFFECT and self.d[S_LIMBO_SRC] == deck and deck != DECK_STANDARD:
            for i in range(self.d[S_LIMBO_N]):
                x = self.d[O_LIMBO + i]
                if not ((self.d[known_off + x] >> observer) & 1):
                    pos[m] = O_LIMBO + i
                    cards[m] = x
                    m += 1
                    drawn = True
        # canonical order first (so that the result cannot depend on the hidden order) ...
        for i in range(1, m):
            x = cards[i]
            j = i - 1
            while j >= 0 and self._sort_key(cards[j], deck) > self._sort_key(x, deck):
                cards[j + 1] = cards[j]
                j -= 1
            cards[j + 1] = x
        # ... then a seeded shuffle
        for i in range(m - 1, 0, -1):
            j = self._randint(i + 1)
            t = cards[i]
            cards[i] = cards[j]
            cards[j] = t
        for i in range(m):
            self.d[pos[i]] = cards[i]
        if drawn:
            # a card swapped between the deck and the drawn ones takes its new slot's place (a
            # Special card's location, or a contract's)
            for i in range(m):
                x = limbo_loc if O_LIMBO <= pos[i] < O_LIMBO + LIMBO_CAP else (
                    L_SPC if deck == DECK_SPECIAL else CL_DECK)
                self.d[(O_LOC if deck == DECK_SPECIAL else O_CLOC) + cards[i]] = x
        # what others knew is not part of the observer's information: keep only its own
        if deck != DECK_STANDARD:
            for i in range(n):
                x = self.d[deck_slot(self.d, deck, i)]
                self.d[known_off + x] &= 1 << observer
            for i in range(self.d[S_LIMBO_N]):
                if self.d[S_LIMBO_SRC] == deck:
                    self.d[known_off + self.d[O_LIMBO + i]] &= 1 << observer

    def _sort_key(self, x: cython.int, deck: cython.int) -> cython.int:
        if deck == DECK_CONTRACT:
            return x
        return self.R.ckind[x] * 256 + x

    def fingerprint(self) -> cython.ulonglong:
        """A 64-bit hash of the whole state (FNV-1a over the state array)."""
        h: cython.ulonglong = FNV_OFFSET
        i: cython.int
        for i in range(D_SIZE):
            h = _wrap((h ^ cython.cast(cython.ulonglong, self.d[i] & 0xFFFF)) * FNV_PRIME)
        return h
