"""A game at the table: the person's seat against bots, one request per decision of the person.

The table (the full state, the seats' levels, the seed and the decisions so far) travels inside
the token (`service.table.token`); what goes out in the clear is the person's view (the engine's
`to_json(observer=seat)`), their legal decisions and what the others did, in words, as the
person's seat sees it (`engine_ext.game.seen_by`). Before each of the person's decisions, what no
seat knows (the decks' hidden order) is shuffled afresh (`Game.shuffle_unknown`, its seed kept in
the history for the record): a token sent again with another decision draws other cards, so
playing a request twice shows nothing of what is to come."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

import engine_ext
from bots.answer import Answer
from bots.position import Position
from bots.strength import EloOutOfRange, elo_of_spec, elo_spec, mix_for
from engine_ext.decisions import Decision
from engine_ext.words import YOU

from .. import admission, clients, describe, reasons, search, states
from .. import levels as served
from ..api.common import manager, settings
from ..api.rules import check_variant
from ..api.suggest import resolve
from ..errors import APIError
from ..models import SuggestRequest
from . import words

#: Bits of a shuffle's seed: a record's numbers stay exact in JavaScript (at most 2**53 - 1).
SHUFFLE_BITS = 52
#: Alternatives shown beside a hint's suggestion.
HINT_ALTERNATIVES = 3
#: Decisions the bots may take in one call before the person is asked again (a game is far shorter).
MAX_BOT_DECISIONS = 2_000


@dataclass
class Table:
    """What the token holds."""

    state: dict[str, Any]
    seat: int
    levels: list[str | None]  # per seat: a level's name, `elo:N` (a bot at Elo N); None for the person's
    seed: int
    variant: Any
    history: list[list[Any]] = field(default_factory=list)  # [seat, decision text(, shuffle seed before it)]

    def payload(self) -> dict[str, Any]:
        return {"state": self.state, "seat": self.seat, "levels": self.levels, "seed": self.seed,
                "variant": self.variant, "history": self.history}

    @classmethod
    def from_payload(cls, p: dict[str, Any]) -> Table:
        try:
            return cls(state=dict(p["state"]), seat=int(p["seat"]), levels=list(p["levels"]), seed=int(p["seed"]),
                       variant=p["variant"], history=list(p["history"]))
        except (KeyError, TypeError, ValueError):
            raise APIError(422, "invalid_token", "the token's content is unreadable", "/token") from None

    @property
    def players(self) -> int:
        return len(self.levels)

    def names(self) -> list[str]:
        return [YOU if lv is None else f"{bot_name(lv)} (seat {i + 1})" for i, lv in enumerate(self.levels)]


def bot_name(level: str) -> str:
    """A bot seat's name: its level's, or `Elo 640` for a bot at Elo 640 (`elo:640`)."""
    try:
        elo = elo_of_spec(level)
    except ValueError:
        elo = None
    return level if elo is None else f"Elo {elo:g}"


def load(table: Table) -> Any:
    """The game of a table (a token's state: the service's own, so a failure is its own too)."""
    try:
        return engine_ext.from_json(table.state)
    except (engine_ext.StateError, ValueError, TypeError, KeyError) as exc:
        raise APIError(422, "invalid_token", f"the token's game does not load: {exc}", "/token") from None


def fits_sync(level: str, ptr: str, of: str = "") -> None:
    """422 naming `ptr` when `level` searches beyond this server's synchronous limits (the table's
    bots and hints search within the request); `of`: what the level plays for, in the message."""
    cfg = settings()
    iterations, time_ms = served.level_budget(level)
    if (iterations or 0) > cfg.sync_max_iterations or (time_ms or 0) > cfg.sync_max_ms:
        raise APIError(422, "budget_too_large_for_sync", f"level {level}{of} searches beyond this server's "
                       f"synchronous limits ({cfg.sync_max_iterations} iterations, {cfg.sync_max_ms} ms): "
                       "pick a weaker one", ptr)


def check_bot(level: str, ptr: str) -> None:
    """422 naming `ptr` unless the table plays a bot of `level`: one of this server's levels, or
    `elo:N` with N within the ladder's range (the message of /suggest's `elo_out_of_range`, the
    range in it), each level it searches within the synchronous limits (of `elo:N`, both levels of
    its mix)."""
    names = served.level_names()
    try:
        elo = elo_of_spec(level)
    except ValueError as exc:
        raise APIError(422, "unknown_level", f"{exc}; levels: {', '.join(names)}", ptr) from None
    if elo is None:
        if level not in names:
            raise APIError(422, "unknown_level", f"unknown level {level!r}; levels: {', '.join(names)}", ptr)
        fits_sync(level, ptr)
        return
    try:
        mix = mix_for(elo)
    except EloOutOfRange as exc:
        raise APIError(422, "elo_out_of_range", str(exc), ptr) from None
    for lv in (mix.lower, mix.upper):
        fits_sync(lv.name, ptr, f" (of the mix that plays at Elo {elo:g})")


def elo_seat(elo: float, ptr: str) -> str:
    """The level of a seat at Elo `elo`, `elo:N` (`bots.strength.elo_spec`), checked (`check_bot`)."""
    level = elo_spec(elo)
    check_bot(level, ptr)
    return level


def search_for(view: dict[str, Any], level: str, seed: int) -> tuple[Answer, Position]:
    """The answer of POST /suggest for `view` at `level` (the same checks and search, counted in the
    client's synchronous search-seconds: past its limit, 429), and the position it searched. A
    level `elo:N` asks for `elo` N: the level that searches is drawn from the seed and the position
    as /suggest draws it (`service.strength.elo_position`), so a seed replays the same game."""
    elo = elo_of_spec(level)
    if elo is None:
        request = SuggestRequest(state=view, level=level, seed=seed, mode="sync")
    else:
        request = SuggestRequest(state=view, elo=elo, seed=seed, mode="sync")
    spec, _, position = resolve(request, settings(), manager().backend)
    with admission.sync_search(manager(), clients.current(), admission.cost_seconds(spec, settings())):
        found, _ = search.answer_within(spec, position, settings().sync_timeout_ms)
    return found, position


def _apply(table: Table, game: Any, decision: Decision, player: int, shuffle: int | None = None) -> dict[str, Any]:
    """Apply `player`'s `decision` (legal: checked by the caller), after shuffling what no seat
    knows by `shuffle` when given; the step as the person sees it."""
    if shuffle is not None:
        game.shuffle_unknown(shuffle)
    hidden = game.hidden_from(table.seat)  # a bot choosing among cards only it has seen
    text = str(decision)
    said = words.HIDDEN_CHOICE if hidden else words.decision_words(decision, game.to_json(observer=table.seat))
    events = game.apply(decision, observer=table.seat)
    table.history.append([player, text] if shuffle is None else [player, text, shuffle])
    table.state = dict(game.to_json())
    names = table.names()
    step: dict[str, Any] = {"seat": player, "who": names[player], "description": said,
                            "events": [words.event_text(e, names) for e in events]}
    if not hidden:
        step["text"] = text
    return step


def play_bots(table: Table, game: Any) -> list[dict[str, Any]]:
    """The bots' decisions until the person is to decide or the game is over, each a step in words."""
    steps: list[dict[str, Any]] = []
    while not game.is_terminal and game.current_player >= 0 and game.current_player != table.seat:
        if len(steps) >= MAX_BOT_DECISIONS:
            raise APIError(500, "bots_stuck", "the bots did not hand the game back", "")
        player = int(game.current_player)
        level = table.levels[player] or "novice"
        seed = (table.seed * 7919 + len(table.history)) % engine_ext.SEEDS
        answer, _ = search_for(dict(game.to_json(observer=player)), level, seed)
        steps.append(_apply(table, game, answer.decision, player))
    return steps


def new(players: int, levels: list[str | float], variant: Any,
        seed: int | None) -> tuple[Table, Any, list[dict[str, Any]]]:
    """A new table: the person at seat index 0, a bot at each of `levels` (a level's name, or a
    number: a bot at that Elo, seated as `elo:N`), the bots' moves until the person's first decision."""
    if len(levels) != players - 1:
        raise APIError(422, "validation_error", f"levels must name {players - 1} bot level(s) for {players} players",
                       "/levels")
    seated: list[str | None] = [None]
    for i, lv in enumerate(levels):
        if isinstance(lv, str):
            check_bot(lv, f"/levels/{i}")
            seated.append(lv)
        else:
            seated.append(elo_seat(float(lv), f"/levels/{i}"))
    check_variant(variant)
    seed = engine_ext.random_seed() if seed is None else seed
    game = states.new_game(players, seed, variant)
    table = Table(state=dict(game.to_json()), seat=0, levels=seated, seed=seed,
                  variant=game.to_json().get("variant"))
    return table, game, play_bots(table, game)


def move(table: Table, game: Any, decision: Any) -> list[dict[str, Any]]:
    """The person's decision, then the bots' up to the person's next one."""
    if game.is_terminal or game.current_player != table.seat:
        raise APIError(409, "not_your_turn", "the game is over" if game.is_terminal else
                       "it is not your decision in this table", "/decision")
    d = states.parse_decision(game, decision, "/decision")
    steps = [_apply(table, game, d, table.seat, secrets.randbits(SHUFFLE_BITS))]
    return steps + play_bots(table, game)


def hint(table: Table, game: Any, level: str) -> dict[str, Any]:
    """A level's suggestion for the person, with its win chance, why (`service.reasons`) and the next
    best alternatives."""
    if game.is_terminal or game.current_player != table.seat:
        raise APIError(409, "not_your_turn", "there is no decision of yours to hint at", "/token")
    names = served.level_names()
    if level not in names:
        raise APIError(422, "unknown_level", f"unknown level {level!r}; levels: {', '.join(names)}", "/level")
    fits_sync(level, "/level")
    view = dict(game.to_json(observer=table.seat))
    answer, position = search_for(view, level, (table.seed * 31 + len(table.history)) % engine_ext.SEEDS)
    said, context = describe.words_of(position.game), position.game.decision_context()

    def item(d: Decision, win_prob: float | None, expected_vp: float | None, visits: int | None) -> dict[str, Any]:
        return {"text": str(d), "description": said.decision(d, context), "win_prob": win_prob,
                "expected_vp": expected_vp, "visits": visits}

    alternatives = [item(a.decision, a.win_prob, a.expected_vp, a.visits) for a in answer.alternatives
                    if a.code != answer.code]
    return {"level": level, **item(answer.decision, answer.win_prob, answer.expected_vp, None),
            "reason": reasons.reason(answer, position.game), "alternatives": alternatives[:HINT_ALTERNATIVES]}


def _cards_in(view: dict[str, Any]) -> set[str]:
    slugs: set[str] = set(view.get("discard") or [])
    for seat in view.get("seats", []):
        for caravan in seat.get("caravans", []):
            slugs.update(caravan)
    pending = view.get("pending") or {}
    slugs.update(s for s in pending.get("drawn") or [] if isinstance(s, str))
    return {s for s in slugs if isinstance(s, str)}


def _contracts_in(view: dict[str, Any]) -> set[int]:
    numbers = set(view.get("display") or [])
    for seat in view.get("seats", []):
        numbers.update(seat.get("contracts") or [])
    return {int(n) for n in numbers if isinstance(n, int)}


def answer(table: Table, game: Any, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The body of a table call (but the token): the person's view and decisions, the steps in words."""
    view = dict(game.to_json(observer=table.seat))
    names = table.names()
    body: dict[str, Any] = {"seat": table.seat, "players": table.players, "names": names, "levels": table.levels}
    body.update(states.game_summary(game))
    body["view"] = view
    legal = [] if game.is_terminal or game.current_player != table.seat else game.legal()
    body["legal"] = [describe.decision_json(d, game, view) for d in legal]
    body["ask"] = words.ask_text([d.kind for d in legal]) if legal else ""
    body["steps"] = steps
    body["cards"] = {s: words.card(s) for s in sorted(_cards_in(view))}
    body["contracts"] = {str(n): words.contract(n) for n in sorted(_contracts_in(view))}
    body["decisions"] = len(table.history)
    if game.is_terminal:
        scores = [int(game.vp(p)) for p in range(table.players)]
        body["result"] = {"winner": int(game.winner()), "winner_name": names[int(game.winner())]
                          if 0 <= int(game.winner()) < len(names) else None, "scores": scores, "seed": table.seed}
    return body
