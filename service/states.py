"""States in: a request's state document loaded into an engine game, its decision parsed, a new game
dealt, a game summed up; every engine complaint turned into a 422 with a JSON pointer into the
request body."""

from __future__ import annotations

import logging
from typing import Any

import engine_ext
from bots.position import Position
from engine_ext.game import NoDecision

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


def position_of(doc: Any, level: str | None, prefix: str = "/state") -> Position:
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
