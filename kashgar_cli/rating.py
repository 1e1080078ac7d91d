"""`kashgar rating RECORD...`: a person's Elo on the ladder from the records of their games against
the bots (`bots/rating.py`, as `POST /rating` rates them)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from kashgar_cli.errors import CliError


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "rating",
        help="a person's Elo on the ladder from the records of their games against the bots",
        description="Rate the person of game records (kashgar play --record, the web table's download): each "
        "record's seat of no level against the bots at the others, on the ladder's Elo (each level's measured "
        "elo) with a 95%% interval, as POST /rating rates them. Each record must replay on this engine.",
    )
    p.add_argument("records", nargs="+", metavar="RECORD", help="game records (JSON) of finished games")
    p.add_argument("--seat", type=int, default=None, metavar="N",
                   help="the person's seat index in every record (0: seat 1), whatever level it records "
                   "(default: the one seat of no level)")
    p.add_argument("--levels", default=None, metavar="FILE",
                   help="the level file whose ladder rates (default: $KASHGAR_LEVELS, else the shipped one)")
    p.add_argument("--json", action="store_true", help="print the rating as POST /rating answers it")
    p.set_defaults(func=run)


def rate_records(paths: list[str], seat: int | None = None, levels: str | None = None) -> dict[str, Any]:
    """The rating of the records at `paths`, as POST /rating's answer; CliError naming the file and
    the field (or the move) it cannot use."""
    from bots import rating
    from engine_ext import record as records

    try:
        elos = rating.served_ladder(levels)
    except (OSError, ValueError) as exc:
        raise CliError(f"the level file: {exc}") from None
    if not elos:
        raise CliError("no level of the level file has a measured Elo (`elo`)")
    games = []
    for path in paths:
        try:
            rec = records.load(path)
            records.replay(rec)
        except records.RecordError as exc:
            where = f" (at {exc.pointer})" if exc.pointer else ""
            raise CliError(f"{path}: {exc.message}{where}", status=1) from None
        if seat is not None:
            if not 0 <= seat < int(rec["players"]):
                raise CliError(f"{path}: --seat {seat}: the game has seat indexes 0 to {int(rec['players']) - 1}")
            rec = dict(rec, seats=[dict(s, level=None) if s.get("seat") == seat else dict(s)
                                   for s in rec.get("seats") or []])
        try:
            games.append(rating.game_of_record(rec, elos))
        except rating.RatingError as exc:
            raise CliError(f"{path}: {exc.message} (at {exc.pointer})", status=1) from None
    r = rating.rate(games, rating.ladder_middle(elos))
    return {**r.to_dict(), "nearest_level": rating.nearest_level(r.elo, elos),
            "nearest_elo": round(elos[rating.nearest_level(r.elo, elos)])}


def say(answer: dict[str, Any], out: TextIO) -> None:
    low, high = answer["interval"]
    games = answer["games"]
    prior = answer["prior"]
    out.write(f"rating {answer['elo']} [{low}, {high}] after {games} game{'s' if games != 1 else ''} "
              f"(95% interval; prior {prior['mean']} +- {prior['sd']}, the ladder's middle)\n")
    out.write(f"nearest level: {answer['nearest_level']} ({answer['nearest_elo']})\n")


def run(args: argparse.Namespace) -> int:
    answer = rate_records(args.records, args.seat, args.levels)
    if args.json:
        print(json.dumps({k: v for k, v in answer.items() if k != "nearest_elo"}))
    else:
        say(answer, sys.stdout)
    return 0
