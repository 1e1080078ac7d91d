"""The difficulty levels as the service serves them (`bots.suggest.list_levels`): their names, the
default, a level's budget; and `finite`, the JSON-safe copy of what `GET /levels` and `GET /cards`
answer."""

from __future__ import annotations

import functools
import math
from typing import Any

from bots import suggest as bots_suggest


@functools.lru_cache(maxsize=1)
def levels() -> list[dict[str, Any]]:
    return [dict(level) for level in bots_suggest.list_levels()]


def level_names() -> list[str]:
    return [str(level["name"]) for level in levels()]


def default_level(configured: str | None) -> str | None:
    """The configured default level, else the one the bots mark as default, else the first."""
    names = level_names()
    if configured in names:
        return configured
    for level in levels():
        if level.get("default") is True:
            return str(level["name"])
    return names[0] if names else None


def level_budget(name: str) -> tuple[int | None, int | None]:
    """(iterations, time_ms) of a level preset."""
    for level in levels():
        if level.get("name") == name:
            budget = level.get("budget", level)
            if isinstance(budget, dict):
                it = budget.get("iterations")
                ms = budget.get("time_ms", budget.get("ms"))
                return (int(it) if it else None, int(ms) if ms else None)
            return (None, None)
    raise KeyError(name)


def finite(obj: Any) -> Any:
    """JSON-safe copy: NaN and infinities become null."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj
