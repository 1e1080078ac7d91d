"""The bots API the service uses (docs/engine-api.md, "The bots API the service uses")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import engine_ext
from bots.answer import AlternativeStats, Answer, calibrate, merge, of_analysis
from bots.levels import load_levels, own_default
from bots.position import Position

MAX_WORKERS = 64


@dataclass(frozen=True)
class Budget:
    """One search's budget: iterations and/or wall time (None: the level's), and its seed."""

    iterations: int | None = None
    time_ms: float | None = None
    seed: int = 0


def analyse_state(doc: dict[str, Any], *, level: str | None = None, iterations: int | None = None,
                  time_ms: float | None = None, seed: int = 0, workers: int = 1,
                  progress: Callable[[dict[str, Any]], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Analyse the position of `doc` (a full state or a player's view) for the player to move: a
    document in, one search's answer out as JSON (`Answer.to_json`; for a program that holds
    documents: `kashgar play`'s local table, the load tests).

    The search only uses what that player knows (every iteration re-samples the hidden decks from
    their information), so a full document and that player's view give the same answer for the
    same seed. `level` picks a preset (default: DEFAULT_LEVEL); `iterations` / `time_ms` override
    its budget; `workers` > 1 runs a root-parallel search over that many processes.
    Raises engine_ext.StateError (with a JSON pointer) for a bad document, and its subclass
    `NoDecision` for a finished game or a view whose player to move chooses among cards it does
    not show (`/pending/drawn`), KeyError for an unknown level, ValueError for a bad budget.
    """
    return search(Position.of(engine_ext.from_json(doc), level), Budget(iterations, time_ms, seed),
                  workers=workers, progress=progress, should_stop=should_stop).to_json()


def check_budget(iterations: int | None, time_ms: float | None, workers: int) -> None:
    """ValueError for a budget or a worker count that no search can run with."""
    if iterations is not None and (not isinstance(iterations, int) or iterations < 1):
        raise ValueError("iterations must be a positive integer")
    if time_ms is not None and (not isinstance(time_ms, (int, float)) or time_ms <= 0):
        raise ValueError("time_ms must be positive")
    if not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be in 1..{MAX_WORKERS}")


def search(position: Position, budget: Budget = Budget(), *, workers: int = 1,
           progress: Callable[[dict[str, Any]], None] | None = None,
           should_stop: Callable[[], bool] | None = None) -> Answer:
    """One search of `position` within `budget` (one part of a longer search, or the whole of
    it): its `Answer`, every win chance calibrated for the position's level. The search leaves the
    game as it was."""
    check_budget(budget.iterations, budget.time_ms, workers)
    game, level = position.game, position.level
    if workers > 1:
        from bots.parallel import root_parallel

        an = root_parallel(game, level.config, workers=workers, iterations=budget.iterations,
                           time_ms=budget.time_ms, seed=budget.seed, name=level.name, progress=progress,
                           should_stop=should_stop)
    else:
        an = level.bot().analyse(game, iterations=budget.iterations, time_ms=budget.time_ms, seed=budget.seed,
                                 progress=progress, should_stop=should_stop)
    return of_analysis(an, position, workers)


def finish(position: Position, parts: Sequence[Answer], seed: int) -> Answer:
    """The answer of a whole search of `position` from its parts' answers (`search`, in the
    order they were planned; `seed`: the request's): one part as it is; several merged
    (`bots.answer.merge`: visits add up, the final choice drawn on the merge with the first part's
    seed and the position's key) and calibrated again, on the merged mean rewards (the map to a
    chance is not linear: not the mean of the parts' win chances)."""
    if not parts:
        raise ValueError("no parts to finish")
    answer = parts[0] if len(parts) == 1 else calibrate(merge(parts, position), position)
    return replace(answer, seed=seed, parts=len(parts))


def suggest(position: Position, budgets: Sequence[Budget], *,
            should_stop: Callable[[], bool] | None = None) -> Answer:
    """The finished answer for `position`: a search per budget, in this process one after the
    other, then `finish`ed; the answer's seed is the first budget's."""
    if not budgets:
        raise ValueError("no budget to search with")
    parts = [search(position, b, should_stop=should_stop) for b in budgets]
    return finish(position, parts, budgets[0].seed)


def list_levels() -> list[dict[str, Any]]:
    """The difficulty levels, weakest first: name, description, budget, settings, measured Elo."""
    default = own_default()  # the level file's own default (bots.levels.default_level)
    return [dict(lv.to_dict(), rank=i + 1, default=lv.name == default) for i, lv in enumerate(load_levels())]


__all__ = ["AlternativeStats", "Answer", "Budget", "Position", "analyse_state", "finish", "list_levels", "merge",
           "search", "suggest"]
