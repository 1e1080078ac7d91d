"""`elo` of a search request: the level that searches this decision, drawn between the two levels
around the Elo asked (`bots.strength`), from the request's seed and the position."""

from __future__ import annotations

import dataclasses
from typing import Any

from bots.position import Position
from bots.strength import EloOutOfRange, mix_for

from . import states
from .errors import APIError


def elo_position(elo: float, level: str | None, budget_given: bool, state: Any, seed: int) -> tuple[str, Position]:
    """(the level drawn for this decision, the position read from `state` for it); 422 naming
    `/elo` when a level or a budget is given with it, or it is outside the ladder's range (the
    message says the range), and naming the state's field when the state is wrong."""
    if level is not None:
        raise APIError(422, "level_and_elo", "give a level or an elo, not both", "/elo")
    if budget_given:
        raise APIError(422, "budget_and_elo", "an elo plays the levels' own budgets: give it without "
                       "iterations or time_ms", "/elo")
    try:
        mix = mix_for(elo)
    except EloOutOfRange as exc:
        raise APIError(422, "elo_out_of_range", str(exc), "/elo") from None
    position = states.position_of(state, mix.lower.name, "/state")
    chosen = mix.draw(seed, position.key)
    if chosen.name != mix.lower.name:
        position = dataclasses.replace(position, level=chosen)
    return chosen.name, position
