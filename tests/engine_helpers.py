"""Helpers for the engine property tests: card bookkeeping from a state document."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import engine_ext
from engine_ext import Engine, Game

DATA = engine_ext.carddata.default()


def deck_cards(spec: Any) -> list[Any]:
    if isinstance(spec, list):
        return spec
    if isinstance(spec, dict) and "cards" in spec:
        return list(spec["cards"])
    raise AssertionError("a full state lists its decks")


def person_counts(doc: dict[str, Any]) -> Counter[str]:
    """Every person card of a full state document, by kind (Matriarchs as Patriarchs)."""
    c: Counter[str] = Counter()
    for seat in doc["seats"]:
        for caravan in seat["caravans"]:
            c.update(caravan)
    c.update(doc["discard"])
    c.update(doc["removed"])
    c.update(deck_cards(doc["decks"]["standard"]))
    c.update(deck_cards(doc["decks"]["special"]))
    pend = doc.get("pending")
    if pend:
        if pend["drawn_from"] != "contract" and isinstance(pend["drawn"], list):
            c.update(pend["drawn"])
        if pend["action"] == "part":
            c[pend["card"]] += 1
    if doc["spare_patriarch"]:
        c["patriarch"] += 1
    c["patriarch"] += c.pop("matriarch", 0)
    return c


def contract_numbers(doc: dict[str, Any]) -> list[int]:
    out = list(doc["display"]) + deck_cards(doc["decks"]["contract"])
    for seat in doc["seats"]:
        out += seat["contracts"]
    pend = doc.get("pending")
    if pend and pend["drawn_from"] == "contract" and isinstance(pend["drawn"], list):
        out += pend["drawn"]
    return out


def expected_vp(doc: dict[str, Any], p: int) -> int:
    seat = doc["seats"][p]
    wheat = sum(1 for n in seat["contracts"] if DATA.contracts[n - 1].kind == "wheat")
    vp = sum(DATA.contracts[n - 1].vp for n in seat["contracts"])
    for caravan in seat["caravans"]:
        for slug in caravan:
            kind = DATA.by_slug["patriarch" if slug == "matriarch" else slug]
            vp += wheat if kind.vp == "wheat" else int(kind.vp)
    return vp


def random_walk(engine: Engine, players: int, seed: int, steps: int, variant: Any = "all") -> Game:
    """A game after `steps` random legal decisions (or at its end)."""
    g = engine.new_game(players, seed=seed, variant=variant)
    rnd = random.Random(seed)
    for _ in range(steps):
        if g.is_terminal:
            break
        g.state.apply(rnd.choice(g.legal_codes()))
    return g


def perft(state: Any, depth: int) -> int:
    """The number of decision sequences of length `depth` (fewer where the game ends)."""
    if depth == 0 or state.is_terminal():
        return 1
    total = 0
    for code in state.legal_codes():
        child = state.clone()
        child.apply_unchecked(code)
        total += perft(child, depth - 1)
    return total
