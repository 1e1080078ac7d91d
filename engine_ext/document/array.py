"""The core's rules on the state array of a document being read or written.

The JSON layer keeps a state as the flat list `State.d` is (`load.load_doc` builds one,
`dump.dump_doc` reads one). Where it needs a rule (a seat's VP, what a card counts as, where a
deck's cards lie, when a pick waits, when the game ends, what a seat sees of a draw) it asks the
interpreted core's `State` over that very list (`state_over`) instead of writing the rule again.
"""

from __future__ import annotations

from typing import Any

from engine_ext import carddata
from engine_ext import core as L
from engine_ext.carddata import CardData


def state_over(d: list[int], data: CardData | None = None) -> L.State:
    """The interpreted core's state whose array is `d` itself (not a copy: what its methods change,
    `d` holds), with the rules of `data` (default: the shipped card data)."""
    st: L.State = L.State.__new__(L.State)  # as State(rules), with `d` for its own array
    st.R = (data or carddata.default()).core_rules
    st.rng = 1
    st.nlegal = 0
    st.d = d
    st.legal_buf = [0] * L.LEGAL_CAP
    return st


def private_draw(d: list[int]) -> bool:
    """Whether the pending step of a state array `d` chooses among cards drawn for the turn
    player's eyes only (`core.draw_is_private`)."""
    return bool(L.draw_is_private(d))


def drawn_hidden_from(st: Any, observer: int | None) -> bool:
    """Whether the cards drawn for the pending step of core state `st` (either build) are hidden
    from `observer`: a private draw (`State.private_draw`) of another seat's turn."""
    return observer is not None and observer != st.turn_player() and bool(st.private_draw())
