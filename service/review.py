"""A game review: one search per decision of a finished game's record, from the view of the seat
that made it at that moment, each judged against the level's choice (`bots.review`).

A review is a job of the same queue as a long `/suggest` (`service.jobs`): its decisions are split
into parts of `DECISIONS_PER_PART`, which run on the embedded threads or the RQ workers, each part
replaying the record up to its own decisions. A part reports every decision as it finishes; the
merge puts them in order and sums each seat up.

What a decision's search sees is the seat's view (`Game.to_json(observer=seat)`): no deck order, no
other seat's hidden cards; its seed comes from the review's seed and the move's number alone, so the
review of a decision does not change when the record's hidden future does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import engine_ext
from bots import review as judging
from bots import suggest as bots_suggest
from bots.position import Position
from bots.suggest import Budget
from engine_ext import record as records
from engine_ext.decisions import Decision
from engine_ext.words import decision_words, no_seat

from . import levels, search
from .errors import APIError, join_pointer

KIND = "review"
MAX_MOVES = 600  # a record with more moves is refused (413): a whole 4-player game has about 300
DECISIONS_PER_PART = 4  # decisions searched by one part (a job's parts spread over the workers)
SEEDS = 2  # searches of each decision, at other seeds; the smaller loss counts (bots.review.judge_all)


@dataclass(frozen=True)
class ReviewSpec:
    """A review as a job stores it: the record, the level and its budget, the seats and the moves
    (their numbers, from 1) to review, the seed."""

    record: dict[str, Any]
    level: str
    iterations: int | None
    time_ms: int | None
    seats: list[int]
    moves: list[int]
    seed: int = 0
    parts: int = 1
    kind: str = field(default=KIND)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReviewSpec:
        return cls(**{k: d[k] for k in ("record", "level", "iterations", "time_ms", "seats", "moves", "seed",
                                        "parts")})

    def part_moves(self, index: int) -> list[int]:
        """The moves part `index` reviews."""
        return self.moves[index * DECISIONS_PER_PART:(index + 1) * DECISIONS_PER_PART]


def _refused(exc: records.RecordError, ptr: str) -> APIError:
    """422 pointing at the record's field at fault (`invalid_record`: not a record by the schema, or
    a start that cannot be set up; `record_does_not_replay`: a move or the result)."""
    return APIError(422, exc.code, exc.message, join_pointer(ptr, exc.pointer))


def plan(record: Any, level: str, seats: list[int] | None, seed: int, ptr: str = "/record") -> ReviewSpec:
    """The review of `record` at `level`: the moves of `seats` (default: every seat) that had more
    than one legal decision. 422 for a record that does not replay (naming the move), an unknown
    level or seat; 413 for a record of more than `MAX_MOVES` moves."""
    if not isinstance(record, dict):
        raise APIError(422, "invalid_record", "the record must be a JSON object", ptr)
    moves = record.get("moves")
    if isinstance(moves, list) and len(moves) > MAX_MOVES:
        raise APIError(413, "record_too_long", f"a review takes a record of at most {MAX_MOVES} moves, not "
                       f"{len(moves)}", join_pointer(ptr, "/moves"))
    names = levels.level_names()
    if level not in names:
        raise APIError(422, "unknown_level", f"unknown level {level!r}; levels: {', '.join(names)}", "/level")
    try:
        replay = records.Replay(record)
    except records.RecordError as exc:
        raise _refused(exc, ptr) from None
    players = int(record["players"])
    wanted = list(range(players)) if seats is None else sorted(set(seats))
    for i, s in enumerate(wanted):
        if not 0 <= s < players:
            raise APIError(422, "unknown_seat", no_seat(s, players), f"/seats/{i}")
    reviewed: list[int] = []
    try:
        for step in replay:
            if step.move["seat"] in wanted and step.legal_count > 1:
                reviewed.append(step.number)
    except records.RecordError as exc:
        raise _refused(exc, ptr) from None
    iterations, time_ms = levels.level_budget(level)
    parts = max(1, -(-len(reviewed) // DECISIONS_PER_PART))
    return ReviewSpec(record=record, level=level, iterations=iterations, time_ms=time_ms, seats=wanted,
                      moves=reviewed, seed=seed, parts=parts)


def decision_seed(seed: int, move: int) -> int:
    """The seed of a move's search: the review's seed and the move's number, nothing of the deal."""
    return search.part_seed(seed, move)


def review_move(spec: ReviewSpec, number: int, seat: int, view: dict[str, Any], played: str) -> dict[str, Any]:
    """One decision reviewed: the level's searches of the seat's `view` (`SEEDS` of them, each an
    `Answer`), the played move (its text in the record, read once) judged by them
    (`bots.review.judge_all`)."""
    position = Position.of(engine_ext.from_json(view), spec.level)  # one position, searched at each seed
    answers = [bots_suggest.suggest(position, [Budget(spec.iterations, spec.time_ms,
                                                      search.part_seed(decision_seed(spec.seed + k, number), 0))])
               for k in range(SEEDS)]
    verdict = judging.judge_all(answers, Decision.parse(played))
    return {
        "move": number,
        "seat": seat,
        "played": played,
        "played_words": decision_words(played, view),
        "best_words": decision_words(verdict["best"], view),
        "iterations": sum(a.iterations for a in answers),
        **verdict,
    }


def run_part(spec_dict: dict[str, Any], index: int, progress: Callable[[dict[str, Any]], None] | None = None,
             should_stop: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Part `index` of a review: its decisions, in order, each reported to `progress` as it finishes;
    stops between decisions when `should_stop()` says so (what it reviewed is kept). The record is
    replayed once, up to the part's last move; a move reviewed is searched from its seat's view,
    made from the game before it (`engine_ext.record.Step.view`)."""
    spec = ReviewSpec.from_dict(spec_dict)
    mine = set(spec.part_moves(index))
    done: list[dict[str, Any]] = []
    if mine:
        last = max(mine)
        for step in records.Replay(spec.record):
            if step.number in mine:
                if should_stop is not None and should_stop():
                    break
                seat = int(step.move["seat"])
                done.append(review_move(spec, step.number, seat, step.view(seat), str(step.move["decision"])))
                if progress is not None:
                    progress({"decisions": list(done)})
            if step.number >= last:
                break
    return {"decisions": done, "iterations": sum(d["iterations"] for d in done)}


def progress_summary(report: dict[str, Any]) -> dict[str, Any]:
    """What a running part keeps in the job record: the decisions it has reviewed so far."""
    return {"decisions": list(report.get("decisions", [])),
            "iterations": sum(int(d.get("iterations", 0)) for d in report.get("decisions", []))}


def salvage(part: dict[str, Any]) -> dict[str, Any] | None:
    """What a part that did not finish (failed for good, or cancelled) leaves to the review: the
    decisions it reported before it stopped (its last heartbeat's progress), or None."""
    done = (part.get("progress") or {}).get("decisions") or []
    return progress_summary({"decisions": done}) if done else None


def combine(spec_dict: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    """The review: every decision reviewed, in the record's order (each move once), each seat
    summed up, and the moves asked for but not reviewed (`missing`: a part that failed for good,
    a cancel)."""
    spec = ReviewSpec.from_dict(spec_dict)
    by_move = {int(d["move"]): d for r in results for d in r.get("decisions", [])}
    decisions = [by_move[m] for m in sorted(by_move)]
    return {
        "kind": KIND,
        "level": spec.level,
        "seats": judging.seat_summary(decisions, spec.seats),
        "decisions": decisions,
        "reviewed": len(decisions),
        "total": len(spec.moves),
        "missing": [m for m in spec.moves if m not in by_move],
        "thresholds": {"inaccuracy": judging.INACCURACY, "mistake": judging.MISTAKE, "blunder": judging.BLUNDER},
        "iterations": sum(int(d.get("iterations", 0)) for d in decisions),
    }


def progress(rec: dict[str, Any]) -> dict[str, Any]:
    """A review job's progress: decisions reviewed of the total, parts done."""
    spec = rec["spec"]
    if rec.get("result"):
        done = int(rec["result"].get("reviewed", 0))
    else:
        done = sum(len((p.get("result") or p.get("progress") or {}).get("decisions", [])) for p in rec["parts"])
    parts_done = sum(1 for p in rec["parts"] if p["status"] in ("finished", "failed", "cancelled"))
    return {"decisions_done": done, "decisions_total": len(spec.get("moves", [])),
            "parts_total": len(rec["parts"]), "parts_done": parts_done}


def run_all(spec: ReviewSpec, progress_fn: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """The whole review in this process, part after part (`kashgar review` without a service);
    `progress_fn` hears of each decision as it is reviewed."""
    results = []
    for i in range(spec.parts):
        results.append(run_part(spec.to_dict(), i, progress_fn))
    return combine(spec.to_dict(), results)
