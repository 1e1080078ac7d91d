"""The words the service adds to what it answers, from the engine's renderer (`engine_ext.words`)
and a game's `decision_context`: legal decisions, events, and a search's answer (`describe_answer`:
the typed `bots.answer.Answer` as JSON, with the words)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bots.answer import Answer
from engine_ext.decisions import Decision
from engine_ext.words import Words, words


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


def legal_seen_by(game: Any, observer: int | None) -> dict[str, Any]:
    """`legal` and `legal_hidden` for a response that `observer` sees (None: the full state): when
    the player to move is choosing among cards it drew unseen by the observer (Special cards,
    contracts), its decisions would name them, so they are left out and `legal_hidden` is true."""
    if game.hidden_from(observer):
        return {"legal": [], "legal_hidden": True}
    return {"legal": legal(game), "legal_hidden": False}


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
