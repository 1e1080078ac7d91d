"""GET /levels: the difficulty presets."""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify

from .. import levels as served
from .. import search
from ..models import LevelsResponse
from ..openapi import operation
from .common import settings

bp = Blueprint("levels", __name__)


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
    gives neither a level nor a budget; each says whether mode auto answers it asynchronously (a
    job), in how many root-parallel parts, and what a decision costs in core-seconds."""
    cfg = settings()
    return jsonify(
        served.finite({"levels": [_served(lv, cfg) for lv in served.levels()],
                       "default": served.default_level(cfg.default_level)})
    )


def _served(level: dict[str, Any], cfg: Any) -> dict[str, Any]:
    iterations, time_ms = served.level_budget(str(level["name"]))
    asynchronous = not search.fits_sync(iterations, time_ms, cfg)
    parts = search.default_parallel(iterations, time_ms, cfg, asynchronous, "embedded")
    return {**level, "asynchronous": asynchronous, "parts": parts}
