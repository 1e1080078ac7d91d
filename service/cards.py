"""The card data this process plays with, as `GET /cards` gives it: the cards and contracts, and the
card file (its name and sha256)."""

from __future__ import annotations

import functools
from typing import Any

import engine_ext
from engine_ext.record import card_file


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
