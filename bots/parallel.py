"""Root-parallel search: one budget split across worker processes, root statistics merged.

Each worker runs an independent SO-ISMCTS from the same position with its own seed; the root
children's visits, reward sums and VP sums are added up decision by decision (Chaslot et al.'s
root parallelisation), and the final choice is made on the merged counts. The position travels as
its JSON document (engine states) or pickled (the toy game). Each worker is a process of its own
pool, so one that dies (killed for memory, a crash) loses only its own part: the others are merged.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from concurrent.futures import Future, ProcessPoolExecutor, wait
from contextlib import ExitStack
from typing import Any

import engine_ext
from bots.base import Analysis, ProgressFn, StopFn, Timer, as_state, decision_point, expected_line
from bots.ismcts_bot import (
    ISMCTSBot,
    ISMCTSConfig,
    analysis_from_stats,
    forced_analysis,
    resolve_budget,
)
from bots.merge import merge_root_stats

log = logging.getLogger(__name__)

_STOP: Any = None  # the search's stop event
_DONE: Any = None  # iterations done so far, one entry per worker (shared with the parent)
_INDEX = 0  # this worker's entry


def _init_worker(stop_event: Any, done: Any, index: int) -> None:
    global _STOP, _DONE, _INDEX
    _STOP, _DONE, _INDEX = stop_event, done, index


def _count(iterations: int) -> None:
    if _DONE is not None:
        _DONE[_INDEX] = iterations


def _rebuild(payload: Any, compiled: bool | None) -> Any:
    if isinstance(payload, dict):
        return engine_ext.get_engine(compiled).from_json(payload).state
    return payload


def _worker(payload: Any, engine_compiled: bool | None, config: ISMCTSConfig, iterations: int,
            time_ms: float, seed: int) -> dict[str, Any]:
    st = _rebuild(payload, engine_compiled)
    bot = ISMCTSBot(config)

    def stop() -> bool:
        return bool(_STOP is not None and _STOP.is_set())

    s, n, ms = bot.search(st, iterations=iterations or None, time_ms=time_ms or None, seed=seed,
                          should_stop=stop, progress=lambda report: _count(int(report["iterations"])))
    _count(n)
    return {"stats": s.root_stats(), "line": s.principal_line(), "iterations": n, "elapsed_ms": ms,
            "tree_nodes": s.tree.size}


def payload_of(game: Any) -> tuple[Any, bool | None]:
    """What to send to a worker for `game`: its full JSON document, or the state itself."""
    to_json = getattr(game, "to_json", None)
    if to_json is not None:
        return to_json(), bool(getattr(getattr(game, "engine", None), "COMPILED", None))
    st = as_state(game)
    if hasattr(st, "export") and hasattr(st, "R"):
        raise TypeError("root-parallel search needs a facade Game (engine_ext.Game) to ship the state")
    return st, None


def worker_seeds(seed: int, workers: int) -> list[int]:
    """Distinct, reproducible seeds for the workers of one search."""
    return [(seed * 1_000_003 + 7919 * k) & 0x7FFFFFFF for k in range(workers)]


def root_parallel(game: Any, config: ISMCTSConfig, *, workers: int, iterations: int | None = None,
                  time_ms: float | None = None, seed: int = 0, name: str = "ismcts",
                  progress: ProgressFn | None = None, should_stop: StopFn | None = None) -> Analysis:
    """Search `game` with `workers` processes; `iterations` is the total budget (split evenly, over
    at most that many workers), `time_ms` the wall time each worker gets. The parts of workers that
    failed are left out of the merge (RuntimeError when every one failed)."""
    t = Timer()
    st, me, codes = decision_point(game)
    if len(codes) == 1:
        return forced_analysis(codes[0], me, t, seed, name)
    total, tms = resolve_budget(config, iterations, time_ms)
    if total:
        workers = min(workers, total)  # a worker with no share would search the level's own budget
    shares = [total // workers + (1 if k < total % workers else 0) for k in range(workers)]
    payload, compiled = payload_of(game)
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context("spawn")
    stop_event = ctx.Event()
    done = ctx.Array("q", workers, lock=False)
    with ExitStack() as pools:
        futs: list[Future[dict[str, Any]]] = []
        for k, sd in enumerate(worker_seeds(seed, workers)):
            pool = pools.enter_context(ProcessPoolExecutor(max_workers=1, mp_context=ctx,
                                                           initializer=_init_worker,
                                                           initargs=(stop_event, done, k)))
            futs.append(pool.submit(_worker, payload, compiled, config, shares[k], tms, sd))
        pending = set(futs)
        while pending:
            _, pending = wait(pending, timeout=0.05)
            if should_stop is not None and should_stop():
                stop_event.set()
            if progress is not None and pending:
                progress({"iterations": sum(done), "elapsed_ms": round(t.ms(), 1), "workers": workers,
                          "done_workers": workers - len(pending)})
            time.sleep(0)
    failed = [exc for exc in (f.exception() for f in futs) if exc is not None]
    parts = [f.result() for f in futs if f.exception() is None]
    if not parts:
        raise RuntimeError(f"root-parallel search: all {workers} workers failed ({failed[0]!r})") \
            from failed[0]
    if failed:
        log.warning("root-parallel search: %d of %d workers failed (%r); merged the other parts",
                    len(failed), workers, failed[0])
    stats = merge_root_stats(part["stats"] for part in parts)
    n = sum(int(p["iterations"]) for p in parts)
    an = analysis_from_stats(st, stats, [], n, t.ms(), seed, name, config.temperature, config.margin)
    an.line = expected_line(an.code, [(p["line"], _visits(p["stats"], an.code)) for p in parts])
    return an


def _visits(stats: list[tuple[int, int, float, float]], code: int) -> int:
    return next((int(v) for c, v, _, _ in stats if c == code), 0)
