"""New games as documents: the variant's Cut-and-Thrust cards, and the setup of the rules shuffled
by a seed."""

from __future__ import annotations

import random
import secrets
from typing import Any

from engine_ext.carddata import RESOURCES, CardData
from engine_ext.checks import start_cards_dealt
from engine_ext.document.schema import SCHEMA_ID, StateError, is_strict_int
from engine_ext.words import card_name

#: Seeds of a deal (and of the searches) are the integers 0 .. SEEDS - 1.
SEEDS = 1 << 63
#: Seeds drawn at random for a game (`random_seed`) are below DRAWN_SEEDS, 2**53: exact as a
#: JavaScript number, so a record a browser (or any reader holding JSON numbers as doubles) hands
#: back still names its deal.
DRAWN_SEEDS = 1 << 53


def random_seed() -> int:
    """An unguessable deal seed (a small or default one can be found from the public deal, and
    with it every deck's order), below DRAWN_SEEDS."""
    return secrets.randbelow(DRAWN_SEEDS)

# ---- variants ------------------------------------------------------------------------------

def variant_counts(variant: Any, data: CardData) -> dict[int, int]:
    """How many copies of each Cut-and-Thrust kind are shuffled in (pointer /variant)."""
    additional = [k for k in data.kinds if k.deck == "additional"]
    if variant in (None, "base", "off"):
        return {}
    if variant == "all":
        return {k.index: k.copies for k in additional}
    where = "/variant"  # of each slug: /variant/i in a list, /variant/additional/i in the object
    if isinstance(variant, list):
        slugs = variant
    elif isinstance(variant, dict):
        where = "/variant/additional"
        slugs = variant.get("additional", [])
        if not isinstance(slugs, list):
            raise StateError("/variant/additional", "must be a list of card slugs")
    else:
        raise StateError("/variant", "must be null, 'all', or {'additional': [slugs]}")
    counts: dict[int, int] = {}
    for i, slug in enumerate(slugs):
        kind = data.by_slug.get(slug) if isinstance(slug, str) else None
        if kind is None or kind.deck != "additional":
            raise StateError(f"{where}/{i}", f"{slug!r} is not a Cut-and-Thrust card")
        counts[kind.index] = counts.get(kind.index, 0) + 1
        if counts[kind.index] > kind.copies:
            raise StateError(f"{where}/{i}", f"the game has only {kind.copies} {card_name(slug, data)} cards")
    return counts


def variant_json(counts: dict[int, int], data: CardData) -> dict[str, Any]:
    return {"additional": [data.kinds[k].slug for k in sorted(counts) for _ in range(counts[k])]}


# ---- new games ------------------------------------------------------------------------------

def new_game_doc(players: int, seed: int, variant: Any, data: CardData, turn_limit: int = 400) -> dict[str, Any]:
    """The setup of the rules, shuffled by `seed`, as a full state document."""
    if not isinstance(players, int) or not 2 <= players <= 4:
        raise StateError("/players", "2, 3 or 4 players")
    if not is_strict_int(seed) or not 0 <= seed < SEEDS:
        raise StateError("/seed", "the seed is an integer in 0..2^63-1")
    counts = variant_counts(variant, data)
    rnd = random.Random(seed)
    start = [k for k in data.kinds if k.deck == "start"]
    rnd.shuffle(start)
    dealt = start[: start_cards_dealt(players)]
    seats = []
    for p in range(players):
        seats.append({
            "resources": {r: 3 for r in RESOURCES},
            "caravans": [["patriarch", dealt[p * 3 + c].slug] for c in range(3)],
            "contracts": [],
            "last_scored": -1,
        })
    first = min(range(len(dealt)), key=lambda i: dealt[i].rank) // 3
    standard = [k.slug for k in data.kinds if k.deck == "standard" for _ in range(k.copies)]
    standard += [data.kinds[k].slug for k in sorted(counts) for _ in range(counts[k])]
    special = [k.slug for k in data.kinds if k.deck == "special" for _ in range(k.copies)]
    contracts = [c.number for c in data.contracts]
    rnd.shuffle(standard)
    rnd.shuffle(special)
    rnd.shuffle(contracts)
    return {
        "schema": SCHEMA_ID,
        "players": players,
        "variant": variant_json(counts, data),
        "turn_limit": turn_limit,
        "start_player": first,
        "turn_player": first,
        "turn": 0,
        "end_triggered": False,
        "game_over": False,
        "observer": None,
        "seats": seats,
        "display": contracts[:4],
        "discard": [],
        "removed": [],
        # the spare Patriarch waits for the Aristokratin; without her it goes back to the box
        "spare_patriarch": any(k.slug == "aristokratin" for k in dealt),
        "decks": {"standard": standard, "special": special, "contract": contracts[4:]},
        "pending": None,
        "rng": rnd.getrandbits(63) | 1,
    }
