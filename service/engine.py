"""The service's side of the engine and the bots: states in, answers out, every engine complaint
turned into a 422 with a JSON pointer into the request body."""

from __future__ import annotations

import functools
import logging
import math
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

import engine_ext
from bots import suggest as bots_suggest
from bots.answer import Answer
from bots.position import Position
from engine_ext.decisions import Decision
from engine_ext.game import NoDecision
from engine_ext.record import card_file
from engine_ext.words import Words, words

from .errors import APIError, join_pointer

log = logging.getLogger("kashgar.service")


def compiled() -> bool:
    return bool(getattr(engine_ext, "COMPILED", False))


def state_error(exc: Exception, prefix: str) -> APIError:
    """422 for the engine's complaint about a state: `invalid_state`, or the reason there is no
    decision to choose (`NoDecision.code`: `game_over`, `hidden_choice`)."""
    inner = getattr(exc, "pointer", None)
    message = getattr(exc, "message", None) or str(exc) or exc.__class__.__name__
    ptr = join_pointer(prefix, inner) if isinstance(inner, str) else prefix
    return APIError(422, exc.code if isinstance(exc, NoDecision) else "invalid_state", str(message), ptr)


def load_game(doc: Any, prefix: str = "/state") -> Any:
    """A Game from a state document; 422 naming the field when the engine rejects it."""
    if not isinstance(doc, dict):
        raise APIError(422, "invalid_state", "the state must be a JSON object", prefix)
    try:
        return engine_ext.from_json(doc)
    except engine_ext.StateError as exc:
        raise state_error(exc, prefix) from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError, RecursionError) as exc:
        # The engine should have said StateError; still the caller's input, never a 500.
        log.warning("engine raised %s for a state: %s", exc.__class__.__name__, exc)
        raise state_error(exc, prefix) from None


def position(doc: Any, level: str | None, prefix: str = "/state") -> Position:
    """The position a search request names (`bots.position.Position`): the state loaded, checked to
    be a decision its player to move can see, and the level; 422 naming the field otherwise."""
    game = load_game(doc, prefix)
    try:
        return Position.of(game, level)
    except engine_ext.StateError as exc:
        raise state_error(exc, prefix) from None


def refuse_hidden_choice(game: Any, prefix: str = "/state") -> None:
    """422 `hidden_choice` when `game` is a view whose player to move chooses among cards it does
    not show (`Game.refuse_hidden_choice`)."""
    try:
        game.refuse_hidden_choice()
    except NoDecision as exc:
        raise state_error(exc, prefix) from None


def words_of(game: Any) -> Words:
    """The renderer of `game`'s card data."""
    return words(game.engine.data)


def decision_json(d: Any, game: Any, context: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A decision of `game` (before it is applied): its JSON, its text, its description in words
    and, where it names a card, that card's English name (`context`: the game's
    `decision_context()`, when at hand)."""
    said = words_of(game)
    item = {"decision": d.to_json(), "text": str(d),
            "description": said.decision(d, game.decision_context() if context is None else context)}
    if d.kind in ("keep", "take"):
        item["card_name"] = said.name(d.args[0])
    return item


def legal(game: Any) -> list[dict[str, Any]]:
    context = game.decision_context()
    return [decision_json(d, game, context) for d in game.legal()]


def described_events(events: list[dict[str, Any]], game: Any) -> list[dict[str, Any]]:
    """`events` with each one's description in words, and the English name beside a card named
    (`name` beside `card`, `turned_name` beside `turned`)."""
    said = words_of(game)
    out = []
    for e in events:
        e = dict(e, description=said.event(e))
        if e.get("card"):
            e["name"] = said.name(e["card"])
        if e.get("turned"):
            e["turned_name"] = said.name(e["turned"])
        out.append(e)
    return out


def describe_answer(answer: Answer, game: Any) -> dict[str, Any]:
    """A search's answer on `game` as the service gives it: its JSON with the words, the decision's
    and every alternative's `description` (and `card_name`), and `line_descriptions`, one per step
    of `line`."""
    said = words_of(game)
    context = game.decision_context()
    out = answer.to_json()
    items = [(out, answer.decision), *zip(out["alternatives"], (a.decision for a in answer.alternatives),
                                          strict=True)]
    for item, d in items:
        item["description"] = said.decision(d, context)
        if d.kind in ("keep", "take"):
            item["card_name"] = said.name(d.args[0])
    out["line_descriptions"] = line_words(game, answer.line)
    return out


def line_words(game: Any, line: Sequence[Decision]) -> list[str]:
    """Each step of a search's expected line in words, played out on a copy of `game` while its
    steps are legal there (a line may skip other seats' turns, and a view's draws are made up):
    from the first that is not, in words that need no state."""
    said = words_of(game)
    now: Any = game.clone()
    out = []
    for d in line:
        code = None
        if now is not None:
            try:
                code = now.legal_code(d)
            except ValueError:
                now = None
        out.append(said.decision(d, now.decision_context() if now is not None else {}))
        if now is not None:
            now.state.apply_unchecked(code)  # the words need the next state, not the events
    return out


def legal_seen_by(game: Any, observer: int | None) -> dict[str, Any]:
    """`legal` and `legal_hidden` for a response that `observer` sees (None: the full state): when
    the player to move is choosing among cards it drew unseen by the observer (Special cards,
    contracts), its decisions would name them, so they are left out and `legal_hidden` is true."""
    if game.hidden_from(observer):
        return {"legal": [], "legal_hidden": True}
    return {"legal": legal(game), "legal_hidden": False}


def parse_decision(game: Any, value: Any, prefix: str = "/decision") -> Any:
    """The legal Decision that `value` (text or JSON) names; 422 if it is malformed or illegal."""
    Decision = engine_ext.Decision
    try:
        if isinstance(value, str):
            d = Decision.parse(value)
        elif isinstance(value, dict):
            d = Decision.from_json(value)
        else:
            raise APIError(422, "invalid_decision", "a decision is its text or its JSON object", prefix)
    except APIError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        inner = getattr(exc, "pointer", None)
        ptr = join_pointer(prefix, inner) if isinstance(inner, str) else prefix
        said = str(getattr(exc, "message", None) or exc)
        raise APIError(
            422, "invalid_decision", said if said.startswith("not a decision") else f"not a decision: {said}", ptr
        ) from None
    legal_now = game.legal()
    if d not in legal_now:
        if game.is_terminal:
            why = "the game is over"
        else:
            why = f"legal now: {', '.join(str(x) for x in legal_now[:20])}" + (" ..." if len(legal_now) > 20 else "")
        raise APIError(422, "illegal_decision", f"{d} is not legal in this state ({why})", prefix)
    return d


def player_count(game: Any) -> int:
    state = getattr(game, "state", None)
    if state is not None and hasattr(state, "players"):
        return int(state.players)
    return int(game.to_json()["players"])


def game_summary(game: Any) -> dict[str, Any]:
    players = player_count(game)
    out: dict[str, Any] = {
        "current_player": int(game.current_player),
        "turn_player": int(game.turn_player),
        "is_terminal": bool(game.is_terminal),
        "winner": int(game.winner()),
    }
    if players:
        out["vp"] = [int(game.vp(p)) for p in range(players)]
    return out


#: Seeds the service draws are below this: every integer up to it is exact as a JavaScript
#: number (a double), so a record that passed through a browser still names its deal.
DRAWN_SEEDS = 1 << 53


def random_seed() -> int:
    """An unguessable deal seed (a view does not show the deck order, but a small or default seed
    can be found from the public deal, and with it every deck), exact in JavaScript: 53 bits."""
    return secrets.randbelow(min(DRAWN_SEEDS, engine_ext.SEEDS))


def new_game(players: int, seed: int, variant: Any) -> Any:
    try:
        return engine_ext.new_game(players=players, seed=seed, variant=variant)
    except engine_ext.StateError as exc:
        err = state_error(exc, "")
        if err.pointer.startswith("/variant"):
            err.code = "invalid_variant"
        raise err from None
    except (ValueError, TypeError, KeyError) as exc:
        raise APIError(422, "invalid_game", str(exc), "/variant") from None


@functools.lru_cache(maxsize=1)
def cards() -> dict[str, list[dict[str, Any]]]:
    """`{"cards": [person cards], "contracts": [contracts]}` (a bare list is read as the cards)."""
    data = engine_ext.cards()
    if isinstance(data, dict):
        return {"cards": list(data.get("cards", [])), "contracts": list(data.get("contracts", []))}
    return {"cards": list(data), "contracts": []}


def cards_file() -> dict[str, str]:
    """The card file this process plays with (`KASHGAR_CARDS`, else the package's): its file name
    and the sha256 of its text (`engine_ext.record.card_file`: never its path)."""
    return card_file(engine_ext.get_engine().data)


@functools.lru_cache(maxsize=1)
def levels() -> list[dict[str, Any]]:
    return [dict(level) for level in bots_suggest.list_levels()]


def default_level(configured: str | None) -> str | None:
    """The configured default level, else the one the bots mark as default, else the first."""
    names = level_names()
    if configured in names:
        return configured
    for level in levels():
        if level.get("default") is True:
            return str(level["name"])
    return names[0] if names else None


def finite(obj: Any) -> Any:
    """JSON-safe copy: NaN and infinities become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj


def level_names() -> list[str]:
    return [str(level["name"]) for level in levels()]


def level_budget(name: str) -> tuple[int | None, int | None]:
    """(iterations, time_ms) of a level preset."""
    for level in levels():
        if level.get("name") == name:
            budget = level.get("budget", level)
            if isinstance(budget, dict):
                it = budget.get("iterations")
                ms = budget.get("time_ms", budget.get("ms"))
                return (int(it) if it else None, int(ms) if ms else None)
            return (None, None)
    raise KeyError(name)
