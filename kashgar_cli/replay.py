"""`kashgar replay FILE`: step through a game record in the terminal, each move in words."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TextIO

from kashgar_cli.errors import CliError


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "replay",
        help="step through a game record (kashgar play --record) in the terminal",
        description="Replay a game record move by move: Enter for the next move, 'q' to stop. The record "
        "must replay on this engine and card data; a move that does not is named.",
    )
    p.add_argument("file", help="the game record (JSON)")
    p.add_argument("--all", action="store_true", help="print every move at once")
    p.set_defaults(func=run)


def seat_label(record: dict[str, Any], seat: int, level: bool = True) -> str:
    """A seat as the record names it: its name (else its words, "seat 1" for the JSON's 0), and
    (with `level`) a bot's level."""
    from engine_ext.words import seat_words

    seats = {s.get("seat"): s for s in record.get("seats") or []}
    info = seats.get(seat, {})
    name = str(info.get("name") or seat_words(seat))
    return f"{name} ({info['level']})" if level and info.get("level") else name


def replay(path: str, step_all: bool, ask: Callable[[str], str], out: TextIO) -> int:
    from engine_ext import record as R
    from engine_ext.words import words

    try:
        rec = R.load(path)
        run = R.Replay(rec)
        said = words(run.game.engine.data)
        names = [seat_label(rec, p) for p in range(run.game.players)]
        short = [seat_label(rec, p, level=False) for p in range(run.game.players)]
        start = f"seed {rec['seed']}" if rec.get("seed") is not None else "from a given state"
        out.write(f"{rec['players']} players ({', '.join(names)}), {start}, {len(rec['moves'])} moves\n")
        for step in run:
            what = said.decision(step.move["decision"], step.before)
            code = said.code_shown(step.move["decision"])  # not a code that names a card by its slug
            out.write(f"{step.number:>4}. {names[step.move['seat']]}: {what}{f'  [{code}]' if code else ''}\n")
            for event in step.move.get("events") or []:
                out.write(f"        · {said.event(event, short)}\n")
            if not step_all and step.number < len(rec["moves"]):
                if ask("[Enter: next move, q: stop] ").strip().lower() in ("q", "quit"):
                    out.write("stopped\n")
                    return 0
    except R.RecordError as exc:
        raise CliError(f"{path}: {exc.message}", status=1) from None
    game = run.game
    vp = ", ".join(f"{names[p]} {v}" for p, v in enumerate(game.scores()))
    end = f"game over; winner: {names[game.winner()]}" if game.is_terminal else "the game goes on"
    out.write(f"VP: {vp}; {end}\n")
    return 0


def run(args: argparse.Namespace) -> int:
    try:
        return replay(args.file, args.all, input, sys.stdout)
    except (EOFError, KeyboardInterrupt):
        print("\nstopped")
        return 0
