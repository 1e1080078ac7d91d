"""GET /levels: the difficulty presets, the default in use and the range of `elo`."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify
from flask.blueprints import BlueprintSetupState

from bots import levels as bot_levels
from bots import strength

from .. import levels as serving
from .. import search
from ..models import LevelsResponse
from ..openapi import operation
from .common import settings

bp = Blueprint("levels", __name__)


@bp.record_once
def _check_default(state: BlueprintSetupState) -> None:
    """Refuse to start with a level file that does not hold the default level (the configured
    KASHGAR_DEFAULT_LEVEL, else the file's own `default`, else `expert`): a request without a level
    would otherwise be answered by another level, silently. ValueError naming the file and the fix."""
    check_default(state.app.config["KASHGAR"].default_level)


def check_default(configured: str | None) -> str:
    """The default level in use (`bots.levels.default_level`); ValueError when there is none."""
    return bot_levels.default_level(configured)


def levels_answer(cfg: Any, served: bool = True) -> dict[str, Any]:
    """What GET /levels (and, with `served` False, without how the server runs each level, the stdio
    engine's `levels`) answers: the levels, each marked `default` if it is the one a request without
    a level gets, that level's name, and the range of `elo` (null on a ladder with fewer than two
    measured levels)."""
    default = serving.default_level(cfg.default_level)
    span = strength.elo_range()
    return dict(serving.finite({
        "levels": [_served(lv, cfg, default) if served else {**lv, "default": lv["name"] == default}
                   for lv in serving.levels()],
        "default": default,
        "elo": None if span is None else {"min": span[0], "max": span[1]},
    }))


@bp.get("/levels")
@operation(
    "/levels",
    "get",
    summary="Difficulty levels",
    tag="search",
    responses={200: ("The named presets (budget, policy, exploration, temperature).", LevelsResponse)},
)
def levels() -> Response:
    """The levels a /suggest request may name, weakest first, with the level used when a request
    gives neither a level nor a budget (`default`, and `default: true` on that level) and the range
    of Elo a request may ask for instead of a level (`elo`); each says whether mode auto answers it
    asynchronously (a job), in how many root-parallel parts, and what a decision costs in core-seconds."""
    return jsonify(levels_answer(settings()))


def _served(level: dict[str, Any], cfg: Any, default: str | None) -> dict[str, Any]:
    iterations, time_ms = serving.level_budget(str(level["name"]))
    asynchronous = not search.fits_sync(iterations, time_ms, cfg)
    parts = search.default_parallel(iterations, time_ms, cfg, asynchronous, "embedded")
    return {**level, "default": level["name"] == default, "asynchronous": asynchronous, "parts": parts}
