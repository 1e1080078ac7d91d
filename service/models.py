"""Request and response models. The same classes validate requests and generate `/openapi.json`."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator, model_validator

from engine_ext import record as _records

#: Placeholder the OpenAPI builder replaces with `{"$ref": "#/components/schemas/State"}`.
STATE_REF = {"type": "object", "x-kashgar-ref": "State"}
DECISION_JSON = {
    "type": "object",
    "description": "A decision in JSON form, e.g. "
    '`{"kind": "select", "caravan": 0, "option": "a"}` (see docs/engine-api.md).',
    "required": ["kind"],
    "properties": {"kind": {"type": "string"}},
}

State = Annotated[dict[str, Any], WithJsonSchema(STATE_REF)]
#: A game record's schema (engine_ext.record), as the server checks it.
RECORD_JSON_SCHEMA = {k: v for k, v in _records.RECORD_SCHEMA.items() if k != "$schema"}
#: A review's record: its initial state a State, as the engine loads it (the table plays only
#: records dealt from a seed, and the document's examples of a State cost a schemathesis run
#: about 10 s of CPU per operation that takes one).
REVIEW_RECORD_JSON_SCHEMA = {**RECORD_JSON_SCHEMA, "properties": {**RECORD_JSON_SCHEMA["properties"], "initial_state": {
    "anyOf": [STATE_REF, {"type": "null"}],
    "description": _records.RECORD_SCHEMA["properties"]["initial_state"]["description"]}}}
def _takes_int(annotation: Any) -> bool:
    """Whether a field's type is int or an optional int (not bool)."""
    return annotation is int or int in get_args(annotation)


def _takes_ints(annotation: Any) -> bool:
    """Whether a field's type is a list of ints, or an optional one."""
    def ints(a: Any) -> bool:
        item = get_args(a)[0] if get_origin(a) is list and get_args(a) else None
        return (get_args(item)[0] if get_origin(item) is Annotated else item) is int

    return ints(annotation) or any(ints(a) for a in get_args(annotation))


def _whole(value: Any) -> Any:
    """A whole number written with a fraction (`2.0`) as the integer, up to 2**53; else `value`."""
    return int(value) if type(value) is float and value.is_integer() and abs(value) <= 2**53 else value


DecisionJSON = Annotated[dict[str, Any], WithJsonSchema(DECISION_JSON)]
ELO = ("A strength instead of a level: an Elo from the weakest level's to the strongest's (GET /levels, "
       "`elo`). Each decision is searched by one of the two levels around it, the upper one with the "
       "chance that makes the expected strength the one asked (bots/strength.py), drawn from the seed and the "
       "position: same seed, same answer. Not with `level`, `iterations` or `time_ms`.")

Seed = Annotated[
    int,
    Field(ge=0, le=(1 << 63) - 1, description="Seed of the search or game; same seed and inputs give the same answer."),
]


class Request(BaseModel):
    """Requests reject unknown fields and values of the wrong JSON type (no coercion), except that
    an integer field, or an item of a list of integers, takes a whole number written with a
    fraction (`2.0`): JSON Schema, and so the OpenAPI document, counts it as the integer 2 (up to
    2**53, where a float stops being exact)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _whole_numbers(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        whole: dict[str, Any] = {}
        for k, v in data.items():
            field = cls.model_fields.get(k)
            if field is None:
                continue
            if type(v) is float and _takes_int(field.annotation) and _whole(v) is not v:
                whole[k] = _whole(v)
            elif isinstance(v, list) and _takes_ints(field.annotation) and any(type(x) is float for x in v):
                whole[k] = [_whole(x) for x in v]
        return {**data, **whole} if whole else data


class Response(BaseModel):
    model_config = ConfigDict(extra="allow")


# ---------------------------------------------------------------------------------- requests


class SuggestRequest(Request):
    """Ask for the decision to play in `state`."""

    state: State
    level: Annotated[
        str | None,
        Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="A level name from GET /levels."),
    ] = None
    elo: Annotated[float | None, Field(allow_inf_nan=False, description=ELO)] = None
    iterations: Annotated[
        int | None, Field(ge=1, le=100_000_000, description="Budget in search iterations (overrides the level's).")
    ] = None
    time_ms: Annotated[
        int | None, Field(ge=1, le=86_400_000, description="Budget in milliseconds (overrides the level's).")
    ] = None
    seed: Seed = 0
    mode: Literal["sync", "async", "auto"] = Field(
        "auto",
        description="sync: answer now (bounded budgets); async: 202 and a job; auto: sync when the "
        "budget is within the synchronous limits, else async.",
    )
    parallel: Annotated[
        int | None,
        Field(
            ge=1,
            le=64,
            description="Root-parallel parts of the search "
            "(default: from the budget). Part of the inputs: same parallel, "
            "same answer.",
        ),
    ] = None


class NewGameRequest(Request):
    players: Annotated[int, Field(ge=2, le=4)] = 2
    seed: Annotated[
        int | None,
        Field(
            ge=0,
            le=(1 << 63) - 1,
            description="Seed of the deal: same seed, same game. Omitted: a random, unguessable deal "
            "(a small seed can be found from a player's view, and with it the order of every deck).",
        ),
    ] = None
    variant: Annotated[
        Literal["all", "base", "off"] | list[str] | dict[str, Any] | None,
        WithJsonSchema(
            {
                "anyOf": [
                    {"type": "null"},
                    {"enum": ["all", "base", "off"]},
                    {"type": "array", "items": {"type": "string"}},
                    {"type": "object", "properties": {"additional": {"type": "array", "items": {"type": "string"}}}},
                ]
            },
            mode="validation",
        ),
        Field(description='The forms a state\'s `variant` takes: null, "base" or "off" (the base game), "all" '
              '(every Cut-and-Thrust card), or the Cut-and-Thrust cards shuffled in, as [slugs] or '
              '{"additional": [slugs]}.'),
    ] = None
    observer: Annotated[
        int | None, Field(ge=0, le=3, description="Return the view of this player instead of the full (trusted) state: "
                          "a seat of the game, below `players` (else 422 at /observer).")
    ] = None


class LegalRequest(Request):
    state: State
    observer: Annotated[
        int | None,
        Field(
            ge=0,
            le=3,
            description="Also return this seat's view of the state (`state`), with the legal decisions as that "
            "seat sees them: how a full state is turned into the view each seat's client gets. A seat of the "
            "game, below the state's `players`; on a view, only its own seat (else 422 at /observer).",
        ),
    ] = None


class ApplyRequest(Request):
    state: State
    decision: Annotated[
        str | dict[str, Any],
        WithJsonSchema(
            {"anyOf": [{"type": "string", "description": "canonical text, e.g. `c0:a`"}, DECISION_JSON]},
            mode="validation",
        ),
    ]
    observer: Annotated[
        int | None,
        Field(
            ge=0,
            le=3,
            description="Return the view of this player (default: the same observer as the given state): a "
            "seat of the game, below the state's `players`. A view can become its own seat's view only: another "
            "seat's needs the full state (else 422 at /observer).",
        ),
    ] = None

    @field_validator("decision", mode="before")
    @classmethod
    def _text_or_object(cls, value: Any) -> Any:
        """A list, a number or null was told only "Input should be a valid string"."""
        if not isinstance(value, (str, dict)):
            raise ValueError("a decision is its text (e.g. `c0:a`) or its JSON object")
        return value


# --------------------------------------------------------------------------------- responses


MEAN_REWARD = (
    "The search's mean reward for the player to move, 0..1 (the evaluation at its leaves, a few "
    "decisions ahead, squashed by a softmax over the seats' VP): a score, higher is better; "
    "win_prob is its calibrated chance."
)
WIN_PROB = (
    "The chance that the player to move wins if every seat goes on playing at this level: the "
    "search's mean reward and the game's progress (and, for the levels and seat counts where it "
    "predicts better, the mover's place in turn order) mapped by a logistic fit on self-play games "
    "of the level (bots/data/win_calibration.json; held-out Brier scores in BENCHMARKS.md). It never falls as "
    "mean_reward rises. A request with its own budget (iterations or time_ms) gets the map of its "
    "level (the default level without one), fitted at that level's own budget. null when the level "
    "has no fit for this number of players (a level file other than the shipped one, or a preset "
    "changed since its fit), for an alternative the search never visited (no mean_reward), and for "
    "a forced decision (one legal decision: no search). mean_reward is the raw score."
)
EXPECTED_VP = "The player to move's VP at the search's leaves, a few decisions ahead; not its final score."


DESCRIPTION = "The decision in words, from the card data (engine_ext/words.py)."
CARD_NAME = "The English name of the card the decision names (a keep or take decision); absent otherwise."


class Alternative(Response):
    decision: DecisionJSON
    decision_text: str
    description: str = Field(description=DESCRIPTION)
    card_name: str | None = Field(None, description=CARD_NAME)
    visits: int
    mean_reward: float | None = Field(None, description=MEAN_REWARD)
    win_prob: float | None = Field(None, description=WIN_PROB)
    expected_vp: float | None = Field(None, description=EXPECTED_VP)


class SuggestResult(Response):
    decision: DecisionJSON
    decision_text: str
    description: str = Field(description=DESCRIPTION)
    card_name: str | None = Field(None, description=CARD_NAME)
    alternatives: list[Alternative]
    line: list[str] = Field(
        description="The expected line: the most visited decision at each node from the root down. Levels "
        "that search whole turns (`expert`, `master`) hold only the starts of turns in their tree, so their "
        "line names those, not the decisions within a turn; `master` holds only its own turns, so its line "
        "skips the other players' turns."
    )
    line_descriptions: list[str] = Field(
        description="Each step of `line` in words, in the state it is played in while the line is legal "
        "in the given state played on; from a step that is not (a skipped turn, a made-up draw), in words "
        "that need no state."
    )
    reason: str | None = Field(
        None, description="Why the search prefers its decision, in one sentence made from its own numbers: its win "
        "chance and expected VP against the next best it looked at, and what the line it expects does for the "
        "player to move (contracts fulfilled, cards taken, VP scored; never a card a view's made-up draw names)."
    )
    win_prob: float | None = Field(None, description=WIN_PROB)
    expected_vp: float | None = Field(None, description=EXPECTED_VP)
    iterations: int
    elapsed_ms: float
    seed: int
    level: str | None = None
    elo: float | None = Field(None, description="The Elo asked (`level`: the level drawn to search this decision); "
                              "absent when the request named a level.")
    compiled: bool
    parts: int = 1
    truncated: bool | None = Field(
        None, description="True when a synchronous search hit the server's wall-clock cap "
        "(KASHGAR_SYNC_TIMEOUT_MS) and answered with what it had searched; absent otherwise."
    )
    partial: bool | None = Field(
        None, description="True on the result of a cancelled job, or of a failed one (a part failed for good, "
        "its attempts used): the merge of what its parts searched before they stopped; absent otherwise."
    )


class SuggestResponse(SuggestResult):
    request_id: str
    mode: Literal["sync"] = "sync"


class ReviewRequest(Request):
    """Review a finished (or unfinished) game: one search per decision, from the view of the seat
    that made it."""

    record: Annotated[dict[str, Any], WithJsonSchema(REVIEW_RECORD_JSON_SCHEMA),
                      Field(description="A game record (`kashgar/record@1`), as POST /table/record and `kashgar "
                            "play --record` write it.")]
    level: Annotated[
        str,
        Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$", description="The level that judges "
              "each decision (GET /levels)."),
    ] = "master"
    seats: Annotated[
        list[Annotated[int, Field(ge=0, le=3)]] | None,
        Field(min_length=1, max_length=4, description="The seats to review (default: every seat)."),
    ] = None
    seed: Seed = 0


class JobAccepted(Response):
    job_id: str
    status: Literal["queued", "started", "finished", "failed", "cancelled"]
    status_url: str
    parts: int
    backend: Literal["embedded", "redis"]
    request_id: str
    mode: Literal["async"] = "async"


class JobProgress(Response):
    iterations: int
    best: str | None = None
    parts_total: int
    parts_done: int


class ReviewProgress(Response):
    decisions_done: int = Field(description="Decisions reviewed so far.")
    decisions_total: int = Field(description="Decisions the review searches (those with more than one legal choice).")
    parts_total: int
    parts_done: int


class JobPartAttempt(Response):
    attempt: int
    worker: str | None = None
    error: str
    at: float


class JobPart(Response):
    index: int
    status: Literal["queued", "started", "finished", "failed", "cancelled"]
    attempt: int
    worker: str | None = None
    iterations: int
    error: str | None = None
    history: list[JobPartAttempt]


class JobRequestEcho(Response):
    level: str | None = None
    elo: float | None = None
    iterations: int | None = None
    time_ms: int | None = None
    seed: int
    parallel: int


class ReviewRequestEcho(Response):
    level: str
    seats: list[int]
    seed: int
    moves: int = Field(description="How many moves the review searches.")


class ReviewDecision(Response):
    move: int = Field(description="The move's number in the record (from 1).")
    seat: int
    played: str = Field(description="The decision played (its text).")
    played_words: str
    best: str = Field(description="The level's choice in the seat's view at that moment.")
    best_words: str
    best_win_prob: float | None = Field(description="The seat's win chance after the level's choice.")
    best_expected_vp: float | None = None
    played_win_prob: float | None = Field(description="The seat's win chance after the move played.")
    played_expected_vp: float | None = None
    played_visits: int
    loss: float | None = Field(description="best_win_prob - played_win_prob, at least 0; null: the search never "
                               "tried the move played (not rated).")
    class_: Literal["inaccuracy", "mistake", "blunder"] | None = Field(
        alias="class", description="By the loss: inaccuracy from 0.10, mistake from 0.20, blunder from 0.30 "
        "(docs/review.md); null: within the search's own noise.")
    iterations: int
    reason: str | None = Field(None, description="Why the level prefers its choice to the move played, in one "
                               "sentence from its search (as a hint's reason, against the move played); null "
                               "where the level chose the move played.")


class ReviewSeat(Response):
    seat: int
    decisions: int
    rated: int
    mean_loss: float | None
    accuracy: float | None = Field(description="Mean of 103.1668 exp(-0.04354 x) - 3.1669 over the rated "
                                   "decisions, x the loss in percentage points (100: no loss).")
    inaccuracy: int
    mistake: int
    blunder: int


class ReviewResult(Response):
    kind: Literal["review"]
    level: str
    seats: list[ReviewSeat]
    decisions: list[ReviewDecision]
    reviewed: int = Field(description="Decisions reviewed (in `decisions`).")
    total: int = Field(description="Decisions the review was asked to search (those with more than one legal "
                       "choice, of the seats asked for).")
    missing: list[int] = Field(description="The moves (their numbers in the record, from 1) asked for but not "
                               "reviewed, in order: a part that failed for good, or a cancel, left them; `[]` "
                               "when the review is whole.")
    thresholds: dict[str, float]
    iterations: int
    elapsed_ms: float | None = Field(None, description="From the job's acceptance to its last part's end.")
    partial: bool | None = Field(
        None, description="True when the job was cancelled or failed (a part failed for good, its attempts "
        "used): `decisions` holds every decision reviewed before, and `missing` names the rest; absent when "
        "whole.")


class JobView(Response):
    job_id: str
    kind: Literal["search", "review"] = "search"
    status: Literal["queued", "started", "finished", "failed", "cancelled"]
    created_at: float
    finished_at: float | None = None
    request_id: str | None = None
    request: JobRequestEcho | ReviewRequestEcho
    progress: JobProgress | ReviewProgress
    parts: list[JobPart]
    retried: bool
    result: SuggestResult | ReviewResult | None = None
    error: str | None = None
    backend: Literal["embedded", "redis"]


class DecisionItem(Response):
    decision: DecisionJSON
    text: str
    description: str = Field(description=DESCRIPTION + ' E.g. "Patriarch, caravan 1: draw 2 Standard cards and '
                             'keep one" (caravans counted from 1 in words; `c0` in `text`).')
    card_name: str | None = Field(None, description=CARD_NAME)


class Event(Response):
    event: Literal["resource", "card", "fulfil", "turn_end"]
    description: str = Field(description="The event in words (seats named `seat N`).")
    card: str | None = Field(None, description="The card's slug (null: a card this seat did not see).")
    name: str | None = Field(None, description="The English name of `card`, when named.")
    turned: str | None = Field(None, description="What the card became when turned over (a slug).")
    turned_name: str | None = Field(None, description="The English name of `turned`.")


class GameSummary(Response):
    current_player: int
    turn_player: int
    is_terminal: bool
    winner: int = Field(description="The winning seat once the game is over (`is_terminal`); -1 while it runs.")
    vp: list[int] | None = None


class WithLegal(GameSummary):
    legal: list[DecisionItem]
    legal_hidden: bool = Field(
        False,
        description="True when the response is a view of a seat that is not to move and the player "
        "to move is choosing among cards it drew unseen by that seat: `legal` is then left empty.",
    )


class GameResponse(WithLegal):
    state: State
    request_id: str


class LegalResponse(WithLegal):
    count: int
    state: State | None = Field(None, description="The view of `observer`, when the request named one.")
    request_id: str


class ApplyResponse(WithLegal):
    state: State
    decision: DecisionItem
    events: list[Event] = Field(
        description="What the decision changed, as the returned state's observer sees it: a Special card "
        "another seat drew or put back unseen has `card: null`; a card drawn from a deck whose order the "
        "given view does not know has `sampled: true`."
    )
    sampled: bool = Field(
        description="True when what the decision led to hangs on order the given state does not hold "
        "(a draw from a deck, a refill of the display from the contract deck, a reshuffle of the "
        "discard pile): a view's, or a full state's that leaves out some deck's order (or `rng`, the "
        "seed of its reshuffles), is made up, so the result is one possible outcome, not the real one "
        "(apply on the full state with every deck's order to play a real game)."
    )
    request_id: str


class Level(Response):
    name: str
    description: str | None = None
    asynchronous: bool = Field(
        False, description="Whether mode auto answers this level as a job (202; its budget is over the "
        "synchronous limits): the long searches run on the workers."
    )
    parts: int = Field(1, description="Root-parallel parts its search is split into (they run side by side).")
    core_seconds: float | None = Field(
        None, description="Measured CPU core-seconds of one searched decision, all its parts together."
    )


class EloRange(Response):
    min: float = Field(description="The weakest level's Elo.")
    max: float = Field(description="The strongest level's Elo.")


class LevelsResponse(Response):
    levels: list[Level]
    default: str | None = Field(None, description="The level a request without a level or a budget is "
                                "answered by (marked `default: true` among the levels).")
    elo: EloRange | None = Field(None, description="The range of `elo` a /suggest request may ask for; null on "
                                 "a ladder with fewer than two measured levels.")


class CardFile(Response):
    """The card file in use: the package's engine_ext/data/cards.toml, or the one KASHGAR_CARDS names,
    by its file name and sha256 (never its path)."""

    name: str = Field(description="The file's name, without its directory (the package's: `cards.toml`).")
    sha256: str = Field(description="The sha256 of the file's text (UTF-8), hex.")


class CardsResponse(Response):
    cards: list[dict[str, Any]]
    contracts: list[dict[str, Any]]
    count: int
    file: CardFile


class Health(Response):
    status: Literal["ok"]
    version: str
    compiled: bool
    backend: Literal["embedded", "redis"]
    cards: CardFile


class Ready(Response):
    ready: bool
    backend: Literal["embedded", "redis"]
    checks: dict[str, str]
    error: Literal["not_ready"] | None = Field(
        None, description="`not_ready` in a 503 (the code /metrics counts it under)")


class ErrorItem(BaseModel):
    pointer: str
    message: str


class ErrorBody(BaseModel):
    """Every error, as problem details (RFC 9457, `application/problem+json`): a code, a message,
    and a JSON pointer into the request (`in` says into what)."""

    type: str = Field(description='"about:blank": the status says what kind of problem it is.')
    title: str = Field(description="The status's reason phrase.")
    status: int
    detail: str = Field(description="What is wrong (as `message`).")
    error: str
    message: str
    pointer: str = Field(description='JSON pointer (RFC 6901) of the wrong field; "" is the whole body.')
    in_: Literal["body", "path", "query", "header"] = Field(alias="in")
    errors: list[ErrorItem]
    request_id: str | None = None
