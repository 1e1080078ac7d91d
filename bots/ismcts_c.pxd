# C types for bots/ismcts.py compiled as bots.ismcts_c (the same source; see setup.py).
cimport cython
from engine_ext.core_c cimport State as CState, Rules as CRules

cdef unsigned long long MASK64
cdef int FIXED_FEATURES, MAX_FEATURES

@cython.locals(mean=double)
cpdef double ucb_value(double reward_sum, int visits, int avail, double c)

cpdef unsigned long long fnv_mix(unsigned long long h, unsigned long long v)

@cython.locals(i=int, m=double, s=double)
cpdef void softmax_into(object vals, double scale, double[::1] out, int n)


cdef class Tree:
    cdef public int size
    cdef public int cap
    cdef public object _a_move, _a_player, _a_parent, _a_first_child, _a_next_sibling
    cdef public object _a_visits, _a_avail, _a_obs, _a_reward, _a_vpsum
    cdef public int[::1] move
    cdef public int[::1] player
    cdef public int[::1] parent
    cdef public int[::1] first_child
    cdef public int[::1] next_sibling
    cdef public int[::1] visits
    cdef public int[::1] avail
    cdef public int[::1] obs
    cdef public double[::1] reward
    cdef public double[::1] vpsum

    @cython.locals(k=int)
    cpdef int new_node(self, int parent, int move, int player, int obs=*)

    @cython.locals(ch=int)
    cpdef int child(self, int node, int move)

    @cython.locals(ch=int)
    cpdef list children(self, int node)


cdef class Search:
    cdef public double c
    cdef public double scale
    cdef public int rollout
    cdef public int depth
    cdef public long long iterations
    cdef public int nplayers
    cdef public int plen
    cdef public int expanded
    cdef public int fixed
    cdef public double eps
    cdef public int macro
    cdef public int observe
    cdef public int tree_depth
    cdef public double tempo
    cdef public int s_start, s_turnpl
    cdef public int o_loc, o_known, o_cloc, o_cknown, ncards, ncon, l_std, l_limbo, cl_deck, cl_limbo
    cdef public int s_limbo_src, deck_std, l_spc, s_limbo_n, s_pend, s_decider, o_limbo, deck_con
    cdef public object scratch
    cdef public unsigned long long rs
    cdef public Tree tree
    cdef public object _leg, _found, _path, _rew, _vps
    cdef public int[::1] legbuf
    cdef public int[::1] found
    cdef public int[::1] path
    cdef public double[::1] rew
    cdef public double[::1] vps

    @cython.locals(x=cython.ulonglong)
    cpdef unsigned long long rand(self)

    cdef public int legcap
    cdef public int pathcap
    cdef public double next_poll
    cdef public object _vals
    cdef public double[::1] vals
    cdef public int o_res, o_disp, s_disp_n, s_players, s_turn, s_phase, o_ncar, o_car, o_nxt, o_flip, nfeat
    cdef public object _w, _f
    cdef public double[::1] w
    cdef public double[::1] f

    @cython.locals(n=int, i=int)
    cpdef int step(self, int node, object codes, int player, int key=*)

    @cython.locals(i=int, k=int, ch=int, mv=int, nexp=int, best=int, val=double, bestval=double, tr=Tree)
    cdef int _step_buf(self, int node, int n, int player, int key)

    cpdef _ensure_legal_cap(self, int n)
    cpdef _ensure_path_cap(self, int n)

    @cython.locals(i=int, nd=int, p=int, tr=Tree)
    cpdef void backup(self)

    @cython.locals(p=int, k=int, nl=int, n=int, w=int)
    cpdef void _evaluate(self, object d, object evaluator)

    cpdef long run(self, object root, int observer, long iterations, double deadline, object evaluator,
                   object should_stop=*, object progress=*)

    cpdef bint _engine_ok(self, object root, object evaluator)

    cpdef _load_layout(self)

    @cython.locals(n=int, i=int)
    cpdef set_weights(self, object weights, object rollout_weights=*)

    @cython.locals(r=int, k=int, _k=int, i=int, c=int, car=int, card=int, need=int, have=int, covered=int,
                   total=int, best=double, reach=double, x=double, R=CRules)
    cdef void _features(self, CState d, int p)

    @cython.locals(p=int, best=int)
    cpdef double progress(self, CState d)

    cpdef list features(self, CState d, int p)

    cpdef double heuristic(self, CState d, int p)

    @cython.locals(i=int, v=double)
    cdef double _value(self, CState d, int p, double t, int base)

    @cython.locals(t=double)
    cdef bint _budget_spent(self, long done, long iterations, double deadline, object should_stop,
                            object progress)

    @cython.locals(i=int, v=int, car=int, card=int, _k=int, h=cython.ulonglong, x=cython.ulonglong,
                   sm=cython.ulonglong, secret=bint, R=CRules)
    cpdef int observation(self, CState d, int observer)

    cdef int _push_path(self, int plen, int node)

    @cython.locals(n=int)
    cdef void _rollout_step(self, CState d, int greedy)

    @cython.locals(p=int, w=int, m=double, sm=double, t=double, st=int, now=int)
    cdef void _leaf_rewards(self, CState d, int np_)

    @cython.locals(np_=int)
    cpdef list leaf_rewards(self, CState d)

    @cython.locals(i=int, best=int, ties=int, v=double, bestv=double, me=int, t=double, sc=CState)
    cdef int _greedy_choice(self, CState d, int n)

    @cython.locals(done=long, node=int, plen=int, n=int, i=int, k=int, key=int, turn=int, tr=Tree, np_=int,
                   d=CState)
    cdef long _run_engine(self, CState root, int observer, long iterations, double deadline,
                          object should_stop, object progress)

    @cython.locals(done=long, node=int, plen=int, tr=Tree)
    cdef long _run_generic(self, object root, int observer, long iterations, double deadline,
                           object evaluator, object should_stop, object progress)
