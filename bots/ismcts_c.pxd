# C types for bots/ismcts.py compiled as bots.ismcts_c (the same source; see setup.py).
# A game's compiled search game subclasses SearchGame (bots/kashgar_eval_c.pxd cimports it from here),
# so the loop calls its methods through the C vtable, with no Python call per decision or leaf.
cimport cython

cdef unsigned long long MASK64
cdef double YIELD_S

@cython.locals(mean=double)
cpdef double ucb_value(double reward_sum, int visits, int avail, double c)

@cython.locals(i=int, m=double, s=double)
cpdef void softmax_into(object vals, double scale, double[::1] out, int n)

cpdef object int_array(int n)
cpdef object double_array(int n)


cdef class Rng:
    cdef public unsigned long long state

    @cython.locals(x=cython.ulonglong)
    cpdef unsigned long long next(self)


cdef class Tree:
    cdef public int size
    cdef public int cap
    cdef public object _a_move, _a_player, _a_parent, _a_first_child, _a_next_sibling
    cdef public object _a_visits, _a_avail, _a_reward, _a_vpsum
    cdef public int[::1] move
    cdef public int[::1] player
    cdef public int[::1] parent
    cdef public int[::1] first_child
    cdef public int[::1] next_sibling
    cdef public int[::1] visits
    cdef public int[::1] avail
    cdef public double[::1] reward
    cdef public double[::1] vpsum

    @cython.locals(k=int)
    cpdef int new_node(self, int parent, int move, int player)

    @cython.locals(ch=int)
    cpdef int child(self, int node, int move)

    @cython.locals(ch=int)
    cpdef list children(self, int node)


cdef class SearchGame:
    cdef public object value
    cdef public double scale
    cdef public int depth
    cdef public int players
    cdef public object _rew, _vps
    cdef public double[::1] rew
    cdef public double[::1] vps

    cpdef void start(self, object root)
    cpdef object determinize(self, object root, int observer, unsigned long long seed)
    cpdef bint is_terminal(self, object d)
    cpdef int current_player(self, object d)

    @cython.locals(n=int, m=int, i=int)
    cpdef int legal(self, object d, int[::1] out)

    cpdef void apply(self, object d, int code)
    cpdef bint has_turns(self)
    cpdef bint within_turn(self, object d)
    cpdef void play_greedy(self, object d, Rng rng)
    cpdef int greedy_rank(self, object d, int[::1] out, int k)
    cpdef int priors(self, object d, int[::1] codes, int n, double[::1] out)

    @cython.locals(n=int, nl=int, p=int, w=int, _k=int)
    cpdef void evaluate(self, object d, Rng rng)


cdef class Search:
    cdef public Tree tree
    cdef public SearchGame game
    cdef public Rng rng
    cdef public double c
    cdef public int macro
    cdef public int widen
    cdef public double prior
    cdef public int haspri, nroot, rootpri
    cdef public long long iterations
    cdef public int expanded
    cdef public int plen
    cdef public double next_poll
    cdef public double next_yield
    cdef public int legcap
    cdef public int pathcap
    cdef public object _leg, _found, _path, _pri, _rcodes
    cdef public int[::1] legbuf
    cdef public int[::1] found
    cdef public int[::1] path
    cdef public double[::1] pri
    cdef public int[::1] rcodes

    cpdef _ensure_legal_cap(self, int n)
    cpdef _ensure_path_cap(self, int n)

    @cython.locals(i=int, k=int, ch=int, mv=int, nexp=int, best=int, val=double, bestval=double, tr=Tree)
    cpdef int step(self, int node, int[::1] codes, int n, int player)

    @cython.locals(i=int, same=int)
    cdef int _root_priors(self, object d, int n)

    @cython.locals(i=int, ch=int, mv=int, best=int, besti=int, val=double, bestval=double, rsum=double, vsum=long,
                   fpu=double, tr=Tree)
    cdef int _step_prior(self, int node, int[::1] codes, int n, int player)

    @cython.locals(i=int, nd=int, p=int, tr=Tree)
    cpdef void backup(self, double[::1] rewards, double[::1] vps)

    cdef int _push_path(self, int plen, int node)

    @cython.locals(t=double)
    cdef bint _budget_spent(self, long done, long iterations, double deadline, object should_stop,
                            object progress)

    @cython.locals(done=long, node=int, plen=int, n=int, k=int, macro=int, game=SearchGame, rng=Rng, tr=Tree)
    cpdef long run(self, object root, int observer, long iterations, double deadline,
                   object should_stop=*, object progress=*)
