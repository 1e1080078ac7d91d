"""The seeds the service draws: unguessable, and exact in JavaScript."""

from __future__ import annotations

import secrets

import engine_ext

#: Seeds the service draws are below this: every integer up to it is exact as a JavaScript
#: number (a double), so a record that passed through a browser still names its deal.
DRAWN_SEEDS = 1 << 53


def random_seed() -> int:
    """An unguessable deal seed (a view does not show the deck order, but a small or default seed
    can be found from the public deal, and with it every deck), exact in JavaScript: 53 bits."""
    return secrets.randbelow(min(DRAWN_SEEDS, engine_ext.SEEDS))
