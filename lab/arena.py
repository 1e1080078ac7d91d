"""Tournaments between bots: seats rotated, games in parallel processes, win rates with 95%
intervals, Elo with intervals, and an SPRT mode (elo0, elo1, alpha, beta, as fishtest's GSPRT).

A *lineup* is one bot spec per seat (two specs for a 4-player game become A, B, A, B). Game `g`
deals seed `seed + g // players` and rotates the lineup by `g % players`, so every bot sits in
every seat of every deal. Each game has exactly one winner (the rules break ties).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

from kashgar_cli.progress import Progress

Z95 = 1.959963984540054
T = TypeVar("T")
R = TypeVar("R")


@dataclass
class GameResult:
    game: int
    seats: list[str]        # bot spec per seat
    winner: int             # seat
    vps: list[int]
    decisions: int
    seconds: float
    ranking: list[int] = field(default_factory=list)  # seats, best first

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---- statistics ------------------------------------------------------------------------------

def wilson(k: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion k/n."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    den = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo_of_score(s: float) -> float:
    """Logistic Elo difference of an expected score s (clamped away from 0 and 1)."""
    s = min(max(s, 1e-4), 1 - 1e-4)
    return -400.0 * math.log10(1.0 / s - 1.0)


def score_of_elo(elo: float) -> float:
    return 1.0 / (1.0 + 10 ** (-elo / 400.0))


def elo_with_ci(wins: float, n: int) -> tuple[float, float, float]:
    """(Elo, low, high) of a head-to-head score wins/n, interval from the Wilson interval."""
    if n <= 0:
        return (0.0, -math.inf, math.inf)
    lo, hi = wilson(wins, n)
    return (elo_of_score(wins / n), elo_of_score(lo), elo_of_score(hi))


def sprt_llr(scores: list[float], elo0: float, elo1: float) -> float:
    """Wald's SPRT log-likelihood ratio of H1 (the second bot is elo1 stronger) against H0 (elo0),
    for per-game results 1 (a win of the second bot) or 0. A Kashgar game has no draws, so the
    results are Bernoulli and the likelihood is exact: W ln(p1/p0) + L ln((1-p1)/(1-p0)), with p
    the logistic score of each Elo. (The normal approximation with the sample variance used before
    claimed far too much from short one-sided runs: with elo0, elo1 = 0, 100 it accepted H1 for
    equal bots 13% of the time at alpha = 5%.)"""
    wins = sum(scores)
    losses = len(scores) - wins
    p0, p1 = score_of_elo(elo0), score_of_elo(elo1)
    return wins * math.log(p1 / p0) + losses * math.log((1 - p1) / (1 - p0))


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    return (math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))


def bradley_terry(pairs: dict[tuple[str, str], float], names: list[str],
                  iters: int = 200) -> dict[str, float]:
    """Elo ratings (first name = 0) from pairwise win counts pairs[(a, b)] = wins of a over b (MM)."""
    gamma = {n: 1.0 for n in names}
    for _ in range(iters):
        new = {}
        for i in names:
            w = sum(pairs.get((i, j), 0.0) for j in names if j != i) + 0.5
            den = 0.0
            for j in names:
                if j == i:
                    continue
                nij = pairs.get((i, j), 0.0) + pairs.get((j, i), 0.0) + 1.0
                den += nij / (gamma[i] + gamma[j])
            new[i] = w / den if den > 0 else gamma[i]
        g0 = new[names[0]]
        gamma = {k: v / g0 for k, v in new.items()}
    return {k: 400.0 * math.log10(v) for k, v in gamma.items()}


# ---- playing ---------------------------------------------------------------------------------

_BOTS: dict[str, Any] = {}


def cached_bot(spec: str) -> Any:
    """The bot `spec` names, made once per process."""
    if spec not in _BOTS:
        from lab.bots import make_bot

        _BOTS[spec] = make_bot(spec)
    return _BOTS[spec]


def new_state(game: str, players: int, seed: int, engine_compiled: bool | None) -> Any:
    if game == "toy":
        from lab.toygame import ToyState

        return ToyState(players, seed)
    import engine_ext

    return engine_ext.get_engine(engine_compiled).new_game(players=players, seed=seed).state


def lineup_for(specs: list[str], players: int) -> list[str]:
    """The seats of one game (rotated game by game): the specs in order, cycled over the seats."""
    if len(specs) > players:
        raise ValueError(f"{len(specs)} bots for {players} seats: a game seats at most {players} "
                         f"(give -p/--players, or fewer bots)")
    return [specs[i % len(specs)] for i in range(players)]


def equal_seats(lineup: list[str]) -> bool:
    """Whether every bot of the lineup has as many seats as every other (A, B or A, B, A, B, not
    A, B, A): only then is a bot's share of the wins its head-to-head score, 0.5 when equal."""
    return len({lineup.count(s) for s in lineup}) == 1


def play_out(st: Any, bots: list[Any], seed: int) -> int:
    """Play `st` to its end, seat p choosing with `bots[p]` (decision k seeded from `seed`); returns
    the number of decisions played."""
    k = 0
    while not st.is_terminal():
        code = bots[st.current_player()].choose(st, seed=(seed + k * 104729) & 0x7FFFFFFF)
        st.apply(code)
        k += 1
    return k


def play_game(task: tuple[int, list[str], int, int, str, bool | None]) -> GameResult:
    """Play one game: (index, lineup, players, seed base, game kind, engine build)."""
    g, lineup, players, seed, game, compiled = task
    rot = g % players
    seats = lineup[rot:] + lineup[:rot]
    deal = seed + g // players
    st = new_state(game, players, deal, compiled)
    t0 = time.perf_counter()
    k = play_out(st, [cached_bot(s) for s in seats], deal * 7919 + g)
    vps = [int(st.vp(p)) for p in range(players)]
    w = int(st.winner())
    ranking = [w] + sorted((p for p in range(players) if p != w), key=lambda p: -vps[p])
    return GameResult(g, seats, w, vps, k, time.perf_counter() - t0, ranking)


@dataclass
class Report:
    specs: list[str]
    players: int
    games: int
    wins: dict[str, int]
    seats: dict[str, int]          # seat-games played by each spec
    win_rate: dict[str, tuple[float, float, float]]
    elo: dict[str, tuple[float, float, float]]   # relative to specs[0]: (elo, low, high)
    sprt: dict[str, Any] | None
    seconds: float
    results: list[GameResult]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["results"] = [r.to_dict() for r in self.results]
        return d

    def table(self) -> str:
        w = max([32] + [len(s) for s in self.specs])  # long specs keep the columns aligned
        lines = [f"{self.games} games, {self.players} players, {self.seconds:.1f} s",
                 f"{'bot':<{w}} {'wins':>6} {'win rate':>9} {'95% CI':>17} {'Elo':>7} {'95% CI':>17}"]
        for s in self.specs:
            wr, lo, hi = self.win_rate[s]
            e, elo_lo, elo_hi = self.elo[s]
            lines.append(f"{s:<{w}} {self.wins[s]:>6} {wr:>9.3f} [{lo:6.3f}, {hi:6.3f}] {e:>7.1f} "
                         f"[{elo_lo:6.1f}, {elo_hi:6.1f}]")
        if self.sprt:
            sp = self.sprt
            lines.append(f"SPRT elo0={sp['elo0']} elo1={sp['elo1']} alpha={sp['alpha']} beta={sp['beta']}: "
                         f"LLR {sp['llr']:.2f} in [{sp['lower']:.2f}, {sp['upper']:.2f}] -> {sp['result']}")
        return "\n".join(lines)


def pairwise(results: list[GameResult]) -> dict[tuple[str, str], float]:
    """pairs[(x, y)]: how often bot x finished above bot y, over every pair of seats of every game."""
    pairs: dict[tuple[str, str], float] = {}
    for r in results:
        order = [r.seats[p] for p in r.ranking]
        for i, x in enumerate(order):
            for y in order[i + 1:]:
                if x != y:
                    pairs[(x, y)] = pairs.get((x, y), 0.0) + 1.0
    return pairs


def summarize(specs: list[str], players: int, results: list[GameResult], seconds: float,
              sprt: dict[str, Any] | None = None, bootstrap: int = 200, seed: int = 0) -> Report:
    uniq = list(dict.fromkeys(specs))
    wins = {s: 0 for s in uniq}
    seat_games = {s: 0 for s in uniq}
    for r in results:
        wins[r.seats[r.winner]] += 1
        for s in r.seats:
            seat_games[s] += 1
    n = len(results)
    win_rate = {}
    for s in uniq:
        lo, hi = wilson(wins[s], n)
        win_rate[s] = (wins[s] / n if n else 0.0, lo, hi)
    elo: dict[str, tuple[float, float, float]] = {}
    if len(uniq) == 2 and equal_seats(lineup_for(specs, players)):
        a, b = uniq
        e, lo, hi = elo_with_ci(wins[b], n)  # b relative to a (each game has exactly one winner among a, b)
        elo[a] = (0.0, 0.0, 0.0)
        elo[b] = (e, lo, hi)
    elif len(uniq) == 1:
        elo[uniq[0]] = (0.0, 0.0, 0.0)
    elif len(uniq) == 2:
        # Unequal seats (A, B, A): b's share of the pairwise comparisons between the two (each game
        # ranks every A-B pair) is its head-to-head score; the interval is Wilson's with the games
        # as the sample size, as the pairs of one game are not independent. (A bootstrap of the
        # pairwise fit gave a zero-width interval when one bot swept: every resample was a sweep.)
        a, b = uniq
        won = pairwise(results)
        total = won.get((a, b), 0.0) + won.get((b, a), 0.0)
        elo[a] = (0.0, 0.0, 0.0)
        elo[b] = elo_with_ci(n * won.get((b, a), 0.0) / total, n) if total else (0.0, -math.inf, math.inf)
    else:
        def fit(rs: list[GameResult]) -> dict[str, float]:
            return bradley_terry(pairwise(rs), uniq)

        point = fit(results)
        rng = random.Random(seed)
        samples = [fit([results[rng.randrange(n)] for _ in range(n)]) for _ in range(bootstrap)] if n else []
        for s in uniq:
            xs = sorted(x[s] for x in samples) or [point[s]]
            elo[s] = (point[s], xs[int(0.025 * (len(xs) - 1))], xs[int(0.975 * (len(xs) - 1))])
    return Report(uniq, players, n, wins, seat_games, win_rate, elo, sprt, seconds, results)


def imap_processes(fn: Callable[[T], R], tasks: list[T], workers: int) -> Iterator[R]:
    """`fn` over `tasks` in `workers` processes, results as they come (in order, in this process,
    when `workers` <= 1); never more processes than tasks."""
    workers = min(workers, len(tasks))
    if workers <= 1:
        for t in tasks:
            yield fn(t)
        return
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context("spawn")
    # SIGINT (Ctrl-C) is held back while the workers are forked: a KeyboardInterrupt raised in
    # os.fork's hooks is lost ("Exception ignored"), and one raised elsewhere in Pool() leaves its
    # workers running. It comes (in this process and in each worker) once the pool is entered.
    _die_with_parent()
    before = set(mp.active_children())
    held = _hold_sigint()
    try:
        pool = ctx.Pool(workers, initializer=_release_sigint, initargs=(held,))
    except BaseException:
        _release_sigint(held)
        raise
    try:
        with pool:
            _release_sigint(held)  # a Ctrl-C held back is a KeyboardInterrupt here: the pool is terminated
            yield from pool.imap_unordered(fn, tasks)
            pool.terminate()
    finally:
        # A worker the pool's own thread was forking when the pool was terminated is not in the list
        # terminate() stops, and one forked while another thread held a lock waits on it forever:
        # kill whatever process this pool started that is still alive.
        for stray in set(mp.active_children()) - before:
            stray.kill()
            stray.join(5)


_PR_SET_PDEATHSIG = 1  # prctl(2)


def _set_pdeathsig() -> None:
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pool's own terminate() is all there is
        pass


_die_with_parent_registered = False


def _die_with_parent() -> None:
    """Every process forked from this one from now on is killed when the thread that forked it
    ends (Linux): a pool worker forked by the pool's own thread while the pool was being terminated
    is in no list that terminate() stops, and one forked while another thread held a lock waits on
    it forever; it outlived the command and held its stdout open."""
    global _die_with_parent_registered
    if not _die_with_parent_registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_set_pdeathsig)
        _die_with_parent_registered = True


def _hold_sigint() -> set[int | signal.Signals] | None:
    """Block SIGINT in this thread; returns the signal mask to restore (None: no signal masks here)."""
    if not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def _release_sigint(mask: set[int | signal.Signals] | None) -> None:
    """Restore the signal mask `_hold_sigint` returned; a SIGINT that came meanwhile is handled now."""
    if mask is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _results(tasks: list[Any], workers: int) -> Iterator[GameResult]:
    return imap_processes(play_game, tasks, workers)


# The toy game has no Kashgar features to evaluate: its searches take points ("default" is VP there).
TOY_EVALUATORS = ("default", "vp")


def unplayable(evaluators: Iterable[tuple[str, str]], game: str) -> list[str]:
    """The names of (name, evaluator of its search) pairs whose search `game` cannot play: the toy
    game only those with an evaluator of TOY_EVALUATORS (any other reads Kashgar's state: an
    AttributeError once a game is under way). Used by `check_arena` and `lab.tune.check_game`."""
    return [name for name, evaluator in evaluators if game == "toy" and evaluator not in TOY_EVALUATORS]


def check_arena(specs: list[str], *, games: int, players: int = 2, seed: int = 0,
                sprt: tuple[float, float, float, float] | None = None, game: str = "kashgar") -> list[str]:
    """The seats' bots of a tournament, or ValueError for settings it cannot play (a bad count,
    seed, bot spec, a bot `game` cannot play, or SPRT); nothing is played."""
    import engine_ext

    if not 2 <= players <= 4:
        raise ValueError("2 to 4 players")
    if not specs:
        raise ValueError("no bots")
    if games < 1:
        raise ValueError(f"games must be at least 1, not {games}")
    if not 0 <= seed <= engine_ext.SEEDS - 1 - games:
        raise ValueError(f"the seed is an integer from 0 (game g is dealt from seed + g // players), not {seed}")
    lineup = lineup_for(specs, players)
    if sprt is not None and len(set(specs)) != 2:
        raise ValueError("SPRT needs exactly two different bots")
    if sprt is not None and not equal_seats(lineup):
        raise ValueError(f"SPRT needs the two bots on as many seats each; {players} players seat them "
                         f"{', '.join(lineup)}")
    if sprt is not None and not sprt[0] < sprt[1]:
        raise ValueError(f"SPRT needs elo0 < elo1 (H0: elo0, H1: elo1), not {sprt[0]:g} and {sprt[1]:g}")
    if sprt is not None and not (0 < sprt[2] < 1 and 0 < sprt[3] < 1):
        raise ValueError(f"SPRT's alpha and beta are error rates between 0 and 1, not {sprt[2]:g} and {sprt[3]:g}")
    bots = {s: cached_bot(s) for s in dict.fromkeys(specs)}  # fail early on a bad spec, in this process
    searches = [(s, getattr(b.config, "evaluator", None)) for s, b in bots.items() if hasattr(b, "config")]
    bad = unplayable([(s, ev) for s, ev in searches if isinstance(ev, str)], game)
    if bad:
        raise ValueError(f"the {game} game plays only bots whose search has evaluator "
                         f"{' or '.join(TOY_EVALUATORS)}, not {', '.join(map(repr, bad))}")
    return lineup


def run_arena(specs: list[str], *, games: int, players: int = 2, seed: int = 0, workers: int = 1,
              game: str = "kashgar", engine_compiled: bool | None = None, progress: bool = False,
              sprt: tuple[float, float, float, float] | None = None,
              on_result: Callable[[GameResult], None] | None = None) -> Report:
    """Play up to `games` games; with `sprt` = (elo0, elo1, alpha, beta) (two bots: the second
    measured against the first) stop as soon as the test decides. ValueError from `check_arena`
    before any game."""
    lineup = check_arena(specs, games=games, players=players, seed=seed, sprt=sprt, game=game)
    tasks = [(g, lineup, players, seed, game, engine_compiled) for g in range(games)]
    bar = Progress(games, progress)
    results: list[GameResult] = []
    t0 = time.perf_counter()
    sprt_state: dict[str, Any] | None = None
    uniq = list(dict.fromkeys(specs))
    if sprt is not None:
        lower, upper = sprt_bounds(sprt[2], sprt[3])
        sprt_state = {"elo0": sprt[0], "elo1": sprt[1], "alpha": sprt[2], "beta": sprt[3], "llr": 0.0,
                      "lower": lower, "upper": upper, "result": "continue"}
    # The SPRT reads the games in the order they were dealt, not the order they finish in (with
    # several processes the short games finish first, and stopping on them would favour them).
    pending: dict[int, GameResult] = {}
    ordered: list[float] = []
    for r in _results(tasks, workers):
        results.append(r)
        if on_result is not None:
            on_result(r)
        note = ""
        if sprt_state is not None:
            pending[r.game] = r
            while len(ordered) in pending:
                x = pending.pop(len(ordered))
                ordered.append(1.0 if x.seats[x.winner] == uniq[1] else 0.0)
            llr = sprt_llr(ordered, sprt_state["elo0"], sprt_state["elo1"])
            sprt_state["llr"] = llr
            note = f"LLR {llr:.2f}"
            if llr >= sprt_state["upper"]:
                sprt_state["result"] = "H1 accepted"
            elif llr <= sprt_state["lower"]:
                sprt_state["result"] = "H0 accepted"
            if sprt_state["result"] != "continue":
                results = [x for x in results if x.game < len(ordered)]  # the games the test read
                bar.update(len(results), note)
                break
        else:
            w = sum(1 for x in results if x.seats[x.winner] == uniq[0])
            note = f"{uniq[0]} {w / len(results):.3f}"
        bar.update(len(results), note)
    bar.close()
    results.sort(key=lambda r: r.game)
    return summarize(specs, players, results, time.perf_counter() - t0, sprt_state, seed=seed)
