"""Bots: random, greedy, SO-ISMCTS (compiled hot loop), difficulty levels.

The search (`bots/ismcts.py`) and Kashgar's search game for it (`bots/kashgar_eval.py`) come in two
builds, as the engine does: compiled (`bots.ismcts_c`, `bots.kashgar_eval_c`: the same sources) or
interpreted. The engine makes the one choice between them (`engine_ext.COMPILED`: compiled unless
KASHGAR_NO_EXTENSIONS=1 is set or it is not built) and the bots follow it: a state of the compiled
engine is searched by the compiled build, a state of the interpreted engine by the interpreted one
(`build_for(state)`); another game's state by this process's build (`COMPILED`: the engine's
choice, when the compiled search is built too).
`make_bot(spec)` builds any bot from a short text spec (see `bots.levels.make_bot`).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from types import ModuleType
from typing import Any, NamedTuple

import engine_ext

__all__ = ["COMPILED", "Build", "build_for", "engine_build", "load_build", "make_bot"]

_ENGINE_BUILDS = {"engine_ext.core_c": True, "engine_ext.core": False}


class Build(NamedTuple):
    """One build of the search: the tree and loop (`search`), Kashgar's search game (`kashgar`)."""

    compiled: bool
    search: ModuleType
    kashgar: ModuleType


@lru_cache(maxsize=2)
def load_build(compiled: bool) -> Build:
    """The compiled build (ImportError when it is not built) or the interpreted one."""
    if not compiled:
        return Build(False, importlib.import_module("bots.ismcts"), importlib.import_module("bots.kashgar_eval"))
    mods = [importlib.import_module(name) for name in ("bots.ismcts_c", "bots.kashgar_eval_c")]
    for mod in mods:
        if not (mod.__file__ or "").endswith((".so", ".pyd")):
            raise ImportError(f"{mod.__name__} is not compiled (python setup.py build_ext --inplace)")
    return Build(True, mods[0], mods[1])


def _compiled_search_built() -> bool:
    try:
        load_build(True)
    except (ImportError, ValueError):  # not built, or built against another build of the engine
        return False
    return True


COMPILED: bool = engine_ext.COMPILED and _compiled_search_built()  # the engine's choice (one place decides)


def engine_build(st: Any) -> bool | None:
    """Whether `st` is a state of the compiled engine (True), of the interpreted one (False), or
    not an engine state (None: another game's)."""
    return _ENGINE_BUILDS.get(type(st).__module__)


def build_for(st: Any = None) -> Build:
    """The search build for state `st`: that of its engine build (a compiled engine state needs
    the compiled search), or this process's (`COMPILED`) for other games' states and for None."""
    build = engine_build(st)
    return load_build(COMPILED if build is None else build)


def make_bot(spec: str, **overrides: Any) -> Any:
    """A bot from a spec such as `random`, `greedy`, `ismcts:iterations=500`, `level:expert`."""
    from bots.levels import make_bot as _make

    return _make(spec, **overrides)
