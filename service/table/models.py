"""Request and response models of the table (`/table/*`), in `/openapi.json` with the others."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, WithJsonSchema

from engine_ext import DRAWN_SEEDS

from ..models import RECORD_JSON_SCHEMA, DecisionJSON, Request, Response, State

Token = Annotated[str, Field(min_length=1, max_length=200_000,
                             description="The opaque token of the last answer (the game, encrypted and "
                             "authenticated by the service).")]
Level = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$",
                             description="A level name from GET /levels.")]

Elo = Annotated[float, Field(allow_inf_nan=False, description="An Elo within GET /levels' `elo` range: a bot that "
                             "plays at that Elo.")]


class TableNewRequest(Request):
    """A new game: the person is seat 1 (index 0), the bots take the other seats at these levels."""

    levels: Annotated[list[Level | Elo], Field(
        min_length=1, max_length=3,
        description="One level per bot (1 to 3 bots): a level name from GET /levels, or a number, an Elo within "
        "GET /levels' `elo` range, for a bot that plays at that Elo (each decision searched by one of the two levels "
        "around it, drawn from the seed and the position, as POST /suggest's `elo`); the table's seats and record "
        "name it `elo:N` (N with at most six significant digits). A string is a level name (\"640\" is none); a "
        "number outside the range is a 422 whose message gives the range.")]
    variant: Annotated[Any, Field(description='null (the base game), "all" or {"additional": [slugs]}.')] = None
    seed: Annotated[int | None, Field(ge=0, le=DRAWN_SEEDS - 1,
                                      description="Seed of the deal, below 2**53 (exact as a JavaScript number: "
                                      "the page reads it back from the record); omitted: a random, unguessable "
                                      "one.")] = None


class TableMoveRequest(Request):
    token: Token
    decision: Annotated[str | DecisionJSON, Field(description="One of `legal`: its `text` or its `decision`.")]


class TableHintRequest(Request):
    token: Token
    level: Level


class TableTokenRequest(Request):
    token: Token


class TableLoadRequest(Request):
    record: Annotated[dict[str, Any], WithJsonSchema(RECORD_JSON_SCHEMA),
                      Field(description="A game record, as POST /table/record returns it.")]
    moves: Annotated[int | None, Field(ge=0, description="Play back only the record's first `moves` moves: the "
                                       "table before the next one (the record's result is not checked then). "
                                       "Omitted: every move.")] = None


class TableStep(Response):
    seat: int
    who: str
    description: str
    text: str | None = Field(None, description="The decision's code; left out when it names cards the person "
                             "has not seen.")
    events: list[str]


class TableDecision(Response):
    decision: DecisionJSON
    text: str
    description: str


class TableResponse(Response):
    token: str
    seat: int
    players: int
    names: list[str]
    levels: list[str | None]
    current_player: int
    turn_player: int
    is_terminal: bool
    winner: int
    vp: list[int]
    view: State
    legal: list[TableDecision]
    ask: str
    steps: list[TableStep] = Field(description="What happened since the last answer, one decision a step.")
    cards: dict[str, Any]
    contracts: dict[str, Any]
    decisions: int
    result: dict[str, Any] | None = None


class TableHint(Response):
    level: str
    text: str
    description: str
    win_prob: float | None
    expected_vp: float | None
    reason: str = Field(description="Why the level suggests it: one sentence from its search (service/reasons.py).")
    alternatives: list[dict[str, Any]]


class TableRecord(Response):
    record: dict[str, Any]
