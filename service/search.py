"""One search request, its split into root-parallel parts, running a part, merging the parts.

The split depends only on the request (budget, seed, `parallel`), never on how many workers run
it, so a synchronous search and an async job with the same inputs give the same answer.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import engine_ext
from bots import suggest as bots_suggest
from bots.answer import Answer
from bots.suggest import Budget, Position

from .config import Settings
from .describe import describe_answer

SEED_MASK = (1 << 63) - 1
_GOLDEN = 0x9E3779B97F4A7C15


@dataclass(frozen=True)
class SearchSpec:
    """A validated search request (what a job stores and every part reads)."""

    state: dict[str, Any]
    level: str | None
    iterations: int | None
    time_ms: int | None
    seed: int
    parallel: int  # the parts the search is split into (`plan`); the answer says how many it merged: `parts`
    cards: str = ""  # the sha256 of the card data the request was read with ("": not checked)
    elo: float | None = None  # the strength asked (service/strength.py): `level` was drawn for it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SearchSpec:
        return cls(**{k: d[k] for k in ("state", "level", "iterations", "time_ms", "seed", "parallel")},
                   cards=str(d.get("cards", "")), elo=d.get("elo"))


@dataclass(frozen=True)
class PartSpec:
    index: int
    iterations: int | None
    time_ms: int | None
    seed: int


def part_seed(seed: int, index: int) -> int:
    """Part 0 keeps the request's seed (a one-part search is the plain search)."""
    if index == 0:
        return seed & SEED_MASK
    return (seed + index * _GOLDEN) & SEED_MASK


def fits_sync(iterations: int | None, time_ms: int | None, settings: Settings) -> bool:
    """Whether a budget is within the synchronous limits (mode auto answers it now, else as a job)."""
    return (iterations is None or iterations <= settings.sync_max_iterations) and (
        time_ms is None or time_ms <= settings.sync_max_ms
    )


def default_parallel(iterations: int | None, time_ms: int | None, settings: Settings, asynchronous: bool,
                     backend: str = "redis", workers: int | None = None) -> int:
    """Parts of a search when the request names none. An iteration budget: one per
    `part_iterations`. A time budget: every part searches for the whole time, so only as many as
    can run side by side: `time_parts` on RQ workers, and no more than the `workers` listening
    (when known: one worker runs four parts in four times the time asked for), `embedded_threads`
    on the embedded queue (one by default, for the same reason), one when synchronous."""
    if iterations is not None:
        return max(1, min(settings.max_parts, math.ceil(iterations / max(1, settings.part_iterations))))
    if not asynchronous:
        return 1
    side_by_side = settings.time_parts if backend == "redis" else settings.embedded_threads
    if backend == "redis" and workers is not None:
        side_by_side = min(side_by_side, workers)
    return max(1, min(settings.max_parts, side_by_side))


def plan(spec: SearchSpec) -> list[PartSpec]:
    """Iterations are divided among the parts (the first ones get the remainder); a time budget
    is given to every part (they run side by side)."""
    n = spec.parallel
    if spec.iterations is not None:
        n = max(1, min(n, spec.iterations))
        base, extra = divmod(spec.iterations, n)
        its: list[int | None] = [base + (1 if i < extra else 0) for i in range(n)]
    else:
        its = [None] * n
    return [PartSpec(i, its[i], spec.time_ms, part_seed(spec.seed, i)) for i in range(n)]


def position_of(spec: SearchSpec) -> Position:
    """The position `spec` searches: its state loaded and checked, its level. A process that plays
    with other card data than the request was read with refuses it (ValueError)."""
    data = engine_ext.get_engine().data
    if spec.cards and spec.cards != data.sha256:
        raise ValueError(f"this process plays with other card data ({data.path}, sha256 {data.sha256[:12]}...) "
                         f"than the search was asked with (sha256 {spec.cards[:12]}...): start every web process "
                         "and worker with the same KASHGAR_CARDS")
    return Position.of(engine_ext.from_json(spec.state), spec.level)


def budget_of(part: PartSpec) -> Budget:
    return Budget(part.iterations, part.time_ms, part.seed)


def run_part(
    spec: SearchSpec,
    part: PartSpec,
    *,
    progress: Callable[[dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> dict[str, Any]:
    """One part's answer, on a worker or an embedded job thread, as the job store keeps it (JSON)."""
    return bots_suggest.search(position_of(spec), budget_of(part), progress=progress,
                               should_stop=should_stop).to_json()


def combine(spec: SearchSpec, parts: list[dict[str, Any]], position: Position | None = None) -> dict[str, Any]:
    """The answer of the whole search, in words: the bots' finish of its parts (each read back from
    the job store once; `position`: the spec's, already loaded; else it is loaded here)."""
    position = position or position_of(spec)
    answers = [Answer.from_json(p, position) for p in parts]
    return describe_answer(bots_suggest.finish(position, answers, spec.seed), position.game)


def answer(spec: SearchSpec, position: Position | None = None,
           should_stop: Callable[[], bool] | None = None) -> Answer:
    """The bots' answer of `spec`: every part in this process, one after the other, then finished
    (`position`: the spec's, already loaded; else it is loaded here)."""
    position = position or position_of(spec)
    return bots_suggest.suggest(position, [budget_of(p) for p in plan(spec)], should_stop=should_stop)


def answer_within(spec: SearchSpec, position: Position, timeout_ms: int | None) -> tuple[Answer, bool]:
    """`answer` of `spec` on `position` within a safety cap of `timeout_ms` (None: none), and
    whether the cap was hit (the parts stopped early); its elapsed_ms is the whole search's."""
    deadline = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000.0
    truncated = False

    def should_stop() -> bool:
        nonlocal truncated
        if deadline is not None and time.monotonic() >= deadline:
            truncated = True
            return True
        return False

    t0 = time.perf_counter()
    found = answer(spec, position, should_stop if deadline is not None else None)
    return replace(found, elapsed_ms=round((time.perf_counter() - t0) * 1000.0, 3)), truncated


def run_sync(spec: SearchSpec, timeout_ms: int | None = None, position: Position | None = None) -> dict[str, Any]:
    """The answer of `spec` as the service gives it (`answer_within`, with the words) on the
    position read from the request (`position`: already loaded; else it is loaded here).
    `timeout_ms` is a safety cap: when hit, the parts stop early and the answer says
    `truncated: true`."""
    position = position or position_of(spec)
    found, truncated = answer_within(spec, position, timeout_ms)
    out = describe_answer(found, position.game)
    if truncated:
        out["truncated"] = True
    return out


def progress_summary(progress: dict[str, Any]) -> dict[str, Any]:
    """What a part reports while it runs (`bots.ismcts_bot.progress_report`, `bots.parallel`):
    iterations so far and, once it has one, its current best decision (`best`) and its visits."""
    out: dict[str, Any] = {}
    it = progress.get("iterations")
    if isinstance(it, int):
        out["iterations"] = it
    if isinstance(progress.get("decision_text"), str):
        out["best"] = progress["decision_text"]
    if isinstance(progress.get("visits"), int):
        out["visits"] = progress["visits"]
    return out
