"""Root-parallel search: one budget split across worker processes, root statistics merged.

Each worker runs an independent SO-ISMCTS from the same position with its own seed; the root
children's visits, reward sums and VP sums are added up decision by decision (Chaslot et al.'s
root parallelisation), and the final choice is made on the merged counts. The position travels as
its JSON document (engine states) or pickled (the toy game).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor, wait
from typing import Any

from bots.base import Analysis, ProgressFn, StopFn, Timer, as_state, decision_point
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig, analysis_from_stats

_STOP: Any = None


def _init_worker(stop_event: Any) -> None:
    global _STOP
    _STOP = stop_event


def _rebuild(payload: Any, compiled: bool | None) -> Any:
    if isinstance(payload, dict):
        import engine_ext

        return engine_ext.get_engine(compiled).from_json(payload).state
    return payload


def _worker(payload: Any, engine_compiled: bool | None, config: ISMCTSConfig, iterations: int,
            time_ms: float, seed: int) -> dict[str, Any]:
    st = _rebuild(payload, engine_compiled)
    bot = ISMCTSBot(config)

    def stop() -> bool:
        return bool(_STOP is not None and _STOP.is_set())

    s, n, ms = bot.search(st, iterations=iterations or None, time_ms=time_ms or None, seed=seed,
                          should_stop=stop)
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
    """Search `game` with `workers` processes; `iterations` is the total budget (split evenly),
    `time_ms` the wall time each worker gets."""
    t = Timer()
    st, me, codes = decision_point(game)
    if iterations is None and time_ms is None:
        iterations, time_ms = config.iterations, config.time_ms
    total = int(iterations or 0)
    tms = float(time_ms or 0.0)
    payload, compiled = payload_of(game)
    shares = [total // workers + (1 if k < total % workers else 0) for k in range(workers)] if total else \
        [0] * workers
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context("spawn")
    stop_event = ctx.Event()
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_init_worker,
                             initargs=(stop_event,)) as ex:
        futs = [ex.submit(_worker, payload, compiled, config, shares[k], tms, sd)
                for k, sd in enumerate(worker_seeds(seed, workers))]
        pending = set(futs)
        while pending:
            _, pending = wait(pending, timeout=0.05)
            if should_stop is not None and should_stop():
                stop_event.set()
            if progress is not None and pending:
                progress({"iterations": None, "elapsed_ms": round(t.ms(), 1), "workers": workers,
                          "done_workers": workers - len(pending)})
            time.sleep(0)
        parts = [f.result() for f in futs]
    merged: dict[int, list[float]] = {}
    for part in parts:
        for code, v, r, x in part["stats"]:
            m = merged.setdefault(code, [0, 0.0, 0.0])
            m[0] += v
            m[1] += r
            m[2] += x
    stats = [(c, int(m[0]), m[1], m[2]) for c, m in merged.items()]
    n = sum(int(p["iterations"]) for p in parts)
    best_part = max(parts, key=lambda p: p["iterations"])
    return analysis_from_stats(codes, stats, list(best_part["line"]), n, t.ms(), seed, name, me,
                               config.temperature)
