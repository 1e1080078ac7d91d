"""`kashgar suggest`: the decision to play in a state read from a JSON file (or stdin), as
`POST /suggest` answers it, without a server."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kashgar_cli.errors import CliError, process_count


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "suggest",
        help="suggest the decision to play in a state file",
        description="Search a state (a JSON document, kashgar/state@1: a full state or one player's view, "
        "as GET/POST /games, /apply and `kashgar fuzz --out` write them) and print the decision to play "
        "with its alternatives, as POST /suggest answers it.",
    )
    p.add_argument("state", help="state JSON file ('-' = stdin)")
    p.add_argument("--level", default=None, help="a level (see `GET /levels`; default: the default level)")
    p.add_argument("--elo", type=float, default=None,
                   help="a strength on the ladder instead of a level (`GET /levels` gives the range): the "
                   "decision is searched by one of the two levels around it, drawn from the seed")
    p.add_argument("--iterations", type=int, default=None, help="budget in iterations (overrides the level's)")
    p.add_argument("--time-ms", type=int, default=None, help="budget in milliseconds (overrides the level's)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-j", "--workers", type=process_count, default=1, help="root-parallel processes")
    p.add_argument("--json", action="store_true", help="print the whole answer as JSON")
    p.set_defaults(func=run)


def read_state(path: str) -> Any:
    text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()  # noqa: SIM115
    doc = json.loads(text)
    # a document as the service answers it ({"state": ...}) is taken too
    if isinstance(doc, dict) and isinstance(doc.get("state"), dict) and "schema" not in doc:
        doc = doc["state"]
    return doc


def check_budget(args: argparse.Namespace) -> None:
    """The budgets POST /suggest allows (the service's caps; a huge one ran out of memory)."""
    from service.config import Settings

    caps = Settings()
    for option, value, cap in (("--iterations", args.iterations, caps.max_iterations),
                               ("--time-ms", args.time_ms, caps.max_ms)):
        if value is not None and not 1 <= value <= cap:
            raise CliError(f"argument {option}: want 1..{cap}, not {value}")


def elo_position(args: argparse.Namespace, doc: Any) -> Any:
    """The position of `doc` for the level drawn at `--elo`, as POST /suggest draws it; the
    service's refusals (a level or a budget beside it, out of the ladder's range) as CLI errors."""
    from service import strength
    from service.errors import APIError

    try:
        return strength.elo_position(args.elo, args.level, args.iterations is not None or args.time_ms is not None,
                                     doc, args.seed)[1]
    except APIError as exc:
        option = {"/elo": "--elo"}.get(exc.pointer, exc.pointer)
        raise CliError(f"argument {option}: {exc.message}" if option == "--elo"
                       else f"not a valid state at {exc.pointer or '/'}: {exc.message}") from None


def run(args: argparse.Namespace) -> int:
    import engine_ext
    from bots.suggest import Budget, Position, search
    from service.describe import describe_answer

    check_budget(args)
    try:
        doc = read_state(args.state)
    except OSError as exc:
        raise CliError(f"cannot read {args.state}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, too deep, a number too long
        raise CliError(f"{args.state} is not JSON: {str(exc)[:200]}") from None
    if not 0 <= args.seed < engine_ext.SEEDS:
        raise CliError(f"argument --seed: want 0..{engine_ext.SEEDS - 1}, not {args.seed}")
    try:
        if args.elo is None:
            position = Position.of(engine_ext.from_json(doc), args.level)
        else:
            position = elo_position(args, doc)
        found = search(position, Budget(args.iterations, args.time_ms, args.seed), workers=args.workers)
    except engine_ext.StateError as exc:
        raise CliError(f"not a valid state at {exc.pointer or '/'}: {exc.message}") from None
    except KeyError as exc:
        raise CliError(str(exc.args[0] if exc.args else exc)) from None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    answer = describe_answer(found, position.game)
    if args.elo is not None:
        answer["elo"] = args.elo
    if args.json:
        print(json.dumps(answer, indent=2))
        return 0
    print(f"{answer['decision_text']}: {answer['description']}  (level {answer['level']}, "
          f"{answer['iterations']} iterations, "
          f"{answer['elapsed_ms']:.0f} ms, seed {answer['seed']})")
    for alt in answer["alternatives"]:
        win = alt.get("win_prob")
        vp = alt.get("expected_vp")
        print(f"  {alt['decision_text']:<28} visits {alt['visits']:>7}"
              f"  win {'-' if win is None else f'{win:.3f}'}  VP {'-' if vp is None else f'{vp:.2f}'}"
              f"  {alt['description']}")
    print("line: " + " | ".join(answer.get("line") or []))
    return 0
