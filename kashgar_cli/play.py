"""`kashgar play`: a game of Kashgar in the terminal against bots, on this machine (engine and
bots in-process) or through a running service (`--url`)."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from kashgar_cli.errors import OUT_HELP, CliError, error_line, output_file

if TYPE_CHECKING:
    from engine_ext.record import Recorder
    from engine_ext.words import Words

RESOURCES = ("ginger", "cloves", "pepper", "anise", "cinnamon", "gold", "mules")
MAX_EVENTS = 12  # events shown after a decision


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "play",
        help="play a game in the terminal against bots",
        description="Play Kashgar against bots. Enter the number or the text of a decision; "
        "'?' asks your bot level for a hint, 'q' quits.",
    )
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--seat", type=int, default=0, help="your seat's index, as the API numbers seats (0: seat 1)")
    p.add_argument("--level", default=None, help="level of the bots (see GET /levels; default casual)")
    p.add_argument("--elo", type=float, default=None,
                   help="instead of a level: the bots play at this Elo of the ladder (GET /levels gives the range), "
                   "each decision searched by one of the two levels around it")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the game and of the bots (default: a random one, printed when the game ends)")
    p.add_argument("--url", default=None, help="play through a running service instead of in-process")
    p.add_argument("--api-key", default=None, metavar="KEY",
                   help="the API key of the service at --url (default: the KASHGAR_API_KEY environment variable)")
    p.add_argument("--auto", action="store_true", help="a random player takes your seat (demo)")
    p.add_argument("--max-decisions", type=int, default=0, help="stop after this many decisions (0: play on)")
    p.add_argument("--record", default=None, metavar="FILE", type=output_file,
                   help="write the game record (JSON) to FILE when the game ends or you quit; "
                   "replay it with `kashgar replay FILE`" + OUT_HELP)
    p.set_defaults(func=run)


class Table:
    """What the game needs: a new game, legal decisions, apply, a bot's suggestion, the card data."""

    def new(self, players: int, seed: int) -> dict[str, Any]:
        raise NotImplementedError

    def legal(self, state: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def apply(self, state: dict[str, Any], decision: str, seat: int) -> dict[str, Any]:
        """The next full state, and the decision's events as `seat` sees them."""
        raise NotImplementedError

    def suggest(self, state: dict[str, Any], player: int, level: str, seed: int) -> dict[str, Any]:
        raise NotImplementedError

    def cards(self) -> dict[str, Any]:
        """The card and contract data, as `GET /cards` serves it."""
        raise NotImplementedError

    def levels(self) -> list[str]:
        """The level names, as `GET /levels` serves them."""
        raise NotImplementedError

    def elo_range(self) -> tuple[float, float] | None:
        """The range of Elo a bot may play at, as `GET /levels` gives it (None: no ladder)."""
        raise NotImplementedError


class LocalTable(Table):
    def new(self, players: int, seed: int) -> dict[str, Any]:
        import engine_ext

        return dict(engine_ext.new_game(players=players, seed=seed).to_json())

    def _summary(self, game: Any) -> dict[str, Any]:
        from service import states

        return states.game_summary(game)

    def legal(self, state: dict[str, Any]) -> dict[str, Any]:
        import engine_ext
        from service import describe

        g = engine_ext.from_json(state)
        return dict(self._summary(g), legal=describe.legal(g))

    def apply(self, state: dict[str, Any], decision: str, seat: int) -> dict[str, Any]:
        import engine_ext

        g = engine_ext.from_json(state)
        events = g.apply(decision, observer=seat)
        return {"state": dict(g.to_json()), "events": list(events or [])}

    def suggest(self, state: dict[str, Any], player: int, level: str, seed: int) -> dict[str, Any]:
        import engine_ext
        from bots.strength import elo_of_spec
        from bots.suggest import Budget, analyse_state, search
        from service import strength

        view = engine_ext.from_json(state).to_json(observer=player)  # the bot sees what its player sees
        elo = elo_of_spec(level)
        if elo is None:
            return dict(analyse_state(view, level=level, seed=seed))
        position = strength.elo_position(elo, None, False, view, seed)[1]  # the level drawn, as /suggest draws it
        return {**search(position, Budget(seed=seed)).to_json(), "elo": elo}

    def cards(self) -> dict[str, Any]:
        from service import cards

        return dict(cards.cards())

    def levels(self) -> list[str]:
        from bots.levels import load_levels

        return [lv.name for lv in load_levels()]

    def elo_range(self) -> tuple[float, float] | None:
        from bots.strength import elo_range

        return elo_range()


class RemoteTable(Table):
    """The game through a running service, with the client library (kashgar_client)."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        from kashgar_client import KashgarClient

        self.api = KashgarClient(url, api_key=api_key)

    def new(self, players: int, seed: int) -> dict[str, Any]:
        return dict(self.api.new_game(players=players, seed=seed).raw["state"])

    def legal(self, state: dict[str, Any]) -> dict[str, Any]:
        return dict(self.api.legal(state).raw)

    def apply(self, state: dict[str, Any], decision: str, seat: int) -> dict[str, Any]:
        from engine_ext.game import seen_by

        # the full state, to play on (the table deals for every seat); the events as `seat` sees them
        out = self.api.apply(state, decision)
        return {"state": out.state, "events": seen_by(out.events, seat, int(state["turn_player"]))}

    def suggest(self, state: dict[str, Any], player: int, level: str, seed: int) -> dict[str, Any]:
        from bots.strength import elo_of_spec

        # The search only uses what the player to move knows, full state or view alike.
        elo = elo_of_spec(level)
        if elo is not None:
            return dict(self.api.suggest(state, elo=elo, seed=seed).raw)
        return dict(self.api.suggest(state, level=level, seed=seed).raw)

    def cards(self) -> dict[str, Any]:
        return self.api.cards()

    def levels(self) -> list[str]:
        return [lv.name for lv in self.api.levels()]

    def elo_range(self) -> tuple[float, float] | None:
        return self.api.elo_range()


def unseen_choice(state: dict[str, Any], seat: int) -> bool:
    """Whether the seat to move chooses among cards it drew that `seat` has not seen (its Special
    draws, the contracts it drew): what it keeps is not for `seat` to read."""
    import engine_ext

    try:
        return bool(engine_ext.from_json(state).hidden_from(seat))
    except (engine_ext.StateError, ValueError):
        return False


def seat_names(players: int, me: int) -> list[str]:
    """How `kashgar play` names the seats: "you", and the bots by their seats' words ("seat 2" is
    the API's seat 1, `engine_ext.words.seat_words`)."""
    from engine_ext.words import YOU, seat_words

    return [YOU if i == me else seat_words(i) for i in range(players)]


def scores(vp: list[int], names: list[str]) -> str:
    """Every seat's VP in one line."""
    return "VP: " + ", ".join(f"{name} {points}" for name, points in zip(names, vp, strict=False))


def render(state: dict[str, Any], me: int, out: TextIO, words: Words, vp: list[int] | None = None) -> None:
    from engine_ext.words import caravan_words, seat_words, turn_words

    names = seat_names(len(state.get("seats", [])), me)
    tp = state.get("turn_player")
    who = names[tp] if isinstance(tp, int) and 0 <= tp < len(names) else seat_words(tp)
    out.write(f"\n=== {turn_words(state.get('turn'))}  ({who} to play) ===\n")
    if vp:
        out.write(f"{scores(vp, names)}\n")
    out.write("contracts on display:\n")
    for number in state.get("display") or []:
        out.write(f"    {words.contract(number)}\n")
    for i, seat in enumerate(state.get("seats", [])):
        res = seat.get("resources", {})
        line = " ".join(f"{r[:3]}={res.get(r, 0)}" for r in RESOURCES)
        out.write(f"  [{names[i]:>6}] {line}  contracts={seat.get('contracts')}\n")
        for c, caravan in enumerate(seat.get("caravans", [])):
            cards = " < ".join(words.name(slug) for slug in caravan)
            out.write(f"          {caravan_words(c, f'c{c}')}: {cards}\n")


def choose(legal: list[dict[str, Any]], ask: Callable[[str], str], out: TextIO, hint: Callable[[], str],
           describe: Callable[[dict[str, Any]], str] = lambda d: "",
           code: Callable[[dict[str, Any]], str] = lambda d: str(d.get("text", ""))) -> str | None:
    """The legal decisions listed (a number, the code where it names no card, the words), then the
    person's answer: a decision's text, or None to quit."""
    texts = [d["text"] for d in legal]
    for i, d in enumerate(legal):
        what = describe(d.get("decision") or {})
        out.write(f"  {i:>2}. {code(d):<14} {what}".rstrip() + "\n")
    while True:
        raw = ask("your decision> ").strip()
        if raw in ("q", "quit", "exit"):
            return None
        if raw in ("?", "h", "hint"):
            out.write(f"  hint: {hint()}\n")
            continue
        if raw.isascii() and raw.isdigit() and int(raw) < len(texts):
            return texts[int(raw)]
        if raw in texts:
            return raw
        out.write("  not a legal decision; a number from the list, its text, '?' or 'q'\n")


def play(args: argparse.Namespace, table: Table, ask: Callable[[str], str], out: TextIO,
         err: TextIO | None = None) -> int:
    """Play the game on `out`; a bad option is one line on `err` (default `out`) and status 2."""
    import engine_ext
    from engine_ext.words import HIDDEN_CHOICE, Words, turn_words

    def refuse(problem: str) -> int:
        (err or out).write(error_line("play", problem) + "\n")
        return 2

    if not 0 <= args.seat < args.players:
        return refuse(f"argument --seat: want 0..{args.players - 1}, not {args.seat}")
    seed = engine_ext.random_seed() if args.seed is None else args.seed
    if not 0 <= seed < engine_ext.SEEDS:
        return refuse(f"argument --seed: want 0..{engine_ext.SEEDS - 1}, not {seed}")
    if args.max_decisions < 0:
        return refuse("argument --max-decisions: want 0 (play on) or more")
    elo = getattr(args, "elo", None)
    if elo is not None:
        from bots.strength import elo_spec

        if args.level is not None:
            return refuse("give --level or --elo, not both")
        span = table.elo_range()
        if span is None or not span[0] <= elo <= span[1]:
            return refuse(f"argument --elo: want {span[0]:g}..{span[1]:g}, not {elo:g}" if span else
                          "argument --elo: no two levels of this server have a measured Elo")
        args.level = elo_spec(elo)  # the bots' level, as the record names it: elo:N
    args.level = args.level or "casual"
    names = table.levels()
    if elo is None and args.level not in names:
        return refuse(f"unknown level {args.level!r}; levels: {', '.join(names)}")
    rng = random.Random(seed)
    words = Words(table.cards())
    state = table.new(args.players, seed)
    seats = seat_names(args.players, args.seat)
    again = f"(the deal's seed was {seed}: play it again with --seed {seed})"
    recorder = new_recorder(args, seed, seats) if getattr(args, "record", None) else None
    decisions = 0
    shown_turn = -1
    try:
        while True:
            info = table.legal(state)
            vp = list(info.get("vp") or [])
            if info["is_terminal"]:
                render(state, args.seat, out, words, vp)
                winner = seats[info["winner"]] if 0 <= info["winner"] < len(seats) else "nobody"
                out.write(f"game over: {scores(vp, seats)}; winner: {winner}"
                          f"{' (you!)' if info['winner'] == args.seat and not args.auto else ''}\n{again}\n")
                return 0
            if args.max_decisions and decisions >= args.max_decisions:
                out.write(f"stopped after {decisions} decisions {again}\n")
                return 0
            if state.get("turn") != shown_turn:  # every seat's VP once a turn
                shown_turn = state.get("turn", -1)
                out.write(f"-- {turn_words(shown_turn)}: {seats[state.get('turn_player', 0)]} to play; "
                          f"{scores(vp, seats)}\n")
            player = info["current_player"]
            if player == args.seat and not args.auto:
                render(state, args.seat, out, words, vp)

                def hint(st: dict[str, Any] = state, p: int = player, k: int = decisions) -> str:
                    a = table.suggest(st, p, args.level, (seed + k) % engine_ext.SEEDS)
                    decision = a.get("decision") or a["decision_text"]
                    what = words.decision(decision, st)
                    shown = words.code_shown(decision)
                    chance = a.get("win_prob")
                    odds = f", win chance {chance:.0%}" if isinstance(chance, (int, float)) else ""
                    return f"{what}{' (' + shown + ')' if shown else ''}{odds}"

                def describe(d: dict[str, Any], st: dict[str, Any] = state) -> str:
                    return words.decision(d, st)

                def code(d: dict[str, Any]) -> str:
                    return words.code_shown(d.get("decision") or d["text"])

                text = choose(info["legal"], ask, out, hint, describe, code)
                if text is None:
                    out.write(f"bye {again}\n")
                    return 0
            elif player == args.seat:
                text = rng.choice(info["legal"])["text"]
                out.write(f"you (auto): {words.decision(text, state)}\n")
            else:
                answer = table.suggest(state, player, args.level, (seed * 7919 + decisions) % engine_ext.SEEDS)
                text = answer["decision_text"]
                did = HIDDEN_CHOICE if unseen_choice(state, args.seat) else (
                    words.decision(text, state))
                out.write(f"{seats[player]} ({args.level}): {did}\n")
            result = table.apply(state, text, args.seat)
            if recorder is not None:
                recorder.add(text)
            state = result["state"]
            events = result.get("events", [])
            for event in events[:MAX_EVENTS]:
                out.write(f"    · {words.event(event, seats)}\n")
            if len(events) > MAX_EVENTS:
                out.write(f"    · ... and {len(events) - MAX_EVENTS} more\n")
            decisions += 1
    except (EOFError, KeyboardInterrupt):
        out.write(f"\nbye {again}\n")
        return 0
    finally:
        if recorder is not None:
            from engine_ext.record import save

            save(recorder.record, args.record)
            out.write(f"game record ({len(recorder.record['moves'])} moves) written to {args.record}\n")


def new_recorder(args: argparse.Namespace, seed: int, seats: list[str]) -> Recorder:
    """The record of the game `play` deals (its decisions are added as they are played): on this
    machine's engine, whose events it records in full."""
    import engine_ext
    from engine_ext.record import Recorder

    levels = [None if p == args.seat and not args.auto else ("random" if p == args.seat else args.level)
              for p in range(args.players)]
    return Recorder(engine_ext.new_game(players=args.players, seed=seed), seed=seed,
                    seats=[{"seat": p, "name": seats[p], "level": levels[p]} for p in range(args.players)])


def run(args: argparse.Namespace) -> int:
    from kashgar_client import JobFailed, JobTimeout, KashgarAPIError

    table: Table = RemoteTable(args.url, args.api_key) if args.url else LocalTable()
    try:
        return play(args, table, input, sys.stdout, sys.stderr)
    except (EOFError, KeyboardInterrupt):
        print("\nbye")
        return 0
    except KashgarAPIError as exc:  # the service answered an error, or could not be reached
        raise CliError(str(exc)) from None
    except JobFailed as exc:  # a bot's search ran as a job on the server, which failed or was cancelled
        job = exc.job
        why = f": {job.error}" if job.error else ""
        raise CliError(f"the bot's search (job {job.job_id}) {job.status}{why}", status=1) from None
    except JobTimeout as exc:  # the server's job went on past the wait
        raise CliError(f"the bot's search: {exc}", status=1) from None
