"""Words for the table, from the package's renderer (`engine_ext.words`): card names and actions,
contracts (as data for the page, with their line of text), decisions and events. """

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engine_ext import words
from engine_ext.words import HIDDEN_CHOICE, ask_text

__all__ = ["HIDDEN_CHOICE", "ask_text", "card", "card_name", "contract", "decision_words", "event_text"]


def card_name(slug: str) -> str:
    return words.card_name(slug)


def card(slug: str) -> dict[str, Any]:
    """A card for the page: its English name, VP and what its actions do (`a`, `b`, `part`). `vp` is
    a number (null where the card counts its VP: the Bauer's are 1 per wheat-field contract, which
    the card data writes "wheat"); `vp_text` says it in words ("2 VP", "1 VP per wheat-field
    contract"; "" for none)."""
    w = words.words()
    actions = {o: what for o in ("a", "b", "part") if (what := w.action(slug, o))}
    vp = w.cards.get(slug, {}).get("vp")
    return {"name": w.name(slug), "vp": vp if isinstance(vp, int) else None, "vp_text": words.vp_text(vp),
            "actions": actions, "text": words.card_effect_text(slug)}


def contract(number: int) -> dict[str, Any]:
    """A contract for the page: VP, cost, mules, payout, and the whole in one line."""
    c = words.words().contracts.get(int(number), {})
    return {"number": int(number), "vp": c.get("vp"), "cost": dict(c.get("cost") or {}),
            "mules": int(c.get("mules") or 0), "payout": dict(c.get("payout") or {}),
            "text": words.contract_text(int(number))}


def decision_words(decision: Any, state: Mapping[str, Any]) -> str:
    return words.decision_words(decision, state)


def event_text(event: Mapping[str, Any], names: Sequence[str]) -> str:
    return words.event_text(event, names)
