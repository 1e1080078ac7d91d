"""Where an action's program can stop for a decision, and which of the interpreter's registers
mean something there: derived from the compiled card tables (`CardData.tables`), for the JSON layer.

The core (`State._run`) runs an action's effect steps in order; only some opcodes stop it with a
pending decision (`P_*`), and each pending decision reads only some registers. A loaded `pending`
must be such a stop, with the registers it reads in the ranges the engine itself produces; the
others are left over from earlier steps and turns, so a document neither writes nor reads them
(the same position gives the same document however it was reached).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine_ext import core as L
from engine_ext import steps as step_table
from engine_ext.carddata import CardData

Step = tuple[int, int, int, int]  # opcode, a, b, c

# the waits that hold drawn cards (limbo), and the deck they come from (None: the step's own `a`)
DRAWS: dict[int, int | None] = {L.P_KEEP: None, L.P_WHEAT: L.DECK_CONTRACT, L.P_CFREE: L.DECK_CONTRACT}

# a register's name in a document, its slot in the state array and its value where it means nothing
# (`route_fronts`' router registers are "hirte_next" and "hirte_left" there)
REGISTERS: dict[str, tuple[int, int]] = {
    "reg": (L.S_REG, -1), "reg2": (L.S_REG2, -1), "n": (L.S_N, 0), "last": (L.S_LAST, 0),
    "flags": (L.S_FLAGS, 0), "hirte_left": (L.S_ROUTERS_LEFT, 0), "hirte_next": (L.S_ROUTER, 0),
}
# the registers each pending decision reads (generating its decisions or applying one); `reg`
# besides where a later step reads `$` (see `live_registers`)
READS: dict[int, tuple[str, ...]] = {
    L.P_CHOOSE: ("n", "last", "flags"), L.P_KEEP: (), L.P_FULFIL: ("flags",), L.P_CINNAMON: ("n", "last"),
    L.P_WHEAT: (), L.P_CFREE: ("n", "last"), L.P_REMOVE: (), L.P_REMOVE_ANY: ("n",), L.P_REMOVE_PAT: (),
    L.P_ROUTE: ("hirte_next", "hirte_left"), L.P_TAKE: (), L.P_TRADE_PAY: (), L.P_TRADE: ("n", "last"),
    L.P_SETDIST: ("reg", "reg2", "n", "last"),
}


@dataclass(frozen=True)
class Stop:
    """One step of one action, as the JSON layer needs it."""

    steps: tuple[Step, ...]  # the whole action
    pc: int

    @property
    def op(self) -> Step:
        return self.steps[self.pc]

    def waits(self) -> tuple[int, ...]:
        """The pending decisions this step can stop with (`engine_ext.steps.waits`)."""
        return step_table.waits(*self.op)

    def draws_from(self, wait: int) -> int | None:
        """The deck the drawn cards of `wait` come from (None: it holds none)."""
        if wait not in DRAWS:
            return None
        deck = DRAWS[wait]
        return self.op[1] if deck is None else deck

    def reads_reg_later(self) -> bool:
        """Whether a later step reads `$` (a resource step, or a choice `not $`)."""
        return any(step_table.reads_reg(*step) for step in self.steps[self.pc + 1:])

    def live_registers(self, wait: int) -> tuple[str, ...]:
        """The registers that mean something while waiting for `wait` here."""
        names = READS.get(wait, ())
        if "reg" not in names and (self.reads_reg_later() or (wait == L.P_CHOOSE and self.op[3])):
            names = ("reg",) + names
        return names

    def reg_values(self) -> frozenset[int]:
        """What REG can hold when this step runs: -1 from the action's start, else what the last
        choice or `set_distinct` before it left there."""
        values = frozenset({-1})
        for op, a, _b, c in self.steps[:self.pc]:
            if op == L.OP_CHOOSE:
                values = frozenset(r for r in range(L.NRES) if (a >> r) & 1)
            elif op == L.OP_SET_DISTINCT:
                values = frozenset({c})
        return values

    def can_take_out(self) -> bool:
        """Whether a step so far can have taken the acting card out of play (`remove_any`)."""
        return any(op == L.OP_REMOVE_ANY for op, *_ in self.steps[:self.pc + 1])

    def can_move(self) -> bool:
        """Whether a step so far can have moved the acting card to another caravan (the Hirte)."""
        return any(op == L.OP_ROUTE_FRONTS for op, *_ in self.steps[:self.pc + 1])


def stop(data: CardData, act: int, pc: int) -> Stop:
    """Step `pc` of action `act` (an index of the card tables' actions)."""
    t = data.tables
    start, n = t["a_start"][act], t["a_len"][act]
    ops = t["ops"]
    steps = tuple((ops[i * 4], ops[i * 4 + 1], ops[i * 4 + 2], ops[i * 4 + 3]) for i in range(start, start + n))
    return Stop(steps, pc)
