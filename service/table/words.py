"""Words for the table, from the package's renderer (`engine_ext.words`): card names and actions,
contracts (as data for the page, with their line of text), decisions and events. What the
renderer does not say is here: the question the engine is asking, and a bot's choice among cards
the person has not seen."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_ext import words

#: A bot's decision among cards only it has seen (its code and its words would name them).
HIDDEN_CHOICE = "chooses among the cards it drew (not shown to you)"


def card_name(slug: str) -> str:
    return words.card_name(slug)


def card(slug: str) -> dict[str, Any]:
    """A card for the page: its English name, VP and what its actions do (`a`, `b`, `part`)."""
    w = words.words()
    actions = {o: what for o in ("a", "b", "part") if (what := w.action(slug, o))}
    return {"name": w.name(slug), "vp": w.cards.get(slug, {}).get("vp"), "actions": actions,
            "text": words.card_effect_text(slug)}


def contract(number: int) -> dict[str, Any]:
    """A contract for the page: VP, cost, mules, payout, and the whole in one line."""
    c = words.words().contracts.get(int(number), {})
    return {"number": int(number), "vp": c.get("vp"), "cost": dict(c.get("cost") or {}),
            "mules": int(c.get("mules") or 0), "payout": dict(c.get("payout") or {}),
            "text": words.contract_text(int(number))}


def decision_text(decision: Any, state: Mapping[str, Any]) -> str:
    return words.decision_text(decision, state)


def event_text(event: Mapping[str, Any], names: Sequence[str]) -> str:
    return words.event_text(event, names)


ASKS = {
    "select": "Your turn: play the front card of one of your caravans",
    "keep": "Keep one of the cards you drew",
    "take": "Take a card from the discard pile",
    "choose": "Choose a resource",
    "fulfil": "Fulfil a contract, or not",
    "remove": "Choose a card to remove",
    "pay": "Choose how much gold to pay",
    "route": "Choose where the front cards go",
}


def ask_text(kinds: Sequence[str]) -> str:
    """What the engine asks, from the kinds of the legal decisions."""
    for kind in ("select", "keep", "take", "fulfil", "remove", "choose", "pay", "route"):
        if kind in kinds:
            return ASKS[kind]
    return "Your decision"
