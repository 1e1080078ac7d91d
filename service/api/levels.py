"""GET /levels: the difficulty presets."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from .. import engine
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
    gives neither a level nor a budget."""
    return jsonify(
        engine.finite({"levels": engine.levels(), "default": engine.default_level(settings().default_level)})
    )
