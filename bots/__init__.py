"""Bots: random, greedy, SO-ISMCTS (compiled hot loop), the determinized baseline, difficulty levels.

`load_search(compiled=None)` gives the search core module: `bots.ismcts_c` (the same source as
`bots/ismcts.py`, compiled) unless `KASHGAR_NO_EXTENSIONS=1` is set or it is not built (or is
older than its source or than the compiled engine: then it warns and runs interpreted).
`matched_search(state)` gives a core and the state it runs on, of one engine build.
`make_bot(spec)` builds any bot from a short text spec (see `bots.levels.make_bot`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["load_search", "search_for_state", "matched_search", "search_compiled", "make_bot", "SEARCH_COMPILED"]


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
        except StaleSearch as exc:  # the compiled engine is in use: say why its search is not
            warnings.warn(f"kashgar: {exc}; the search runs interpreted (slow)", stacklevel=2)
            return importlib.import_module("bots.ismcts")
        except (ImportError, ValueError):  # not built, or built against another engine build
            return importlib.import_module("bots.ismcts")
    if compiled:
        return _compiled()
    return importlib.import_module("bots.ismcts")


def search_for_state(st: Any) -> ModuleType:
    """The search core of `st`'s own engine build (compiled states need the compiled core)."""
    return load_search(type(st).__module__.endswith("_c"))


def matched_search(st: Any, compiled: bool | None = None) -> tuple[ModuleType, Any]:
    """A search core (`load_search(compiled)`; None: the one of `st`'s engine build, if usable) and
    the state it searches: `st`, or for a core of the other engine build, a copy of `st` in that
    build. A core runs its whole algorithm (macro, turn and greedy rollouts, observe) only on
    states of its own build; on others it ran a generic loop without them, so mixing builds
    silently changed the answer. Other games' states need no engine build: `st` itself."""
    build = type(st).__module__
    if build not in ("engine_ext.core", "engine_ext.core_c"):
        return load_search(compiled), st
    state_compiled = build.endswith("_c")
    mod = load_search(compiled if compiled is not None else (None if state_compiled else False))
    mod_compiled = mod.__name__.endswith("_c")
    if mod_compiled == state_compiled:
        return mod, st
    import engine_ext  # the default card data: the only one engine states are built with

    engine = engine_ext.get_engine(mod_compiled)
    twin = engine.core.State(engine.rules)
    twin.load(st.export(), st.get_rng())
    return mod, twin


class StaleSearch(ImportError):
    """The compiled search exists but is older than what it was built from."""


_CHECKED: dict[int, ModuleType | ImportError] = {}  # pid -> the compiled search, or why not


def _compiled() -> ModuleType:
    """The compiled search, checked once per process (every decision asks: the checks stat files);
    ImportError (StaleSearch for a stale build) when it cannot be used."""
    found = _CHECKED.get(os.getpid())
    if found is None:
        try:
            found = _check_compiled()
        except ImportError as exc:
            found = exc
        _CHECKED[os.getpid()] = found
    if isinstance(found, ImportError):
        raise found
    return found


def _check_compiled() -> ModuleType:
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
    # A search built before its source was edited would silently play the old algorithm.
    built = os.path.getmtime(mine) + 5  # (files of one build or install: seconds apart)
    if os.path.getmtime(core_c.__file__) > built:
        raise StaleSearch("bots.ismcts_c is older than engine_ext.core_c: rebuild "
                          "(python setup.py build_ext --inplace)")
    sources = [Path(__file__).with_name(n) for n in ("ismcts.py", "ismcts_c.pxd")]
    if any(src.exists() and os.path.getmtime(src) > built for src in sources):
        raise StaleSearch("bots.ismcts_c is older than its source bots/ismcts.py: rebuild "
                          "(python setup.py build_ext --inplace)")
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
