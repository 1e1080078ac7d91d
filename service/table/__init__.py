"""The web table: a page where a person plays a game against the bots (`GET /`, `GET /play`), and
the calls it makes (`POST /table/...`). The service keeps no table: each answer carries the whole
game in an opaque token (`token.py`) that the page sends back with the next decision."""

from __future__ import annotations

from typing import Any

from cryptography.fernet import MultiFernet
from flask import Blueprint, Flask, Response, current_app, jsonify, render_template

from ..api.common import read_body, settings
from ..errors import APIError
from ..openapi import operation
from . import play, record, token
from .models import (
    TableHint,
    TableHintRequest,
    TableLoadRequest,
    TableMoveRequest,
    TableNewRequest,
    TableRecord,
    TableResponse,
    TableTokenRequest,
)

bp = Blueprint("table", __name__, static_folder="static", static_url_path="/table/static",
               template_folder="templates")


def init_app(app: Flask) -> None:
    """The table's cipher, from KASHGAR_TABLE_KEY (gunicorn's master makes one before it forks its
    web processes when none is set: `service.gunicorn_conf`), else a key of this app alone."""
    keys = app.config["KASHGAR"].table_key or token.make_key()
    app.extensions["kashgar_table"] = token.cipher(keys)
    app.register_blueprint(bp)


def _box() -> MultiFernet:
    return current_app.extensions["kashgar_table"]  # type: ignore[no-any-return]


def _open(sealed: str) -> tuple[play.Table, Any]:
    table = play.Table.from_payload(token.unseal(_box(), sealed))
    return table, play.load(table)


def _answer(table: play.Table, game: Any, steps: list[dict[str, Any]]) -> Response:
    body = {"token": token.seal(_box(), table.payload())}
    body.update(play.answer(table, game, steps))
    return jsonify(body)


@bp.get("/")
@bp.get("/play")
@operation("/", "get", summary="The web table: play a game against the bots", tag="table",
           responses={200: ("An HTML page.", None)}, content_type="text/html")
def page() -> Response:
    """The page (HTML, CSS and JavaScript; no build step)."""
    html = render_template("table.html", pause_ms=settings().table_pause_ms)
    return Response(html, mimetype="text/html")


@bp.post("/table/new")
@operation("/table/new", "post", summary="A new game at the table", tag="table", request=TableNewRequest,
           errors=(429,), responses={200: ("The person's view and decisions, the bots' moves until then, the token.",
                            TableResponse)})
def new_table() -> Response:
    """Deal a game for the person (seat index 0) and 1 to 3 bots at the levels given (a level's
    name, or a number: a bot at that Elo of the ladder, its seat named `elo:N`); the bots play
    until the person is to decide."""
    req = read_body(TableNewRequest)
    table, game, steps = play.new(len(req.levels) + 1, list(req.levels), req.variant, req.seed)
    return _answer(table, game, steps)


@bp.post("/table/move")
@operation("/table/move", "post", summary="The person's decision at the table", tag="table",
           request=TableMoveRequest, errors=(409, 429),
           responses={200: ("The next view and decisions, the bots' moves until then, the next token.",
                            TableResponse)})
def move() -> Response:
    """Apply one of the person's legal decisions, then the bots' decisions up to the person's next."""
    req = read_body(TableMoveRequest)
    table, game = _open(req.token)
    steps = play.move(table, game, req.decision)
    return _answer(table, game, steps)


@bp.post("/table/hint")
@operation("/table/hint", "post", summary="A level's suggestion for the person", tag="table",
           request=TableHintRequest, errors=(409, 429),
           responses={200: ("The suggestion in words, its win chance and the next best alternatives.", TableHint)})
def hint() -> Response:
    """What `level` would play in the person's place (the search of POST /suggest on their view)."""
    req = read_body(TableHintRequest)
    table, game = _open(req.token)
    return jsonify(play.hint(table, game, req.level))


@bp.post("/table/record")
@operation("/table/record", "post", summary="The game record of a finished game", tag="table",
           request=TableTokenRequest, errors=(409,),
           responses={200: ("The record: players, levels, variant, seed, every decision, the result.", TableRecord)})
def game_record() -> Response:
    """The record of a finished game (it names the seed, and with it every deck: not before the end)."""
    req = read_body(TableTokenRequest)
    table, game = _open(req.token)
    if not game.is_terminal:
        raise APIError(409, "game_not_over", "a record names the seed, and with it the decks: it is given "
                       "once the game is over", "/token")
    return jsonify({"record": record.of(table)})


@bp.post("/table/load")
@operation("/table/load", "post", summary="A game record back at the table", tag="table",
           request=TableLoadRequest,
           responses={200: ("The table where the record ends, with its decisions in words.", TableResponse)})
def load() -> Response:
    """Replay a record: the table where it ends (over, or the person's to decide), or where its
    first `moves` moves leave it."""
    req = read_body(TableLoadRequest)
    table, game = record.replay(req.record, moves=req.moves)
    return _answer(table, game, play.play_bots(table, game))
