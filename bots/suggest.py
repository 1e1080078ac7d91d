"""The bots API the service uses (docs/engine-api.md, "The bots API the service uses")."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

from bots.base import Alternative, Analysis, expected_line, final_choice, position_key
from bots.levels import DEFAULT_LEVEL, get_level, load_levels
from bots.merge import merge_root_stats
from bots.win_prob import N_WEIGHTS, calibrated, order_of, progress_of, weights_for

MAX_WORKERS = 64
STATS = {"mean_reward": 6, "win_prob": 6, "expected_vp": 4}  # visit-weighted means, rounded to these digits


def _engine_error(pointer: str, message: str) -> Exception:
    try:
        from engine_ext import StateError

        return StateError(pointer, message)
    except Exception:  # noqa: BLE001
        return ValueError(f"{pointer}: {message}")


def analyse_state(doc: dict[str, Any], *, level: str | None = None, iterations: int | None = None,
                  time_ms: float | None = None, seed: int = 0, workers: int = 1,
                  progress: Callable[[dict[str, Any]], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Analyse the position of `doc` (a full state or a player's view) for the player to move.

    The search only uses what that player knows (every iteration re-samples the hidden decks from
    their information), so a full document and that player's view give the same answer for the
    same seed. `level` picks a preset (default: DEFAULT_LEVEL); `iterations` / `time_ms` override
    its budget; `workers` > 1 runs a root-parallel search over that many processes.
    Raises engine_ext.StateError (with a JSON pointer) for a bad document, a finished game or a
    view whose player to move chooses among cards it does not show (`/pending/drawn`), KeyError
    for an unknown level, ValueError for a bad budget.
    """
    import engine_ext

    return analyse_game(engine_ext.from_json(doc), level=level, iterations=iterations, time_ms=time_ms,
                        seed=seed, workers=workers, progress=progress, should_stop=should_stop)


def check_budget(iterations: int | None, time_ms: float | None, workers: int) -> None:
    """ValueError for a budget or a worker count that no search can run with."""
    if iterations is not None and (not isinstance(iterations, int) or iterations < 1):
        raise ValueError("iterations must be a positive integer")
    if time_ms is not None and (not isinstance(time_ms, (int, float)) or time_ms <= 0):
        raise ValueError("time_ms must be positive")
    if not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers must be in 1..{MAX_WORKERS}")


def analyse_game(game: Any, *, level: str | None = None, iterations: int | None = None,
                 time_ms: float | None = None, seed: int = 0, workers: int = 1,
                 progress: Callable[[dict[str, Any]], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """`analyse_state` on a game already loaded (`engine_ext.from_json`), for a caller that has
    parsed the document once and searches it several times (the service's parts). The search
    leaves `game` as it was."""
    import engine_ext

    check_budget(iterations, time_ms, workers)
    if game.is_terminal:
        raise _engine_error("/game_over", "the game is over: there is no decision to suggest")
    if game.hidden_from(game.observer):  # the view holds made-up cards where that seat chooses
        raise _engine_error("/pending/drawn", f"seat {game.turn_player} is choosing among cards it drew that "
                            f"this view (seat {game.observer}) has not seen; search the full state, or the "
                            "view of that seat")
    name = level or DEFAULT_LEVEL
    lv = get_level(name)
    if workers > 1:
        from bots.parallel import root_parallel

        an = root_parallel(game, lv.config, workers=workers, iterations=iterations, time_ms=time_ms,
                           seed=seed, name=name, progress=progress, should_stop=should_stop)
    else:
        an = lv.bot().analyse(game, iterations=iterations, time_ms=time_ms, seed=seed, progress=progress,
                              should_stop=should_stop)
    out = calibrate_answer(an.to_dict(game.state), game, name)
    out["level"] = name
    out["compiled"] = bool(game.engine.COMPILED) if hasattr(game, "engine") else bool(engine_ext.COMPILED)
    out["workers"] = workers
    return out


def calibrate_answer(answer: dict[str, Any], game: Any, level: str | None = None) -> dict[str, Any]:
    """`answer` (an analysis of `game`, or the merge of its parts) with every `win_prob` the
    calibrated chance of its `mean_reward` for `level` (default: DEFAULT_LEVEL), this number of
    players and the game's progress (`bots.win_prob`); None without a fit."""
    lv = get_level(level or DEFAULT_LEVEL)
    weights = weights_for(lv, int(game.state.players))
    order = order_of(game.state) if weights is not None and len(weights) > N_WEIGHTS else 0
    return calibrated(answer, weights, progress_of(game.state), order)


def position_of(doc: Any) -> int:
    """`position_key` of a state document (a full state or a view) or of a game loaded from one:
    the position term of the final choice's draw, for `merge_parts`."""
    import engine_ext

    game = engine_ext.from_json(doc) if isinstance(doc, dict) else doc
    return position_key(game.state)


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
    return [dict(lv.to_dict(), rank=i + 1, default=lv.name == DEFAULT_LEVEL)
            for i, lv in enumerate(load_levels())]


__all__ = ["analyse_state", "analyse_game", "merge_parts", "list_levels", "Analysis", "Alternative"]
