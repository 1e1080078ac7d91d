"""The bots API the service uses (docs/engine-api.md, "The bots API the service uses")."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import engine_ext
from bots.base import Alternative, Analysis, expected_line, final_choice
from bots.levels import DEFAULT_LEVEL, get_level, load_levels, own_default
from bots.merge import merge_root_stats
from bots.position import Position
from bots.win_prob import N_WEIGHTS, calibrated, order_of, progress_of, weights_for

MAX_WORKERS = 64
STATS = {"mean_reward": 6, "win_prob": 6, "expected_vp": 4}  # visit-weighted means, rounded to these digits


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
    """Analyse the position of `doc` (a full state or a player's view) for the player to move.

    The search only uses what that player knows (every iteration re-samples the hidden decks from
    their information), so a full document and that player's view give the same answer for the
    same seed. `level` picks a preset (default: DEFAULT_LEVEL); `iterations` / `time_ms` override
    its budget; `workers` > 1 runs a root-parallel search over that many processes.
    Raises engine_ext.StateError (with a JSON pointer) for a bad document, and its subclass
    `NoDecision` for a finished game or a view whose player to move chooses among cards it does
    not show (`/pending/drawn`), KeyError for an unknown level, ValueError for a bad budget.
    """
    return search(Position.of(engine_ext.from_json(doc), level), Budget(iterations, time_ms, seed),
                  workers=workers, progress=progress, should_stop=should_stop)


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
           should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """One search of `position` within `budget` (one part of a longer search, or the whole of
    it): the answer as JSON, every `win_prob` calibrated for the position's level. The search
    leaves the game as it was."""
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
    out = _calibrated(an.to_dict(game.state), position)
    out["level"] = level.name
    out["compiled"] = bool(game.engine.COMPILED)
    out["workers"] = workers
    return out


def finish(position: Position, parts: Sequence[dict[str, Any]], seed: int) -> dict[str, Any]:
    """The answer of a whole search of `position` from its parts' answers (`search`, in the
    order they were planned; `seed`: the request's): one part as it is; several merged
    (`merge_parts`: visits add up, the final choice drawn on the merge with the first part's seed
    and the position's key) and calibrated again, on the merged mean rewards (the map to a
    chance is not linear: not the mean of the parts' win_prob)."""
    if len(parts) == 1:
        answer = dict(parts[0])
    else:
        answer = _calibrated(merge_parts(list(parts), position=position.key), position)
    answer["seed"] = seed
    answer["parts"] = len(parts)
    answer["level"] = position.level.name
    return answer


def suggest(position: Position, budgets: Sequence[Budget], *,
            should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """The finished answer for `position`: a search per budget, in this process one after the
    other, then `finish`ed; the answer's seed is the first budget's."""
    if not budgets:
        raise ValueError("no budget to search with")
    parts = [search(position, b, should_stop=should_stop) for b in budgets]
    return finish(position, parts, budgets[0].seed)


def _calibrated(answer: dict[str, Any], position: Position) -> dict[str, Any]:
    """`answer` (an analysis of `position`, or the merge of its parts) with every `win_prob` the
    calibrated chance of its `mean_reward` for the position's level, its number of players and the
    game's progress (`bots.win_prob`); None without a fit."""
    st = position.game.state
    weights = weights_for(position.level, position.players)
    order = order_of(st) if weights is not None and len(weights) > N_WEIGHTS else 0
    return calibrated(answer, weights, progress_of(st), order)


def merge_parts(parts: list[dict[str, Any]], temperature: float | None = None,
                position: int | None = None, margin: float | None = None) -> dict[str, Any]:
    """Merge the answers of root-parallel parts of one search (same position) into one answer.

    Visits add up (`bots.merge`); mean reward, win probability and expected VP are visit-weighted
    means; the decision is chosen from the merged visits as one search chooses (`final_choice`) with
    `temperature` and `margin` (None: those of the parts' level), the first part's seed and the
    `position_key` of the position (None: a key made of what the parts show of it, the player and
    its decisions): the most visited at temperature 0 (ties: higher mean reward); iterations add up
    and elapsed_ms is the longest part's.
    """
    if not parts:
        raise ValueError("no parts to merge")
    first = parts[0]
    if temperature is None or margin is None:
        config = get_level(first.get("level") or DEFAULT_LEVEL).config
        temperature = config.temperature if temperature is None else temperature
        margin = config.margin if margin is None else margin
    decisions: dict[str, Any] = {}  # decision text -> its JSON form (the first part's)
    rows = []
    for part in parts:
        row = []
        for alt in part.get("alternatives", []):
            decisions.setdefault(alt["decision_text"], alt["decision"])
            v = int(alt.get("visits") or 0)
            sums: list[Any] = []
            for f in STATS:  # a part without the statistic (None) adds nothing to its mean
                known = v > 0 and alt.get(f) is not None
                sums += [float(alt[f]) * v if known else 0.0, v if known else 0]
            row.append((alt["decision_text"], v, *sums))
        rows.append(row)
    alts = []
    for key, visits, *sums in merge_root_stats(rows):
        a: dict[str, Any] = {"decision": decisions[key], "decision_text": key, "visits": visits}
        for k, f in enumerate(STATS):
            total, n = sums[2 * k], sums[2 * k + 1]
            a[f] = round(total / n, STATS[f]) if n else None
        alts.append(a)
    alts.sort(key=lambda a: (-a["visits"], -(a["mean_reward"] or 0.0)))
    # the position, for the draw: what the parts show of it (the player and the legal decisions)
    if position is None:
        shown = "\n".join([str(first.get("player"))] + sorted(a["decision_text"] for a in alts))
        position = zlib.crc32(shown.encode())
    means = [float("nan") if a["mean_reward"] is None else float(a["mean_reward"]) for a in alts]
    best = alts[final_choice([float(a["visits"]) for a in alts], temperature, int(first.get("seed") or 0),
                             position, means, margin)]
    line = expected_line(best["decision_text"], [
        (list(p.get("line") or []), next((int(x.get("visits") or 0) for x in p.get("alternatives", [])
                                          if x["decision_text"] == best["decision_text"]), 0))
        for p in parts])
    return {
        "decision": best["decision"],
        "decision_text": best["decision_text"],
        "alternatives": alts,
        "line": line,
        "win_prob": best["win_prob"],
        "expected_vp": best["expected_vp"],
        "iterations": sum(int(p.get("iterations") or 0) for p in parts),
        "elapsed_ms": max(float(p.get("elapsed_ms") or 0.0) for p in parts),
        "seed": first.get("seed", 0),
        "level": first.get("level"),
        "compiled": first.get("compiled"),
        "workers": sum(int(p.get("workers") or 1) for p in parts),
    }


def list_levels() -> list[dict[str, Any]]:
    """The difficulty levels, weakest first: name, description, budget, settings, measured Elo."""
    default = own_default()  # the level file's own default (bots.levels.default_level)
    return [dict(lv.to_dict(), rank=i + 1, default=lv.name == default) for i, lv in enumerate(load_levels())]


__all__ = ["Alternative", "Analysis", "Budget", "Position", "analyse_state", "finish", "list_levels", "merge_parts",
           "search", "suggest"]
