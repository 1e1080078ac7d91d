"""A position to search: a game loaded and checked at a decision point, and the level that searches it.

The service reads a request into one `Position` and hands it to `bots.suggest`; every part of a
search, the merge of the parts and the calibration of the answer read the same position, so
nothing is loaded or checked twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

from bots.base import position_key
from bots.levels import Level, get_level, own_default


@dataclass(frozen=True)
class Position:
    """`game` (an `engine_ext.Game`, full or a seat's view) where its player to move chooses a
    decision it can see, and `level` (a `bots.levels.Level`), whose search settings and calibration
    apply; a budget given with the search overrides the level's own."""

    game: Any
    level: Level

    @classmethod
    def of(cls, game: Any, level: str | None = None) -> Position:
        """The position of `game` for `level` (None: the level file's default, `own_default`).
        `engine_ext.game.NoDecision` (a StateError with a `code`) when the game is over or its
        player to move chooses among cards the view does not show; KeyError for an unknown level."""
        game.check_decision_point()
        return cls(game, get_level(level or own_default()))

    @property
    def players(self) -> int:
        return int(self.game.state.players)

    @cached_property
    def key(self) -> int:
        """`position_key` of the position (the final choice's draw), worked out once."""
        return position_key(self.game.state)
