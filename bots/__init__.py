"""Bots: random, greedy, SO-ISMCTS (compiled hot loop), the determinized baseline, difficulty levels.

`load_search(compiled=None)` gives the search core module: `bots.ismcts_c` (the same source as
`bots/ismcts.py`, compiled) unless `KASHGAR_NO_EXTENSIONS=1` is set or it is not built.
`make_bot(spec)` builds any bot from a short text spec (see `bots.levels.make_bot`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from types import ModuleType
from typing import Any

__all__ = ["load_search", "search_for_state", "search_compiled", "make_bot", "SEARCH_COMPILED"]


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
        except (ImportError, ValueError):  # not built, or built against another engine build
            return importlib.import_module("bots.ismcts")
    if compiled:
        return _compiled()
    return importlib.import_module("bots.ismcts")


def search_for_state(st: Any) -> ModuleType:
    """The search core of `st`'s own engine build (compiled states need the compiled core)."""
    return load_search(type(st).__module__.endswith("_c"))


def _compiled() -> ModuleType:
    try:
        import engine_ext.core_c as core_c  # the compiled search reads compiled engine states
    except Exception as exc:  # noqa: BLE001
        raise ImportError(f"engine_ext.core_c unavailable: {exc}") from exc
    if not getattr(core_c, "__file__", "").endswith((".so", ".pyd")):
        raise ImportError("engine_ext.core_c is not compiled, so bots.ismcts_c cannot load")
    mine = _spec_origin("bots.ismcts_c")
    if not mine.endswith((".so", ".pyd")):
        raise ImportError("bots.ismcts_c is not compiled")
    # The compiled search reads the engine's C struct: a search built before the engine was
    # rebuilt may not match it (a crash, not an error), so such a stale build is not used.
    if os.path.getmtime(core_c.__file__) > os.path.getmtime(mine) + 5:
        raise ImportError("bots.ismcts_c is older than engine_ext.core_c: rebuild "
                          "(python setup.py build_ext)")
    return importlib.import_module("bots.ismcts_c")


def _spec_origin(name: str) -> str:
    spec = importlib.util.find_spec(name)
    return str(spec.origin) if spec is not None and spec.origin else ""


def search_compiled() -> bool:
    """Whether the default search core is the compiled one."""
    return load_search().__name__.endswith("_c")


SEARCH_COMPILED = search_compiled()


def make_bot(spec: str, **overrides: Any) -> Any:
    """A bot from a spec such as `random`, `greedy`, `ismcts:iterations=500`, `level:expert`."""
    from bots.levels import make_bot as _make

    return _make(spec, **overrides)
