"""Game records at the table, in the package's format (`engine_ext.record`): the record of a
finished game, and a record played back into a table."""

from __future__ import annotations

from typing import Any

from engine_ext import record as records

from ..errors import APIError, join_pointer
from .play import Table, check_bot


def of(table: Table) -> dict[str, Any]:
    """The record of a table's game: its deal, levels and every decision, with their words and events."""
    out = records.record_from_moves([h[1] for h in table.history], players=table.players, seed=table.seed,
                                    variant=table.variant, levels=table.levels,
                                    shuffles=[h[2] if len(h) > 2 else None for h in table.history])
    out["cards"] = {"sha256": out["cards"]["sha256"]}  # not the server's path to its card file
    return out


def _refused(exc: records.RecordError, ptr: str) -> APIError:
    """422 pointing at the record's field at fault, with the record's own code, as a review's
    (`invalid_record`: not a record by the schema, or a start that cannot be set up;
    `record_does_not_replay`: a move's seat or decision, its events, the result)."""
    return APIError(422, exc.code, exc.message, join_pointer(ptr, exc.pointer))


def replay(record: dict[str, Any], ptr: str = "/record", moves: int | None = None) -> tuple[Table, Any]:
    """The table a record ends in, or (`moves`) where its first `moves` moves leave it; 422 naming
    the move that does not replay, or the field."""
    try:
        records.check(record)
    except records.RecordError as exc:
        raise _refused(exc, ptr) from None
    if moves is not None:  # a position on the way: the record's end, and so its result, not reached
        record = {k: v for k, v in record.items() if k != "result"}
        record["moves"] = list(record["moves"])[:moves]
    try:
        run = records.Replay(record)
    except records.RecordError as exc:
        raise _refused(exc, ptr) from None
    seed = run.record.get("seed")
    if seed is None:
        raise APIError(422, "invalid_record", "the table plays records dealt from a seed (this one gives its "
                       "initial state)", ptr + "/seed")
    seats = run.record.get("seats") or []
    levels: list[str | None] = [None] * run.game.players
    for i, seat in enumerate(seats):
        level = seat.get("level")
        if level is not None:  # a level of this server, or elo:N within its ladder's range
            check_bot(str(level), f"{ptr}/seats/{i}/level")
        if 0 <= int(seat["seat"]) < len(levels):
            levels[int(seat["seat"])] = level
    if levels.count(None) != 1:
        raise APIError(422, "invalid_record", "the table plays records with one person's seat (one seat with no "
                       "level) and bots at the others", ptr + "/seats")
    try:
        for _ in run:
            pass
    except records.RecordError as exc:
        raise _refused(exc, ptr) from None
    game = run.game
    table = Table(state=dict(game.to_json()), seat=levels.index(None), levels=levels, seed=int(seed),
                  variant=run.record.get("variant"),
                  history=[[int(m["seat"]), str(m["decision"])]
                           + ([int(m["shuffle"])] if m.get("shuffle") is not None else [])
                           for m in run.record["moves"]])
    return table, game
