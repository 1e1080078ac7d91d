# C declarations for core.py compiled as core_c (Cython pure-Python mode).
# The constants below are generated from core.py's module-level integer constants.
# cython: language_level=3

cdef unsigned long long XS_MUL, LCG_MUL, LCG_ADD, FNV_OFFSET, FNV_PRIME
cdef unsigned long long _wrap(unsigned long long x)
cdef unsigned long long _mix(unsigned long long seed)

cdef int NRES
cdef int GOLD
cdef int MULES
cdef int CINNAMON
cdef int REG
cdef int SPICE_MASK
cdef int TRADE_SPICE
cdef int TRADE_MULES
cdef int END_VP
cdef int OP_PAY
cdef int OP_INC
cdef int OP_SET
cdef int OP_CHOOSE
cdef int OP_DRAW
cdef int OP_FULFIL
cdef int OP_CONTRACTS_WHEAT
cdef int OP_CONTRACTS_FREE
cdef int OP_REFRESH_DISPLAY
cdef int OP_OPP_INC
cdef int OP_OPP_SET
cdef int OP_OPP_DEC
cdef int OP_OPP_DEC_IF_GE
cdef int OP_IF_OPP_ZERO
cdef int OP_STEAL
cdef int OP_RAISE_TO_MAX_OPP
cdef int OP_REMOVE_THIS
cdef int OP_REMOVE_ANY
cdef int OP_REMOVE_PATRIARCH
cdef int OP_TURN_SELF
cdef int OP_TURN_OPPONENTS
cdef int OP_PATRIARCHS_FRONT
cdef int OP_ROUTE_FRONTS
cdef int OP_TAKE_DISCARD
cdef int OP_NEW_CARAVAN
cdef int OP_SHUFFLE
cdef int OP_TRADE
cdef int OP_SET_DISTINCT
cdef int AMT_CONTRACTS
cdef int AMT_CARAVAN
cdef int AMT_PATRIARCHS
cdef int AMT_HALFMULES
cdef int DECK_STANDARD
cdef int DECK_SPECIAL
cdef int DECK_CONTRACT
cdef int F_FREE
cdef int F_NOMULES
cdef int F_SMALL
cdef int F_GOLD_FOR_SPICES
cdef int F_SPICES_FOR_CINNAMON
cdef int CK_SMALL
cdef int CK_LARGE
cdef int CK_WHEAT
cdef int CK_PEPPER
cdef int CK_GOLD
cdef int K_SELECT
cdef int K_CHOOSE
cdef int K_KEEP
cdef int K_FULFIL
cdef int K_SKIP
cdef int K_TAKE
cdef int K_REMOVE
cdef int K_PAY
cdef int K_ROUTE
cdef int OPT_A
cdef int OPT_B
cdef int OPT_PART
cdef int OPT_PASS
cdef int P_NONE
cdef int P_CHOOSE
cdef int P_KEEP
cdef int P_FULFIL
cdef int P_WHEAT
cdef int P_CINNAMON
cdef int P_REMOVE
cdef int P_REMOVE_ANY
cdef int P_REMOVE_PAT
cdef int P_ROUTE
cdef int P_TAKE
cdef int P_TRADE_PAY
cdef int P_TRADE
cdef int P_SETDIST
cdef int P_CFREE
cdef int PH_SELECT
cdef int PH_EFFECT
cdef int PH_OVER
cdef int L_STD
cdef int L_DISC
cdef int L_SPC
cdef int L_BOX
cdef int L_UNUSED
cdef int L_SPARE
cdef int L_LIMBO
cdef int CL_DECK
cdef int CL_DISPLAY
cdef int CL_LIMBO
cdef int NCARDS
cdef int NCON
cdef int STD_CAP
cdef int SPC_CAP
cdef int CON_CAP
cdef int DISC_CAP
cdef int LIMBO_CAP
cdef int LEGAL_CAP
cdef int S_PLAYERS
cdef int S_TURNPL
cdef int S_DECIDER
cdef int S_PHASE
cdef int S_START
cdef int S_TURN
cdef int S_TURNLIM
cdef int S_ENDTRIG
cdef int S_SPARE
cdef int S_STD_TOP
cdef int S_STD_N
cdef int S_SPC_TOP
cdef int S_SPC_N
cdef int S_CON_TOP
cdef int S_CON_N
cdef int S_DISC_N
cdef int S_DISP_N
cdef int S_LIMBO_N
cdef int S_LIMBO_SRC
cdef int S_LIMBO_FRONT
cdef int S_CARD
cdef int S_CAR
cdef int S_ACT
cdef int S_SLOT
cdef int S_PC
cdef int S_REG
cdef int S_REG2
cdef int S_N
cdef int S_LAST
cdef int S_PEND
cdef int S_FLAGS
cdef int S_ROUTER
cdef int S_ROUTERS_LEFT
cdef int S_CINNAMON_CON
cdef int O_NCAR
cdef int O_RES
cdef int O_CAR
cdef int O_LOC
cdef int O_NXT
cdef int O_FLIP
cdef int O_KNOWN
cdef int KNEW
cdef int O_STD
cdef int O_SPC
cdef int O_CON
cdef int O_DISC
cdef int O_DISP
cdef int O_LIMBO
cdef int O_CLOC
cdef int O_CKNOWN
cdef int O_PL
cdef int PL_NCON
cdef int PL_NWHEAT
cdef int PL_CVP
cdef int PL_CARDVP
cdef int PL_NWHEATVP
cdef int PL_LAST
cdef int PL_VPC
cdef int D_SIZE
cdef int ROUTE_N[5]
cdef int ROUTE_OFF[5]
cdef int ROUTE[1888]
cdef int DECK_OFF[3]
cdef int DECK_MASK[3]
cdef int DECK_TOP[3]
cdef int DECK_N[3]
# the rules on the state array: plain C (they cannot raise), inlined where they are called
cdef int deck_slot(short* d, int deck, int i) noexcept
cdef int deck_take(short* d, int deck) noexcept
cdef void deck_put_under(short* d, int deck, int card) noexcept
cdef void mark_drawn(short* d, int known_off, int card, int p, int knew) noexcept
cdef bint draw_is_private(short* d) noexcept
cdef int last_seat(short* d) noexcept
cdef bint at_turn_limit(short* d) noexcept
cdef bint ends_after(short* d, int tp) noexcept


cdef class Rules:
    cdef public int nkinds, k_patriarch, k_matriarch
    cdef int kvp[64]
    cdef int kwheat[64]
    cdef int kbang[64]
    cdef int kact[192]
    cdef int ckind[128]
    cdef int a_start[256]
    cdef int a_len[256]
    cdef int a_cost[1792]
    cdef int a_minmask[256]
    cdef int a_min[256]
    cdef int a_trade[256]
    cdef int ops[4096]
    cdef int con_kind[40]
    cdef int con_vp[40]
    cdef int con_mules[40]
    cdef int con_cost[280]
    cdef int con_pay_res[40]
    cdef int con_pay_n[40]


cdef class State:
    cdef public Rules R
    cdef short d[1088]
    cdef public int nlegal
    cdef int legal_buf[256]
    cdef unsigned long long rng

    cpdef unsigned long long get_rng(self)
    cdef unsigned long long _rand(self)
    cdef int _randint(self, int n)
    cpdef State clone(self)
    cpdef void copy_from(self, State other)
    cpdef int current_player(self)
    cpdef int turn_player(self)
    cpdef bint is_terminal(self)
    cpdef int pending(self)
    cpdef int res(self, int p, int r)
    cpdef int vp(self, int p)
    cpdef int winner(self)
    cdef void _add(self, int p, int r, int n)
    cdef void _setres(self, int p, int r, int v)
    cdef int _card_kind(self, int card) noexcept  # (the evaluator calls it per caravan card)
    cdef void _card_enter(self, int p, int card)
    cdef void _card_leave(self, int p, int card)
    cdef int _front(self, int car)
    cdef void _push_back(self, int car, int card)
    cdef void _push_front(self, int car, int card)
    cdef void _arrive(self, int car, int card)
    cdef void _unlink(self, int car, int card)
    cdef void _leave_caravan(self, int card, int newloc)
    cdef int _at(self, int car, int pos)
    cdef bint _has_front(self, int p)
    cdef int _draw_standard(self)
    cdef void _reshuffle_standard(self)
    cdef void _deck_shuffle(self, int deck)
    cdef void _special_under(self, int card, int known)
    cdef void _contract_under(self, int c, int known)
    cdef int _known_under(self, int known_off, int p, int kept, bint free_taken)
    cdef void _discard(self, int card)
    cdef int _take_discard_kind(self, int kind)
    cdef void _refill_display(self)
    cdef void _display_remove(self, int c)
    cdef void _limbo_add(self, int card)
    cdef void _limbo_remove_at(self, int i)
    cdef void _take_contract(self, int p, int c, bint payout)
    cdef bint _can_fulfil(self, int p, int c, int flags)
    cdef void _pay_contract(self, int p, int c, int flags)
    cdef int _amount(self, int p, int a)
    cdef bint _can_start(self, int p, int kind, int slot)
    cdef void _end_turn(self)
    cdef void _emit(self, int code)
    cpdef int gen_legal(self)
    cdef int _cinnamon_surplus(self, int p, int r)
    cdef bint _cfree(self, int c, int after)
    cdef int _cfree_count(self, int after)
    cdef bint _cfree_waits(self, int n, int last)
    cdef int _nonempty(self, int p)
    cpdef bint is_legal(self, int code)
    cpdef apply(self, int code)
    cpdef void apply_unchecked(self, int code)
    cdef void _apply1(self, int code)
    cdef void _relink_back(self, int car, int card)
    cdef void _relink_front(self, int car, int card)
    cdef void _remove_at(self, int car, int pos)
    cdef void _resolve_keep(self, int p, int kind)
    cdef void _resolve_fulfil(self, int p, int c)
    cdef void _finish_fulfil(self, int p, int c)
    cdef void _route(self, int p, int idx)
    cdef int _route_cars(self, int p, int* cars)
    cdef bint _next_router(self)
    cdef void _run(self)
    cdef void _turn_all(self, int q)
    cdef void _patriarchs_front(self, int q)
    cdef void _shuffle_special(self)
    cpdef int playout(self, unsigned long long seed)
    cpdef int playout_limit(self, unsigned long long seed, int max_decisions)
    cpdef void determinize_into(self, State dst, int observer, unsigned long long seed)
    cpdef State determinize(self, int observer, unsigned long long seed)
    cpdef void shuffle_unknown(self, unsigned long long seed)
    cdef void _shuffle_places(self, int deck, int known_off)
    cdef void _resample(self, int deck, int known_off, int limbo_loc, int observer)
    cdef int _sort_key(self, int x, int deck)
    cpdef unsigned long long fingerprint(self)
