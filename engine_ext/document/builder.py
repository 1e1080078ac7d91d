"""The card places of a document being read: each card and contract of the game given out once."""

from __future__ import annotations

import random
from typing import Any

from engine_ext import core as L
from engine_ext.carddata import CardData
from engine_ext.document.array import state_over
from engine_ext.document.schema import StateError
from engine_ext.words import card_name

PERSON_DECKS = ("patriarch", "start", "standard", "special", "additional")
STD_DECKS = ("standard", "additional")


class Builder:
    """Places every card of a document into the core's array, checking that they add up. `core` is
    the interpreted core's state over that array (`array.state_over`), whose rules place them."""

    def __init__(self, data: CardData, counts: dict[int, int], seed: int = 1) -> None:
        self.data = data
        self.shuffler = random.Random(seed)
        self.d = [0] * L.D_SIZE
        self.core = state_over(self.d, data)
        for card in range(L.NCARDS):  # no card follows one outside a caravan, as play leaves it
            self.d[L.O_NXT + card] = -1
        self.pool: dict[int, list[int]] = {}
        for kind, ids in data.ids_by_kind.items():
            k = data.kinds[kind]
            n = counts.get(kind, 0) if k.deck == "additional" else len(ids)
            self.pool[kind] = list(ids[:n])
            for card in ids[n:]:
                self.d[L.O_LOC + card] = L.L_UNUSED
        self.contracts_left = set(range(L.NCON))
        self.dealt: list[tuple[str, str]] = []  # (deck, pointer) of each Patriarch and Start card placed

    def card(self, slug: Any, pointer: str, allowed: tuple[str, ...]) -> tuple[int, int]:
        """An instance id for a card named in the document, and whether it is turned."""
        if not isinstance(slug, str) or slug not in self.data.by_slug:
            raise StateError(pointer, f"unknown card {slug!r}")
        kind = self.data.by_slug[slug]
        flip = 0
        if kind.slug == "matriarch":
            kind, flip = self.data.patriarch, 1
        if kind.deck not in allowed:
            raise StateError(pointer, f"the {card_name(slug, self.data)} (`{slug}`), a {kind.deck} card, "
                                      "cannot be here")
        pool = self.pool.get(kind.index, [])
        if not pool:
            raise StateError(pointer, f"more {card_name(kind.slug, self.data)} cards than this game has")
        if kind.deck in ("patriarch", "start"):
            self.dealt.append((kind.deck, pointer))
        return pool.pop(0), flip

    def contract(self, number: Any, pointer: str) -> int:
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= L.NCON:
            raise StateError(pointer, "a contract is a number 1..40")
        c = number - 1
        if c not in self.contracts_left:
            raise StateError(pointer, f"contract {number} appears twice")
        self.contracts_left.remove(c)
        return c

    def leftovers(self, decks: tuple[str, ...]) -> list[int]:
        out = []
        for kind, ids in self.pool.items():
            if self.data.kinds[kind].deck in decks:
                out.extend(ids)
        return sorted(out, key=lambda card: (self.data.card_kind[card], card))

