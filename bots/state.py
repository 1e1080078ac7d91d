"""The game state the bots accept: what they call on it.

A bot plays a *core state*: the engine's `State` (either build, `engine_ext.core` or
`engine_ext.core_c`) or another game's state with the same methods (`lab.toygame.ToyState`), or a
facade that holds one in `.state` (`engine_ext.Game`). These protocols say so for the type checker;
nothing checks them at run time.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["CoreState", "HasState", "GameOrState"]


class CoreState(Protocol):
    """A position of a game of 2 to 4 seats that the bots can search: who decides, what is legal
    (as int codes), what a decision leads to, and the worlds the player to move thinks possible."""

    @property
    def players(self) -> int:
        """The number of seats."""
        ...

    def current_player(self) -> int:
        """The seat that decides now."""
        ...

    def is_terminal(self) -> bool: ...

    def winner(self) -> int:
        """The seat that won (the game is over)."""
        ...

    def vp(self, p: int) -> int:
        """Seat `p`'s victory points."""
        ...

    def gen_legal(self) -> int:
        """How many decisions are legal now (into the state's own buffer)."""
        ...

    def legal_codes(self) -> list[int]: ...

    def apply_unchecked(self, code: int) -> None:
        """Play decision `code`, known to be legal."""
        ...

    def clone(self) -> CoreState: ...

    def determinize(self, observer: int, seed: int) -> CoreState:
        """A full state sampled from what seat `observer` knows of this one."""
        ...


class HasState(Protocol):
    """A facade over a core state (`engine_ext.Game`)."""

    @property
    def state(self) -> CoreState: ...


GameOrState = CoreState | HasState  # what `Bot.analyse` takes
