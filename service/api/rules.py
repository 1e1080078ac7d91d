"""The rules over HTTP: POST /games, POST /legal, POST /apply."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from engine_ext.words import seat_words

from .. import describe, seeds, states
from ..errors import APIError, pointer
from ..models import ApplyRequest, ApplyResponse, GameResponse, LegalRequest, LegalResponse, NewGameRequest
from ..openapi import operation
from .common import read_body, with_request_id

bp = Blueprint("rules", __name__)


def _to_json(game: Any, observer: int | None, ptr: str) -> dict[str, Any]:
    players = states.player_count(game)
    if observer is not None and observer >= players:
        raise APIError(422, "invalid_observer", f"observer must be below the player count {players}", ptr)
    doc = game.to_json(observer=observer)
    return dict(doc)


def _own_view(game: Any, observer: int) -> int:
    """`observer`, whose view a response shows: any seat of a full state; a view's own seat only."""
    if game.observer is not None and observer != game.observer:
        raise APIError(422, "invalid_observer", f"this state is {seat_words(game.observer)}'s view: it can become "
                       f"that seat's view only ({seat_words(observer)} knows what it does not); send the full state "
                       "for another seat's", "/observer")
    return observer


def check_variant(variant: Any, prefix: str = "") -> None:
    """422 naming the field for a variant object with an unknown field or a bad `additional`
    (the engine checks the rest: the slugs, the other forms)."""
    if isinstance(variant, dict):
        extra = set(variant) - {"additional"}
        if extra:
            key = sorted(extra)[0]
            raise APIError(422, "validation_error", f"unknown variant field {key!r}", prefix + pointer("variant", key))
        adds = variant.get("additional", [])
        if not isinstance(adds, list) or not all(isinstance(a, str) for a in adds):
            raise APIError(422, "validation_error", "additional must be a list of card slugs",
                           prefix + "/variant/additional")


@bp.post("/games")
@operation(
    "/games",
    "post",
    summary="A new game",
    tag="rules",
    request=NewGameRequest,
    responses={200: ("The initial state and its legal decisions.", GameResponse)},
)
def new_game() -> Response:
    """Set up a game from the player count, seed and variant. The full (trusted) state, or the
    view of `observer`."""
    return jsonify(with_request_id(new_game_answer(read_body(NewGameRequest))))


@bp.post("/legal")
@operation(
    "/legal",
    "post",
    summary="Legal decisions of a state",
    tag="rules",
    request=LegalRequest,
    responses={200: ("The decisions the player to move may take.", LegalResponse)},
)
def legal() -> Response:
    """Every legal decision of the player to move (empty when the game is over, or when the
    state is a view of another seat and the player to move is choosing among cards it drew
    unseen: then `legal_hidden` is true). With `observer`, also that seat's view (`state`)."""
    return jsonify(with_request_id(legal_answer(read_body(LegalRequest))))


@bp.post("/apply")
@operation(
    "/apply",
    "post",
    summary="Apply a decision",
    tag="rules",
    request=ApplyRequest,
    responses={200: ("The next state and what happened.", ApplyResponse)},
)
def apply() -> Response:
    """Apply one legal decision and return the next state (the same view as given unless
    `observer` says otherwise), the events and the next legal decisions."""
    return jsonify(with_request_id(apply_answer(read_body(ApplyRequest))))


# The answers, from a validated request, without HTTP: the views above and `kashgar engine` give them.


def new_game_answer(req: NewGameRequest) -> dict[str, Any]:
    """POST /games's answer (no request_id)."""
    variant: Any = req.variant
    check_variant(variant)
    game = states.new_game(req.players, req.seed if req.seed is not None else seeds.random_seed(), variant)
    body = states.game_summary(game)
    body["state"] = _to_json(game, req.observer, "/observer")
    body.update(describe.legal_seen_by(game, req.observer))
    return body


def legal_answer(req: LegalRequest) -> dict[str, Any]:
    """POST /legal's answer (no request_id)."""
    game = states.load_game(req.state)
    observer = game.observer if req.observer is None else _own_view(game, req.observer)
    body = states.game_summary(game)
    body.update(describe.legal_seen_by(game, observer))
    body["count"] = len(body["legal"])
    if req.observer is not None:
        body["state"] = _to_json(game, observer, "/observer")
    return body


def apply_answer(req: ApplyRequest) -> dict[str, Any]:
    """POST /apply's answer (no request_id)."""
    game = states.load_game(req.state)
    states.refuse_hidden_choice(game)
    decision = states.parse_decision(game, req.decision, "/decision")
    observer = game.observer if req.observer is None else _own_view(game, req.observer)
    try:
        made_up = game.outcome_made_up(decision)  # before the game moves on
        item = describe.decision_json(decision, game)
        events = game.apply(decision, observer=observer)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise APIError(422, "illegal_decision", f"cannot apply {decision}: {exc}", "/decision") from None
    body = states.game_summary(game)
    body["state"] = _to_json(game, observer, "/observer")
    body["decision"] = item
    body["events"] = describe.described_events(events, game)
    body["sampled"] = made_up or any(e.get("sampled") for e in events)
    body.update(describe.legal_seen_by(game, observer))
    return body
