"""Game records: a whole game as one JSON document, to save, load and replay.

A record (`"schema": "kashgar/record@1"`, the JSON Schema is `RECORD_SCHEMA`) holds the players, the
variant, the seed of the deal (or the full initial state), each seat's level (null: a person), the
card file it was played with (its file name and sha256: `card_file`), every decision with its
seat, its words and what it did (the events, in full), and the result (VP, winner, whether the
game is over). It holds the seed, so it shows every deck's order: hand it out once the game is over. A move may carry a
`shuffle`: the seed of a fresh shuffle of what no seat knew (`Game.shuffle_unknown`) made just
before it, as the web table makes one before each of the person's decisions; a replay makes it too.

* `record_from_moves(moves, players=2, seed=0, ...) -> dict`: the record of decisions played from
  a deal (or `initial_state`); `Recorder` builds one decision at a time.
* `replay(record) -> Game`: the final game; `RecordError` names the move (number, seat and
  decision) that does not replay: an illegal decision, another seat to move, events or a result
  other than recorded (a changed card file says so). `Replay(record)` yields each move (`Step`)
  as it is replayed.
* `save(record, path)`, `load(path) -> dict` (checked against the schema; `RecordError` otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import jsonschema

from engine_ext.carddata import CardData
from engine_ext.decisions import Decision, DecisionError
from engine_ext.document.schema import StateError
from engine_ext.game import Engine, Game, IllegalDecision
from engine_ext.words import seat_words, words

SCHEMA_ID = "kashgar/record@1"
PACKAGED_NAME = "cards.toml"  # the file name of the package's card data (engine_ext/data/cards.toml)

RECORD_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Kashgar game record",
    "type": "object",
    "required": ["schema", "players", "seed", "moves"],
    # the seed of the deal or the state it started from: a rule across fields, in `allOf` (which
    # client generators merge into one type; an `anyOf` beside `properties` reads as a union of
    # partial ones)
    "allOf": [{"anyOf": [{"properties": {"seed": {"type": "integer"}}},
                         {"required": ["initial_state"], "properties": {"initial_state": {"type": "object"}}}]}],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "players": {"type": "integer", "minimum": 2, "maximum": 4},
        "variant": {"description": 'as POST /games takes it: null, "base", "off", "all", [slugs] or '
                    '{"additional": [slugs]}',
                    "anyOf": [{"type": "null"}, {"enum": ["all", "base", "off"]},
                              {"type": "array", "items": {"type": "string"}},
                              {"type": "object", "properties": {"additional": {"type": "array",
                                                                               "items": {"type": "string"}}},
                               "additionalProperties": False}]},
        "seed": {"type": ["integer", "null"], "minimum": 0, "maximum": 2**63 - 1,
                 "description": "the seed of the deal; null when initial_state gives the state"},
        "initial_state": {"type": ["object", "null"], "description": "the full state the game started from"},
        "seats": {"type": "array", "items": {
            "type": "object", "required": ["seat"],
            "properties": {"seat": {"type": "integer", "minimum": 0, "maximum": 3},
                           "name": {"type": "string"},
                           "level": {"type": ["string", "null"],
                                     "description": "a bot's level; elo:N (e.g. elo:640): a bot at Elo N, "
                                     "the two levels around it mixed; null: a person"}}}},
        "cards": {"type": "object", "description": "the card file played with: its file name and the sha256 of "
                  "its text (never its path)",
                  "properties": {"sha256": {"type": "string"}, "name": {"type": "string"}}},
        "moves": {"type": "array", "items": {
            "type": "object", "required": ["seat", "decision"],
            "properties": {"seat": {"type": "integer", "minimum": 0, "maximum": 3},
                           "decision": {"type": "string"},
                           "shuffle": {"type": "integer", "minimum": 0, "maximum": 2**53 - 1,
                                       "description": "the seed of a shuffle of what no seat knew, made "
                                                      "before this move (Game.shuffle_unknown)"},
                           "description": {"type": "string"},
                           "events": {"type": "array", "items": {"type": "object"}}}}},
        "result": {"type": "object", "properties": {
            "vp": {"type": "array", "items": {"type": "integer"}},
            "winner": {"type": "integer"},
            "is_terminal": {"type": "boolean"}}},
    },
}


class RecordError(ValueError):
    """A record that cannot be read or does not replay; `move` is the 1-based number of the move
    that does not (0: the record as a whole), `pointer` the JSON pointer of the field at fault
    within the record, `replays` whether it is a record by the schema that does not replay
    (`code`: `record_does_not_replay`) rather than no record at all (`invalid_record`)."""

    def __init__(self, message: str, move: int = 0, pointer: str | None = None, replays: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.move = move
        self.pointer = pointer if pointer is not None else (f"/moves/{move - 1}" if move else "")
        self.replays = replays

    @property
    def code(self) -> str:
        return "record_does_not_replay" if self.replays else "invalid_record"


@dataclass(frozen=True)
class Step:
    """One move as it is replayed: its number (from 1), the move, the game before it (a copy of its
    own, `start`) and after it (`game`). What a reader of the step needs of the game before the move
    is made from `start` when it is asked for, never dumped and loaded back: the full state document
    (`before`), the view of a seat (`view`), the count of legal decisions (`legal_count`)."""

    number: int
    move: Mapping[str, Any]
    start: Game  # the game before the move (a copy: it stays as it was)
    game: Game  # after it (the same object on every step: it moves on)

    @cached_property
    def before(self) -> dict[str, Any]:
        """The full state document before the move."""
        return self.start.to_json(observer=None)

    def view(self, seat: int | None = None) -> dict[str, Any]:
        """The view before the move of `seat` (None: the seat that made the move)."""
        return self.start.to_json(observer=int(self.move["seat"]) if seat is None else seat)

    @property
    def legal_count(self) -> int:
        """How many legal decisions the seat to move had before the move."""
        return len(self.start.state.legal_codes())


def _engine(data: CardData | None) -> Engine:
    from engine_ext import get_engine

    return Engine(get_engine().core, data) if data is not None else get_engine()


def card_file(data: CardData) -> dict[str, str]:
    """The card file `data` was read from, as a record, `/healthz` and `/cards` name it: its file
    name (the package's: `cards.toml`) and the sha256 of its text, never its path (a path tells
    the reader of a record, or anyone asking a server, where the machine keeps its files)."""
    return {"name": Path(data.path).name if data.path else PACKAGED_NAME, "sha256": data.sha256}


def start(record: Mapping[str, Any], data: CardData | None = None) -> Game:
    """The game a record starts from (its deal, or its initial state)."""
    engine = _engine(data)
    try:
        if record.get("initial_state") is not None:
            return engine.from_json(record["initial_state"])
        return engine.new_game(int(record["players"]), int(record["seed"]), record.get("variant"))
    except StateError as exc:  # its pointer: into the initial state, or the deal's field (/seed, /variant)
        where = "/initial_state" if record.get("initial_state") is not None else ""
        raise RecordError(f"the record's start cannot be set up: {where}{exc}", pointer=where + exc.pointer) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise RecordError(f"the record's start cannot be set up: {exc}") from None


def result(game: Game) -> dict[str, Any]:
    return {"vp": game.scores(), "winner": game.winner(), "is_terminal": game.is_terminal}


class Recorder:
    """A record built one decision at a time (`add`), from the game it starts with."""

    def __init__(self, game: Game, *, seed: int | None, variant: Any = None,
                 seats: Sequence[Mapping[str, Any]] | None = None) -> None:
        data = game.engine.data
        self.game = game
        self.record: dict[str, Any] = {
            "schema": SCHEMA_ID,
            "players": game.players,
            "variant": variant,
            "seed": seed,
            "initial_state": None if seed is not None else game.to_json(observer=None),
            "seats": [dict(s) for s in seats] if seats else [{"seat": p, "level": None} for p in range(game.players)],
            "cards": card_file(data),
            "moves": [],
            "result": result(game),
        }

    def add(self, decision: Decision | str, events: Sequence[Mapping[str, Any]] | None = None,
            shuffle: int | None = None) -> list[dict[str, Any]]:
        """Record `decision` of the seat to move and apply it to the recorder's game (its events
        in full), after shuffling what no seat knows by `shuffle` when given; or, with `events`,
        record a decision applied elsewhere to the same game (the full events it gave; `shuffle`:
        the one made there before it) and apply it here too. Returns the events."""
        g = self.game
        d = decision if isinstance(decision, Decision) else Decision.parse(decision)
        seat = g.current_player
        if shuffle is not None:
            g.shuffle_unknown(shuffle)
        said = words(g.engine.data).decision(d, g.to_json(observer=None))
        happened = g.apply(d)
        move: dict[str, Any] = {"seat": seat, "decision": str(d)}
        if shuffle is not None:
            move["shuffle"] = shuffle
        move.update(description=said, events=[dict(e) for e in (events if events is not None else happened)])
        self.record["moves"].append(move)
        self.record["result"] = result(g)
        return happened


def record_from_moves(moves: Sequence[Decision | str], *, players: int = 2, seed: int | None = 0,
                      variant: Any = None, initial_state: Mapping[str, Any] | None = None,
                      levels: Sequence[str | None] | None = None, data: CardData | None = None,
                      shuffles: Sequence[int | None] | None = None) -> dict[str, Any]:
    """The record of `moves` played in order from the deal of `seed` (or from `initial_state`);
    `levels`: each seat's level (None: a person); `shuffles`: per move, the seed of the shuffle of
    what no seat knew made before it (None: none). RecordError names a move that is not legal."""
    engine = _engine(data)
    game = engine.from_json(dict(initial_state)) if initial_state is not None else engine.new_game(players, seed or 0,
                                                                                                   variant)
    seats = [{"seat": p, "level": (levels[p] if levels and p < len(levels) else None)} for p in range(game.players)]
    rec = Recorder(game, seed=None if initial_state is not None else (seed or 0), variant=variant, seats=seats)
    for i, m in enumerate(moves, 1):
        try:
            rec.add(m, shuffle=shuffles[i - 1] if shuffles and i <= len(shuffles) else None)
        except (DecisionError, IllegalDecision) as exc:
            raise RecordError(f"move {i} ({seat_words(game.current_player)}: `{m}`): {exc}", i) from None
    return rec.record


def check(record: Any) -> dict[str, Any]:
    """`record` if it is one by the schema; RecordError naming the field otherwise."""
    if not isinstance(record, dict):
        raise RecordError("a game record is a JSON object")
    if record.get("seed") is None and record.get("initial_state") is None:  # (the schema's allOf, named)
        raise RecordError("a game record gives its seed or its initial_state", pointer="/seed")
    err = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(RECORD_SCHEMA).iter_errors(record))
    if err is not None:
        path = [str(p) for p in err.absolute_path]
        if err.validator == "required" and isinstance(err.instance, dict):  # the field missing, named
            path += [k for k in err.validator_value if k not in err.instance][:1]
        elif err.validator == "additionalProperties" and isinstance(err.instance, dict):  # the field too many
            path += sorted(set(err.instance) - set(err.schema.get("properties", {})))[:1]
        where = "".join(f"/{p}" for p in path)
        move = int(path[1]) + 1 if len(path) > 1 and path[0] == "moves" else 0
        raise RecordError(f"not a game record at {where or '/'}: {err.message}", move, pointer=where)
    return record


class Replay:
    """A record replayed move by move: iterate for each `Step`; `game` is the game as far as it
    went. RecordError (from the start, or from the iteration) names the first move that does not
    replay."""

    def __init__(self, record: Mapping[str, Any], data: CardData | None = None) -> None:
        self.record = check(dict(record))
        self.game = start(self.record, data)
        cards = self.record.get("cards") or {}
        have = self.game.engine.data.sha256
        changed = bool(cards.get("sha256")) and cards["sha256"] != have
        self.why = (f" (the card data differs from the record's: sha256 {have[:12]}..., recorded "
                    f"{cards['sha256'][:12]}...)") if changed else ""

    def __iter__(self) -> Iterator[Step]:
        game, why = self.game, self.why
        moves = self.record["moves"]
        for i, move in enumerate(moves, 1):
            said = f"move {i} ({seat_words(move['seat'])}: `{move['decision']}`)"
            if game.is_terminal:
                raise RecordError(f"{said}: the game was over before it{why}", i, replays=True)
            if game.current_player != move["seat"]:
                raise RecordError(f"{said}: {seat_words(game.current_player)} is to move, not "
                                  f"{seat_words(move['seat'])}{why}", i, pointer=f"/moves/{i - 1}/seat",
                                  replays=True)
            if move.get("shuffle") is not None:
                game.shuffle_unknown(int(move["shuffle"]))
            before = game.clone()
            try:
                events = game.apply(move["decision"])
            except (DecisionError, IllegalDecision) as exc:
                raise RecordError(f"{said}: {exc}{why}", i, pointer=f"/moves/{i - 1}/decision",
                                  replays=True) from None
            if "events" in move and [dict(e) for e in move["events"]] != events:
                raise RecordError(f"{said}: it did not do what the record says (its events differ){why}", i,
                                  pointer=f"/moves/{i - 1}/events", replays=True)
            yield Step(i, move, before, game)
        wanted = self.record.get("result") or {}
        got = result(game)
        if any(k in wanted and wanted[k] != got[k] for k in ("vp", "winner")):
            raise RecordError(f"the replayed game ends with VP {got['vp']} and winner {got['winner']}, not as "
                              f"recorded (VP {wanted.get('vp')}, winner {wanted.get('winner')}){why}", len(moves),
                              pointer="/result", replays=True)


def replay(record: Mapping[str, Any], data: CardData | None = None) -> Game:
    """The game a record ends with; RecordError names the first move that does not replay."""
    run = Replay(record, data)
    for _ in run:
        pass
    return run.game


def save(record: Mapping[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def load(path: str | Path) -> dict[str, Any]:
    """A record from a file, checked against the schema (RecordError: not JSON, or not a record)."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise RecordError(f"{path} is not JSON: {exc}") from None
    return check(doc)

