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


#: (seed, lengths of the lists shuffled up to this one) -> the order that shuffle gives
_ORDERS: dict[tuple[int, tuple[int, ...]], list[int]] = {}
_ORDERS_MAX = 4096


class Builder:
    """Places every card of a document into the core's array, checking that they add up. `core` is
    the interpreted core's state over that array (`array.state_over`), whose rules place them."""

    def __init__(self, data: CardData, counts: dict[int, int], seed: int = 1) -> None:
        self.data = data
        self.seed = seed
        self._lengths: tuple[int, ...] = ()  # of the lists shuffled so far
        self._live: random.Random | None = None  # the stream of shuffles, once one was not known
        self.d = [0] * L.D_SIZE
        self.core = state_over(self.d, data)
        self.d[L.O_NXT:L.O_NXT + L.NCARDS] = [-1] * L.NCARDS  # no card follows one outside a caravan
        self.pool: dict[int, list[int]] = {}
        for kind, ids in data.ids_by_kind.items():
            k = data.kinds[kind]
            n = counts.get(kind, 0) if k.deck == "additional" else len(ids)
            self.pool[kind] = list(ids[:n])
            for card in ids[n:]:
                self.d[L.O_LOC + card] = L.L_UNUSED
        self.contracts_left = set(range(L.NCON))
        self.dealt: list[tuple[str, str]] = []  # (deck, pointer) of each Patriarch and Start card placed

    def shuffle(self, cards: list[int]) -> None:
        """Shuffle `cards` in place as the k-th `random.Random(seed).shuffle` of this document's
        lists would. How a shuffle moves a list depends only on the seed and the lengths of the
        lists shuffled before it, so the order is looked up (`_ORDERS`): a view's seed is always
        1, so its shuffles cost a lookup and not a draw per card."""
        self._lengths += (len(cards),)
        key = (self.seed, self._lengths)
        order = _ORDERS.get(key)
        if order is None or self._live is not None:
            if self._live is None:  # replay the shuffles before this one
                self._live = random.Random(self.seed)
                for n in self._lengths[:-1]:
                    self._live.shuffle(list(range(n)))
            drawn = list(range(len(cards)))
            self._live.shuffle(drawn)
            if order is None:
                if len(_ORDERS) >= _ORDERS_MAX:
                    _ORDERS.clear()
                _ORDERS[key] = order = drawn
        cards[:] = [cards[i] for i in order]

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
        """The cards of `decks` not placed yet, by kind then id (ids rise with the kind: each
        pool is in id order)."""
        kinds = self.data.kinds
        return [card for kind in sorted(self.pool) if kinds[kind].deck in decks for card in self.pool[kind]]

    def clear_pools(self, decks: tuple[str, ...]) -> None:
        """Every card of `decks` is placed: their pools are empty."""
        for kind, ids in self.pool.items():
            if self.data.kinds[kind].deck in decks:
                ids.clear()

