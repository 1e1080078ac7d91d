"""Bots: random, greedy, SO-ISMCTS (compiled hot loop), the determinized baseline, difficulty levels.

`load_search(compiled=None)` gives the search core module: `bots.ismcts_c` (the same source as
`bots/ismcts.py`, compiled) unless `KASHGAR_NO_EXTENSIONS=1` is set or it is not built.
`make_bot(spec)` builds any bot from a short text spec (see `bots.levels.make_bot`).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import Any

__all__ = ["load_search", "search_compiled", "make_bot", "SEARCH_COMPILED"]


def load_search(compiled: bool | None = None) -> ModuleType:
    """The ISMCTS core: compiled (`bots.ismcts_c`) or interpreted (`bots.ismcts`).

    compiled=None: the compiled one unless KASHGAR_NO_EXTENSIONS is set or it is missing;
    compiled=True: the compiled one or ImportError.
    """
    if compiled is None:
        if os.environ.get("KASHGAR_NO_EXTENSIONS"):
            return importlib.import_module("bots.ismcts")
        try:
            return _compiled()
        except ImportError:
            return importlib.import_module("bots.ismcts")
    if compiled:
        return _compiled()
    return importlib.import_module("bots.ismcts")


def _compiled() -> ModuleType:
    mod = importlib.import_module("bots.ismcts_c")
    if not getattr(mod, "__file__", "").endswith((".so", ".pyd")):
        raise ImportError("bots.ismcts_c is not compiled")
    return mod


def search_compiled() -> bool:
    """Whether the default search core is the compiled one."""
    return load_search().__name__.endswith("_c")


SEARCH_COMPILED = search_compiled()


def make_bot(spec: str, **overrides: Any) -> Any:
    """A bot from a spec such as `random`, `greedy`, `ismcts:iterations=500`, `level:expert`."""
    from bots.levels import make_bot as _make

    return _make(spec, **overrides)
