"""Kashgar rules engine.

`engine_ext.core` is the one source of the rules; the build compiles the same file as
`engine_ext.core_c`. This module picks the compiled core unless `KASHGAR_NO_EXTENSIONS` is
set or the extension is missing (then it warns once), and offers the Python API.
"""

from __future__ import annotations

import importlib
import os
import warnings
from functools import lru_cache
from types import ModuleType
from typing import Any

from engine_ext import carddata
from engine_ext.carddata import CardData, CardDataError
from engine_ext.decisions import Decision, DecisionError
from engine_ext.document.deal import DRAWN_SEEDS, SEEDS, random_seed
from engine_ext.document.schema import StateError, state_schema, validate_schema
from engine_ext.game import Engine, Game, IllegalDecision

__all__ = [
    "COMPILED", "DRAWN_SEEDS", "SEEDS", "CardData", "CardDataError", "Decision", "DecisionError", "Engine", "Game",
    "IllegalDecision", "StateError", "cards", "compiled_available", "from_json", "get_engine",
    "load_core", "new_game", "random_seed", "state_schema", "validate",
]


def load_core(compiled: bool) -> ModuleType:
    """The core module of one build: `core_c` (compiled) or `core` (interpreted)."""
    if not compiled:
        from engine_ext import core
        core.COMPILED = False  # type: ignore[attr-defined]
        return core
    mod = importlib.import_module("engine_ext.core_c")
    if not (mod.__file__ or "").endswith((".so", ".pyd")):
        raise ImportError("engine_ext.core_c is not compiled")
    mod.COMPILED = True  # type: ignore[attr-defined]
    return mod


@lru_cache(maxsize=1)
def compiled_available() -> bool:
    try:
        load_core(True)
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def _default_compiled() -> bool:
    if os.environ.get("KASHGAR_NO_EXTENSIONS"):
        return False
    if not compiled_available():
        warnings.warn("kashgar: the compiled engine is not built; running interpreted (slow)", stacklevel=3)
        return False
    return True


@lru_cache(maxsize=4)
def get_engine(compiled: bool | None = None, data: CardData | None = None) -> Engine:
    """An Engine on the compiled or interpreted core (None: the default for this process)."""
    use = _default_compiled() if compiled is None else compiled
    return Engine(load_core(use), data or carddata.default())


COMPILED: bool = _default_compiled()  # (the card data is read at first use: a wrong KASHGAR_CARDS is its error)


def new_game(players: int = 2, seed: int = 0, variant: Any = None, turn_limit: int = 400) -> Game:
    return get_engine().new_game(players, seed, variant, turn_limit)


def from_json(doc: Any) -> Game:
    return get_engine().from_json(doc)


def validate(doc: Any) -> None:
    """Raise StateError (with a JSON pointer) unless `doc` is a loadable state."""
    get_engine().from_json(doc)


def cards() -> dict[str, Any]:
    return get_engine().cards()


__all__ += ["validate_schema"]
