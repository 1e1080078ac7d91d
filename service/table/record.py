"""Game records of the table: what a finished game was (players, levels, variant, seed, every
decision with its seat, the result), and a record played back into a table."""

from __future__ import annotations

from typing import Any

import engine_ext

from .. import engine
from ..api.rules import check_variant
from ..errors import APIError
from .play import Table, fits_sync

SCHEMA = "kashgar/record@1"


def of(table: Table, game: Any) -> dict[str, Any]:
    players = [{"seat": i, "kind": "person"} if lv is None else {"seat": i, "kind": "bot", "level": lv}
               for i, lv in enumerate(table.levels)]
    out: dict[str, Any] = {"schema": SCHEMA, "players": players, "variant": table.variant, "seed": table.seed,
                           "decisions": [{"seat": s, "decision": d} for s, d in table.history]}
    if game.is_terminal:
        out["result"] = {"winner": int(game.winner()), "scores": [int(game.vp(p)) for p in range(table.players)]}
    return out


def replay(record: dict[str, Any], ptr: str = "/record") -> tuple[Table, Any]:
    """The table a record ends in; 422 naming the field or the decision that does not replay."""
    if record.get("schema") != SCHEMA:
        raise APIError(422, "invalid_record", f"not a game record ({SCHEMA})", ptr + "/schema")
    players = record.get("players")
    if not isinstance(players, list) or not 2 <= len(players) <= 4:
        raise APIError(422, "invalid_record", "players must list 2 to 4 seats", ptr + "/players")
    levels: list[str | None] = []
    names = engine.level_names()
    for i, p in enumerate(players):
        kind = p.get("kind") if isinstance(p, dict) else None
        if kind == "person":
            levels.append(None)
        elif kind == "bot" and p.get("level") in names:
            fits_sync(str(p["level"]), f"{ptr}/players/{i}/level")
            levels.append(str(p["level"]))
        else:
            raise APIError(422, "invalid_record", f"a seat is a person or a bot with a level ({', '.join(names)})",
                           f"{ptr}/players/{i}")
    if levels.count(None) != 1:
        raise APIError(422, "invalid_record", "the table plays records with one person's seat", ptr + "/players")
    seed = record.get("seed")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < engine_ext.SEEDS:
        raise APIError(422, "invalid_record", f"seed must be a whole number from 0 to {engine_ext.SEEDS - 1}",
                       ptr + "/seed")
    check_variant(record.get("variant"), ptr)
    try:
        game = engine.new_game(len(levels), seed, record.get("variant"))
    except APIError as err:
        raise APIError(422, "invalid_record", err.message, ptr + "/variant") from None
    decisions = record.get("decisions")
    if not isinstance(decisions, list):
        raise APIError(422, "invalid_record", "decisions must be a list", ptr + "/decisions")
    table = Table(state={}, seat=levels.index(None), levels=levels, seed=seed, variant=game.to_json().get("variant"))
    for i, item in enumerate(decisions):
        at = f"{ptr}/decisions/{i}"
        if not isinstance(item, dict) or item.get("seat") != game.current_player:
            raise APIError(422, "record_does_not_replay", f"decision {i + 1}: seat {game.current_player} is to "
                           "decide here", at + "/seat")
        try:
            d = engine.parse_decision(game, item.get("decision"), at + "/decision")
        except APIError as err:
            raise APIError(422, "record_does_not_replay", f"decision {i + 1}: {err.message}", err.pointer) from None
        game.apply(d)
        table.history.append([int(item["seat"]), str(d)])
    table.state = dict(game.to_json())
    return table, game
