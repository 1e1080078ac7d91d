# C types for bots/kashgar_eval.py compiled as bots.kashgar_eval_c (the same source; see setup.py):
# a subclass of the compiled search's SearchGame, reading compiled engine states as C structs.
cimport cython
from bots.ismcts_c cimport Rng, SearchGame, double_array, int_array
from engine_ext.core_c cimport State as CState, Rules as CRules

cdef int ROLL_EVAL, ROLL_TURN, FIXED_FEATURES, MAX_FEATURES, SEAT_FIXED, GLOBAL_FIXED, MAX_KINDS, MAX_BLOCK
cdef int MAX_HIDDEN, MAX_LAYERS, MAX_DISPLAY, POLICY_KINDS, POLICY_OPTIONS, POLICY_EXTRA, MAX_POLICY, POL_OFF


cdef class KashgarSearchGame(SearchGame):
    cdef public int rollout
    cdef public double eps
    cdef public CState scratch
    cdef public object _w, _f, _vals, _rv
    cdef public double[::1] rv
    cdef public double[::1] w
    cdef public double[::1] f
    cdef public double[::1] vals
    cdef public int nfeat
    cdef public int o_res, o_disp, s_disp_n, s_players, s_turn, s_phase, o_ncar, o_car, o_nxt, o_flip, ph_effect
    cdef public int s_start, s_turnpl, s_turnlim, s_endtrig, s_std_n, s_spc_n, s_con_n, s_disc_n
    cdef public int o_pl, o_loc, l_std, l_spc, pl_ncon, pl_nwheat, ncards, end_vp
    cdef public object _miss
    cdef public int[::1] miss
    cdef public object _blk, _hid, _mw, _lsz
    cdef public double[::1] blk
    cdef public double[::1] hid
    cdef public double[::1] mw
    cdef public int[::1] lsz
    cdef public int nlayers, bsize, nin
    cdef public double blend
    cdef public object _pw, _pf, _ps
    cdef public double[::1] pw
    cdef public double[::1] pf
    cdef public double[::1] ps
    cdef public int npol
    cdef public double ptemp
    cdef public int pbelow

    cpdef _load_layout(self)

    @cython.locals(n=int, i=int)
    cpdef set_weights(self, object weights, object rollout_weights=*)

    @cython.locals(s=CState)
    cpdef void start(self, object root)
    @cython.locals(s=CState)
    cpdef object determinize(self, object root, int observer, unsigned long long seed)
    @cython.locals(s=CState)
    cpdef bint is_terminal(self, object d)
    @cython.locals(s=CState)
    cpdef int current_player(self, object d)
    @cython.locals(s=CState, n=int, m=int, i=int)
    cpdef int legal(self, object d, int[::1] out)
    @cython.locals(s=CState)
    cpdef void apply(self, object d, int code)
    cpdef bint has_turns(self)
    @cython.locals(s=CState)
    cpdef bint within_turn(self, object d)
    @cython.locals(s=CState, n=int)
    cpdef void play_greedy(self, object d, Rng rng)
    @cython.locals(s=CState, turn=int, _k=int)
    cpdef void evaluate(self, object d, Rng rng)

    @cython.locals(r=int, k=int, _k=int, i=int, c=int, car=int, card=int, need=int, have=int, covered=int,
                   total=int, best=double, reach=double, x=double, R=CRules)
    cdef void _features(self, CState d, int p)

    @cython.locals(p=int, best=int)
    cpdef double progress(self, CState d)

    cpdef list features(self, CState d, int p)

    cpdef double heuristic(self, CState d, int p)

    @cython.locals(i=int, v=double)
    cdef double _value(self, CState d, int p, double t, int base)

    @cython.locals(i=int, best=int, ties=int, v=double, bestv=double, me=int, t=double, sc=CState)
    cdef int _greedy_choice(self, CState d, int n, Rng rng)

    @cython.locals(s=CState, sc=CState, i=int, j=int, n=int, m=int, best=int, bestv=double, me=int, t=double)
    cpdef int greedy_rank(self, object d, int[::1] out, int k)

    @cython.locals(n=int)
    cpdef int greedy_choice(self, CState d, Rng rng)

    @cython.locals(n=int)
    cdef void _rollout_step(self, CState d, int greedy, Rng rng)

    @cython.locals(p=int, w=int, m=double, sm=double, t=double)
    cdef void _leaf_rewards(self, CState d, int np_)

    @cython.locals(i=int, total=int)
    cpdef set_model(self, object sizes, object weights)

    @cython.locals(r=int, k=int, i=int, j=int, c=int, car=int, card=int, have=int, missing=int,
                   ncards=int, payable=int, cycle=int, payvp=int, cyclevp=int, fewest=int, np_=int, nk=int,
                   R=CRules)
    cdef void _seat_block(self, CState d, int q, int off)

    @cython.locals(q=int, i=int, c=int, loc=int, nk=int, g=int)
    cdef void _stage(self, CState d, int np_, double t)

    @cython.locals(s=int, q=int, i=int, j=int, lay=int, nin=int, nout=int, w=int, src=int, dst=int, bias=int,
                   x=double)
    cdef double _logit(self, int p, int np_)

    @cython.locals(np_=int, s=int, q=int, out=list)
    cpdef list model_features(self, CState d, int p)

    @cython.locals(np_=int)
    cpdef double model_logit(self, CState d, int p)

    @cython.locals(np_=int)
    cpdef list leaf_rewards(self, CState d)

    @cython.locals(i=int)
    cpdef set_policy(self, object weights, double temperature=*, bint below=*)

    @cython.locals(q=int)
    cdef void _policy_before(self, CState d, int me, double t)

    @cython.locals(i=int, q=int, j=int, v=double, kind=int, nb=int, sc=CState)
    cdef int _policy_row(self, CState d, int code, int me, double t)

    @cython.locals(i=int, k=int, m=int, v=double, me=int, t=double)
    cdef void _policy_scores(self, CState d, int n)

    @cython.locals(i=int, best=int, ties=int, bestv=double, sm=double, x=double)
    cdef int _policy_choice(self, CState d, int n, Rng rng)

    @cython.locals(n=int, i=int, m=int, me=int, t=double, out=list)
    cpdef list policy_features(self, CState d)

    @cython.locals(n=int)
    cpdef list policy_scores(self, CState d)

    @cython.locals(s=CState, i=int, m=double, sm=double)
    cpdef int priors(self, object d, int[::1] codes, int n, double[::1] out)
