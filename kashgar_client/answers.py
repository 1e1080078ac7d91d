"""Typed answers of the API. Each keeps the whole JSON it was read from in `raw` (fields a newer
server adds are there); a game state stays the JSON document the API defines
(engine_ext/data/state.schema.json): send it back as it came."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

JobStatus = Literal["queued", "started", "finished", "failed", "cancelled"]
State = dict[str, Any]


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class Decision:
    """A legal decision: `decision` (its JSON), `text` (canonical, e.g. `c0:a`; send it to apply),
    `description` in words, `card_name` when it names a card."""

    decision: dict[str, Any]
    text: str
    description: str = ""
    card_name: str | None = None

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Decision:
        return cls(dict(doc.get("decision") or {}), str(doc["text"]), str(doc.get("description", "")),
                   doc.get("card_name"))


@dataclass(frozen=True)
class Position:
    """The answer of POST /games and POST /legal: whose move it is, the legal decisions (as the
    state's observer sees them), and `state` (the new game's, or the observer's view asked of
    /legal; None when /legal was asked without an observer)."""

    state: State | None
    current_player: int
    turn_player: int
    is_terminal: bool
    winner: int
    vp: list[int] | None
    legal: list[Decision]
    legal_hidden: bool
    request_id: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Position:
        return cls(**_position_fields(doc))


def _position_fields(doc: dict[str, Any]) -> dict[str, Any]:
    return {
        "state": doc.get("state"),
        "current_player": int(doc["current_player"]),
        "turn_player": int(doc["turn_player"]),
        "is_terminal": bool(doc["is_terminal"]),
        "winner": int(doc.get("winner", -1)),
        "vp": None if doc.get("vp") is None else [int(v) for v in doc["vp"]],
        "legal": [Decision.from_json(d) for d in doc.get("legal", [])],
        "legal_hidden": bool(doc.get("legal_hidden", False)),
        "request_id": doc.get("request_id"),
        "raw": doc,
    }


@dataclass(frozen=True)
class Applied(Position):
    """The answer of POST /apply: the next position (`state` is the next state), the `decision`
    applied, its `events` (dicts with `event` and `description`), and `sampled` (True when the
    outcome hangs on an order the given state does not hold: one possible outcome)."""

    decision: Decision | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    sampled: bool = False

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Applied:
        return cls(**_position_fields(doc), decision=Decision.from_json(doc["decision"]),
                   events=list(doc.get("events", [])), sampled=bool(doc.get("sampled", False)))


@dataclass(frozen=True)
class Alternative:
    """A root decision the search weighed: its visits and the player to move's prospects."""

    decision: dict[str, Any]
    decision_text: str
    description: str
    card_name: str | None
    visits: int
    mean_reward: float | None
    win_prob: float | None
    expected_vp: float | None

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Alternative:
        return cls(dict(doc.get("decision") or {}), str(doc["decision_text"]), str(doc.get("description", "")),
                   doc.get("card_name"), int(doc.get("visits", 0)), _opt_float(doc.get("mean_reward")),
                   _opt_float(doc.get("win_prob")), _opt_float(doc.get("expected_vp")))


@dataclass(frozen=True)
class Suggestion:
    """A search's answer (POST /suggest, or a finished job's result): the decision to play
    (`decision_text`, send it to apply), the alternatives, the expected line, the win chance, and
    what the search did. `partial` is True on what a cancelled job's parts searched."""

    decision: dict[str, Any]
    decision_text: str
    description: str
    card_name: str | None
    alternatives: list[Alternative]
    line: list[str]
    line_descriptions: list[str]
    win_prob: float | None
    expected_vp: float | None
    iterations: int
    elapsed_ms: float
    seed: int
    level: str | None
    compiled: bool
    parts: int
    truncated: bool
    partial: bool
    raw: dict[str, Any] = field(repr=False, compare=False)
    elo: float | None = None  # the Elo asked (then `level` is the level drawn for this decision)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Suggestion:
        return cls(
            decision=dict(doc.get("decision") or {}),
            decision_text=str(doc["decision_text"]),
            description=str(doc.get("description", "")),
            card_name=doc.get("card_name"),
            alternatives=[Alternative.from_json(a) for a in doc.get("alternatives", [])],
            line=[str(s) for s in doc.get("line", [])],
            line_descriptions=[str(s) for s in doc.get("line_descriptions", [])],
            win_prob=_opt_float(doc.get("win_prob")),
            expected_vp=_opt_float(doc.get("expected_vp")),
            iterations=int(doc.get("iterations", 0)),
            elapsed_ms=float(doc.get("elapsed_ms", 0.0)),
            seed=int(doc.get("seed", 0)),
            level=doc.get("level"),
            compiled=bool(doc.get("compiled", False)),
            parts=int(doc.get("parts", 1)),
            truncated=bool(doc.get("truncated")),
            partial=bool(doc.get("partial")),
            raw=doc,
            elo=_opt_float(doc.get("elo")),
        )


@dataclass(frozen=True)
class Accepted:
    """A 202 from POST /suggest: the search runs as job `job_id`; `location` is the job's URL
    (the Location header, absolute)."""

    job_id: str
    status: JobStatus
    location: str
    parts: int
    backend: str
    request_id: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class JobProgress:
    """Iterations searched so far (all parts), the best decision so far, parts done of the total; a
    review's decisions reviewed of the total."""

    iterations: int
    best: str | None
    parts_done: int
    parts_total: int
    decisions_done: int = 0
    decisions_total: int = 0

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> JobProgress:
        return cls(int(doc.get("iterations", 0) or 0), doc.get("best"), int(doc.get("parts_done", 0)),
                   int(doc.get("parts_total", 0)), int(doc.get("decisions_done", 0) or 0),
                   int(doc.get("decisions_total", 0) or 0))


@dataclass(frozen=True)
class Job:
    """GET /jobs/<id>: `status`, `progress`, and `result` once finished (or what a cancelled job's
    parts searched, once they all stopped); `error` when it failed. A review's job (`kind`
    "review") has its review, as JSON, in `review` instead of `result`."""

    job_id: str
    status: JobStatus
    progress: JobProgress
    result: Suggestion | None
    error: str | None
    created_at: float
    finished_at: float | None
    backend: str
    raw: dict[str, Any] = field(repr=False, compare=False)
    kind: str = "search"
    review: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Job:
        result = doc.get("result")
        kind = str(doc.get("kind", "search"))
        return cls(
            job_id=str(doc["job_id"]),
            status=doc["status"],
            progress=JobProgress.from_json(doc.get("progress") or {}),
            result=Suggestion.from_json(result) if isinstance(result, dict) and kind == "search" else None,
            error=doc.get("error"),
            created_at=float(doc.get("created_at", 0.0)),
            finished_at=_opt_float(doc.get("finished_at")),
            backend=str(doc.get("backend", "")),
            raw=doc,
            kind=kind,
            review=result if isinstance(result, dict) and kind == "review" else None,
        )

    @property
    def settled(self) -> bool:
        """Over for good: finished or failed, or cancelled with every part stopped (its partial
        result, if any, is in)."""
        if self.status in ("finished", "failed"):
            return True
        p = self.progress
        done = self.result is not None or self.review is not None
        return self.status == "cancelled" and (done or p.parts_done == p.parts_total)


@dataclass(frozen=True)
class Level:
    """A difficulty level of GET /levels; `asynchronous`: mode auto answers it as a job."""

    name: str
    description: str | None
    asynchronous: bool
    parts: int
    core_seconds: float | None
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Level:
        return cls(str(doc["name"]), doc.get("description"), bool(doc.get("asynchronous", False)),
                   int(doc.get("parts", 1)), _opt_float(doc.get("core_seconds")), doc)
