"""Words for the table: card names, card actions, contracts, decisions and events in English.

One place the table asks for words, so that it moves to the package's renderer in one edit. For
now the words come from `kashgar_cli.play_text` (the renderer `kashgar play` uses); the table's
own additions (seat names in events, hidden cards) are here."""

from __future__ import annotations

import functools
from typing import Any

from kashgar_cli.play_text import CardText

from .. import engine


@functools.lru_cache(maxsize=1)
def _text() -> CardText:
    return CardText(engine.cards())


def card_name(slug: str) -> str:
    return _text().name(slug)


def card_actions(slug: str) -> dict[str, str]:
    """What a card does: `a` and `b` (its caravan actions, when it has them) and `part` (parting)."""
    text = _text()
    return {o: what for o in ("a", "b", "part") if (what := text.action(slug, o))}


def card_vp(slug: str) -> Any:
    return _text().cards.get(slug, {}).get("vp")


def contract(number: int) -> dict[str, Any]:
    """A contract's VP, cost, mules and payout, and the whole in one line."""
    c = _text().contracts.get(int(number), {})
    return {"number": int(number), "vp": c.get("vp"), "cost": dict(c.get("cost") or {}),
            "mules": int(c.get("mules") or 0), "payout": dict(c.get("payout") or {}),
            "text": _text().contract(int(number))}


def decision_text(decision: dict[str, Any], state: dict[str, Any], player: int) -> str:
    """A legal decision of `player` in `state` in words (its code when the data says nothing)."""
    kind = decision.get("kind")
    said = _text().decision(decision, state, player)
    if kind == "select":
        option = decision.get("option")
        if option == "pass":
            slug = _front(state, player, decision.get("caravan"))
            return f"{card_name(slug)} (caravan {int(decision.get('caravan', 0)) + 1}): no action, to the back"
        if said:
            return f"caravan {int(decision.get('caravan', 0)) + 1}, {said}"
    if kind in ("keep", "take") and said:
        return f"keep {said}"
    if kind == "fulfil" and said:
        return f"fulfil contract {said}"
    if kind == "remove" and said:
        return f"remove {card_name(said)} from caravan {int(decision.get('caravan', 0)) + 1}"
    if kind == "choose":
        return f"choose {decision.get('resource')}"
    if kind == "pay":
        return f"pay {decision.get('amount')}"
    if kind == "skip":
        return "skip: do nothing more"
    if kind == "route":
        to = ", ".join(str(int(c) + 1) for c in decision.get("to") or [])
        return f"put the cards into caravans {to}, in this order"
    return said or str(kind)


def _front(state: dict[str, Any], player: int, caravan: Any) -> str:
    try:
        return str(state["seats"][player]["caravans"][caravan][0])
    except (KeyError, IndexError, TypeError):
        return ""


def event_text(event: dict[str, Any], names: list[str]) -> str:
    """One event in words, seats called by `names` ("you", "novice (seat 2)")."""
    kind = event.get("event")

    def who(p: Any) -> str:
        return names[p] if isinstance(p, int) and 0 <= p < len(names) else f"seat {p}"

    def place(where: Any) -> str:
        if isinstance(where, dict) and "player" in where:
            car = f" caravan {int(where['caravan']) + 1}" if "caravan" in where else ""
            return f"{who(where['player'])}{car}"
        return str(where)

    if kind == "resource":
        gained = int(event.get("to", 0)) - int(event.get("from", 0))
        return f"{who(event.get('player'))}: {event.get('resource')} {gained:+d} (now {event.get('to')})"
    if kind == "card":
        card = event.get("card")
        name = card_name(card) if card else "a card (not shown to you)"
        turned = f", turned into {card_name(event['turned'])}" if event.get("turned") else ""
        return f"{name}: {place(event.get('from'))} to {place(event.get('to'))}{turned}"
    if kind == "fulfil":
        return f"{who(event.get('player'))} fulfils contract {_text().contract(int(event.get('contract', -1)))}"
    if kind == "turn_end":
        return "the game is over" if event.get("game_over") else f"turn ends; {who(event.get('next_player'))} to play"
    return _text().event(event)


ASKS = {
    "select": "Your turn: play the front card of one of your caravans",
    "keep": "Keep one of the cards you drew",
    "take": "Take one of the cards",
    "choose": "Choose a resource",
    "fulfil": "Fulfil a contract, or skip",
    "skip": "Fulfil a contract, or skip",
    "remove": "Choose a card to remove",
    "pay": "Choose how much to pay",
    "route": "Choose where the cards go",
}


def ask_text(kinds: list[str]) -> str:
    """What the engine asks, from the kinds of the legal decisions."""
    for kind in ("select", "keep", "take", "fulfil", "remove", "choose", "pay", "route", "skip"):
        if kind in kinds:
            return ASKS[kind]
    return "Your decision"
