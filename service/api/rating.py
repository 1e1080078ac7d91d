"""POST /rating: a person's Elo on this server's ladder, from the games they played against the bots
(`bots/rating.py`: the model, the prior and the interval)."""

from __future__ import annotations

from typing import Annotated, Any

from flask import Blueprint, Response, jsonify
from pydantic import Field, WithJsonSchema

from bots import rating

from .. import levels as served_levels
from ..errors import APIError, join_pointer
from ..models import RECORD_JSON_SCHEMA, Request
from ..models import Response as Body
from ..openapi import operation
from .common import read_body

bp = Blueprint("rating", __name__)

#: The most games one request rates (a person's history at the table is far shorter).
MAX_RESULTS = 2000
MAX_RECORDS = 200

Level = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^(elo:)?[A-Za-z0-9_.+-]+$",
                             description="A level name from GET /levels (one with an `elo`), or `elo:N`: a bot "
                             "that played at Elo N (as the table plays and records one, e.g. `elo:640`).")]


class RatingResult(Request):
    """One game as its result: each seat's level, null for the person's seat, and each seat's VP."""

    levels: Annotated[list[Level | None], Field(min_length=2, max_length=4, description="Each seat's level, in "
                                                "seat order; null at the person's seat (exactly one).")]
    vp: Annotated[list[Annotated[int, Field(ge=-1000, le=1000)]],
                  Field(min_length=2, max_length=4, description="Each seat's VP at the end, in seat order.")]
    winner: Annotated[int | None, Field(ge=-1, le=3, description="The winner's seat index (it finishes above "
                                        "every other seat: the rules break a tie on VP); omitted: the most VP, "
                                        "a tie a draw between those seats.")] = None


class RatingRequest(Request):
    """The games of one person: as results, as game records, or both."""

    results: Annotated[list[RatingResult], Field(max_length=MAX_RESULTS, description="Games as results.")] = []
    records: Annotated[list[Annotated[dict[str, Any], WithJsonSchema(RECORD_JSON_SCHEMA)]],
                       Field(max_length=MAX_RECORDS, description="Games as records (`kashgar/record@1`, as POST "
                             "/table/record and `kashgar play --record` write them) of finished games, one seat "
                             "of no level (the person's) and bots at the others; read for their seats' levels "
                             "and their result.")] = []


class RatingPrior(Body):
    mean: int = Field(description="The ladder's middle: halfway between its weakest and strongest level's Elo.")
    sd: int


class RatingResponse(Body):
    elo: int = Field(description="The person's Elo on this server's ladder (the posterior's maximum).")
    interval: list[int] = Field(description="Its 95% interval (the posterior's profile), low and high.")
    games: int
    confidence: float
    prior: RatingPrior
    nearest_level: str = Field(description="The level whose Elo is nearest the rating: an opponent at the "
                               "person's strength.")


def _games(req: RatingRequest, elos: dict[str, float]) -> list[rating.Game]:
    games = []
    for i, r in enumerate(req.results):
        try:
            games.append(rating.game_of_result(r.levels, r.vp, r.winner, elos, levels_at=f"/results/{i}/levels",
                                               vp_at=f"/results/{i}/vp", winner_at=f"/results/{i}/winner"))
        except rating.RatingError as exc:
            raise APIError(422, "invalid_result", exc.message, exc.pointer) from None
    for i, rec in enumerate(req.records):
        if rec.get("schema") != "kashgar/record@1":
            raise APIError(422, "invalid_record", "not a game record (schema kashgar/record@1)",
                           f"/records/{i}/schema")
        try:
            games.append(rating.game_of_record(rec, elos))
        except rating.RatingError as exc:
            raise APIError(422, "invalid_record", exc.message, join_pointer(f"/records/{i}", exc.pointer)) from None
    return games


@bp.post("/rating")
@operation("/rating", "post", summary="A person's Elo from their games against the bots", tag="rating",
           request=RatingRequest, errors=(409,),
           responses={200: ("The rating, its 95% interval and the level nearest it.", RatingResponse)})
def rate() -> Response:
    """The person's Elo on this server's ladder (each level's measured `elo`, GET /levels) from the
    games they played against the bots, with a 95% interval: each game is one result against each
    other seat (above it, below it or level), scored by the logistic Elo model, the pairs of a game
    of n players weighted 3/(n+1) as they are not independent, under a normal prior on the ladder's
    middle (sd 350 Elo) that keeps a first game from saying too much; the posterior's maximum and
    its profile interval (docs/service.md, bots/rating.py). No games: the prior. 422 names the
    result or the record's field it cannot use (a level with no measured Elo, a game not over, no
    person's seat or more than one); 409 when no level of this server has a measured Elo."""
    req = read_body(RatingRequest)
    elos = rating.ladder(served_levels.levels())
    if not elos:
        raise APIError(409, "no_ladder", "no level of this server has a measured Elo (`elo` in its level file)", "")
    r = rating.rate(_games(req, elos), rating.ladder_middle(elos))
    return jsonify({**r.to_dict(), "nearest_level": rating.nearest_level(r.elo, elos)})
