"""The step language of the card programs, written down once: one row per step.

Every action of a card in `data/cards.toml` is a list of steps run in order, each one string: the
step's name, then its arguments (`"draw standard 2"`, `"choose spice min 4"`, `"inc $ 3"`). The
table below gives, per step, its opcode, its arguments, what it does, and its words in a game
(`says`). Everything else that knows the language is derived from it:

* `parse` / `compile_step` (used by `carddata`): a step's text to the four integers the core runs
  (opcode, a, b, c; `Rules.ops`);
* `waits` and `reads_reg` (used by `program`): where an action's program stops for a decision,
  and which steps read the resource chosen last (`$`);
* the words of the API, `kashgar play` and the web page (`engine_ext/words.py`), from `says` and the
  arguments' words;
* `reference()`: the language as text (`python -c 'import engine_ext.steps as s; print(s.reference())'`).

The core (`engine_ext/core.py`, run interpreted and compiled) keeps its own C constants `OP_<STEP>`
and `F_<MODIFIER>`; `check_core` says where they differ from this table (`carddata` calls it on
import, so a mismatch stops the engine from loading).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine_ext import core as C

RESOURCES = ("ginger", "cloves", "pepper", "anise", "cinnamon", "gold", "mules")
SPICES = RESOURCES[:5]
RES_INDEX = {name: i for i, name in enumerate(RESOURCES)}

# ---- argument kinds --------------------------------------------------------------------------
RESOURCE = "resource"  # a resource, or `$`: the resource chosen last (by `choose` or `set_distinct`)
NUMBER = "number"  # 0..9
AMOUNT = "amount"  # 0..9, or a count (COUNTS)
MASK = "mask"  # resources joined by `|`; `spice` is the five spices
DECK = "deck"  # a deck's name, of the step's `decks`
OPTION = "option"  # a literal word (or words) that may follow; sets `value` in its slot
FLAGS = "flags"  # any of the literal words of `flags`, each OR-ing its bit into the slot

KIND_WORDS = {
    RESOURCE: "a resource (ginger, cloves, pepper, anise, cinnamon, gold, mules), or $: the one chosen last",
    NUMBER: "a number 0..9",
    AMOUNT: "a number 0..9, or a count: " + ", ".join("N:" + k for k in ("contracts", "caravan", "patriarchs",
                                                                       "halfmules")),
    MASK: "resources joined by | (spice: any of the five spices), e.g. cinnamon|pepper, spice|gold",
}


@dataclass(frozen=True)
class Count:
    """An amount counted when the step runs (`N:<name>`)."""

    code: int  # the core's AMT_* (below zero)
    gain: str  # in a game's words, as an amount of a resource ({res})
    words: str  # in a game's words, as an amount of its own


COUNTS: dict[str, Count] = {
    "N:contracts": Count(C.AMT_CONTRACTS, "1 {res} per contract you hold", "1 per contract you hold"),
    "N:caravan": Count(C.AMT_CARAVAN, "1 {res} per card in this caravan", "1 per card in this caravan"),
    "N:patriarchs": Count(C.AMT_PATRIARCHS, "1 {res} per Patriarch at the front of a caravan",
                          "1 per Patriarch at the front of a caravan"),
    "N:halfmules": Count(C.AMT_HALFMULES, "half as many {res} as you have", "half as many as your mules"),
}
DECKS = {"standard": C.DECK_STANDARD, "special": C.DECK_SPECIAL}


@dataclass(frozen=True)
class Flag:
    """One word of a FLAGS argument."""

    word: str
    bit: int
    does: str  # what it changes
    says: str  # in a game's words
    waits: tuple[int, ...] = ()  # the decisions (P_*) it adds to the step's


@dataclass(frozen=True)
class Arg:
    """One argument of a step. `name` is how the syntax writes it (for an OPTION: its words)
    and the field `says` names it by (`field`, where the name is not an identifier)."""

    name: str
    kind: str
    slot: int  # 0, 1, 2: the opcode's a, b or c
    optional: bool = False
    keyword: str = ""  # written after this word (`min 4`)
    lo: int = 0  # the smallest number allowed (NUMBER)
    value: int = 1  # what an OPTION stores when given
    decks: tuple[str, ...] = ()  # the decks allowed (DECK)
    flags: tuple[Flag, ...] = ()  # the words allowed (FLAGS)
    says: str = ""  # an optional argument in words when given (`{}`: its value)
    absent: str = ""  # ... and when not given
    waits: tuple[int, ...] = ()  # the decisions (P_*) it adds to the step's when given
    reads_reg: bool = False  # an OPTION that reads `$`
    field_name: str = ""

    @property
    def field(self) -> str:
        return self.field_name or self.name

    def syntax(self) -> str:
        if self.kind == FLAGS:
            return " ".join(f"[{f.word}]" for f in self.flags)
        text = f"{self.keyword} {self.name}" if self.keyword else self.name
        return f"[{text}]" if self.optional else text


@dataclass(frozen=True)
class Step:
    """One step of the language."""

    name: str
    opcode: int  # the core's OP_<NAME>
    args: tuple[Arg, ...]
    does: str  # what it does (the reference for the card file)
    says: str  # in a game's words: a template over the arguments' fields (see engine_ext/words.py)
    waits: tuple[int, ...] = ()  # the decisions (P_*) it can stop the program with

    def syntax(self) -> str:
        return " ".join([self.name] + [a.syntax() for a in self.args])


R = Arg("R", RESOURCE, 0)


def _n(name: str, slot: int, kind: str = NUMBER) -> Arg:
    """A number (or, with AMOUNT, a count too) the step needs."""
    return Arg(name, kind, slot)


FULFIL_FLAGS = (
    Flag("free", 1, "without paying", "for free"),
    Flag("nomules", 2, "without the mules it needs", "without the mules it needs"),
    Flag("small", 4, "only a small contract", "a small one"),
    Flag("gold_for_spices", 8, "one gold for each spice missing", "gold may stand in for missing spices"),
    Flag("spices_for_cinnamon", 16, "its cinnamon paid with any spices, one each, chosen one at a time",
         "any spice may stand in for its cinnamon", (C.P_CINNAMON,)),
)

STEPS: tuple[Step, ...] = (
    Step("pay", 1, (R, _n("n", 1)),
         "pay n of R; an action whose literal costs the player cannot pay is not offered",
         "pay {n:gain}"),
    Step("inc", 2, (R, _n("n", 1, AMOUNT)),
         "gain n of R (spices and gold cap at 9, mules at 6)",
         "+{n:gain}"),
    Step("set", 3, (R, _n("n", 1)),
         "set R to exactly n",
         "set {R:it} to {n}"),
    Step("choose", 4, (Arg("MASK", MASK, 0),
                       Arg("k", NUMBER, 1, optional=True, keyword="min", says=" of which you have at least {}"),
                       Arg("not $", OPTION, 2, optional=True, says=" other than that", reads_reg=True,
                           field_name="not")),
         "the player picks one resource of MASK (with min k: one it has at least k of; with not $: not "
         "the one chosen last); it becomes $",
         "choose {MASK}{k}{not}", (C.P_CHOOSE,)),
    Step("draw", 5, (Arg("DECK", DECK, 0, decks=("standard", "special")), _n("k", 1, AMOUNT),
                     Arg("front", FLAGS, 2, optional=True, flags=(Flag("front", 1, "kept at the front",
                                                                       "at the front"),))),
         "draw k Standard or Special cards, keep 1 of them in this caravan (at the back; with front, at "
         "the front), the others go to the discard pile (Standard) or under their deck (Special)",
         "draw {k:cards} and keep one{front}", (C.P_KEEP,)),
    Step("fulfil", 6, (Arg("modifiers", FLAGS, 0, optional=True, flags=FULFIL_FLAGS),),
         "fulfil one face-up contract (the player may decline); the modifiers: "
         + "; ".join(f"{f.word}: {f.does}" for f in FULFIL_FLAGS),
         "fulfil a contract{modifiers}", (C.P_FULFIL,)),
    Step("contracts_wheat", 7, (_n("k", 0),),
         "draw k contracts, the player may fulfil free one wheat field among them, the rest go under the deck",
         "draw {k} contracts, fulfil a wheat field among them for free", (C.P_WHEAT,)),
    Step("contracts_free", 8, (_n("k", 0), Arg("n", NUMBER, 1, optional=True, lo=1,
                                               says="up to {} small or special ones among them",
                                               absent="the small and special ones", waits=(C.P_CFREE,))),
         "draw k contracts, fulfil free the small and special ones (no payout), the rest go under the deck; "
         "with n, at most n of them: when n or more could be, the player picks n (in increasing contract "
         "number; asked even when exactly n could be, as the others must not learn what went under), the "
         "others go under the deck too",
         "draw {k} contracts, fulfil {n} for free"),
    Step("refresh_display", 9, (),
         "the face-up contracts go under the deck, 4 new ones are revealed",
         "replace the face-up contracts"),
    Step("opp_inc", 10, (R, _n("n", 1)),
         "every opponent gains n of R",
         "every opponent: +{n:gain}"),
    Step("opp_set", 11, (R, _n("n", 1)),
         "every opponent's R is set to n",
         "every opponent: set {R} to {n}"),
    Step("opp_dec", 12, (R, _n("n", 1)),
         "every opponent loses n of R",
         "every opponent: -{n:gain}"),
    Step("opp_dec_if_ge", 13, (R, _n("t", 1), _n("n", 2)),
         "every opponent with t or more of R loses n of it",
         "every opponent with {t} {R} or more: -{n} {R}"),
    Step("if_opp_zero", 14, (R,),
         "the next step only happens if some opponent has 0 of R",
         "then, if an opponent has no {R}:"),
    Step("steal", 15, (R, _n("n", 1)),
         "every opponent with any R loses n, the player gains n per opponent who lost",
         "take {n} {R} from every opponent who has any"),
    Step("raise_to_max_opp", 16, (R,),
         "raise R to the highest value any opponent has (never lowers)",
         "raise {R:it} to the most any opponent has"),
    Step("remove_this", 17, (),
         "the player may remove 1 other card of this caravan",
         "you may remove another card of this caravan", (C.P_REMOVE,)),
    Step("remove_any", 18, (_n("k", 0),),
         "the player may remove up to k cards of their caravans, one at a time",
         "remove up to {k} cards of your caravans", (C.P_REMOVE_ANY,)),
    Step("remove_patriarch", 19, (),
         "remove the Patriarch or Matriarch of this caravan",
         "remove this caravan's Patriarch or Matriarch", (C.P_REMOVE_PAT,)),
    Step("turn_self", 20, (),
         "turn this card over (a Patriarch becomes the Matriarch and back)",
         "turn this card over"),
    Step("turn_opponents", 21, (),
         "the opponents turn their Patriarchs and Matriarchs over",
         "the opponents turn their Patriarchs and Matriarchs over"),
    Step("patriarchs_front", 22, (),
         "every face-up Patriarch of every player goes to the front of its caravan",
         "every Patriarch goes to the front of its caravan"),
    Step("route_fronts", 23, (),
         "every player in turn, from this one, moves the front card of each of their non-empty caravans to "
         "the back of another of them (several may go to the same one, in the order the player picks)",
         "every player moves each caravan's front card to the back of another of their caravans "
         "(several may go to the same one)", (C.P_ROUTE,)),
    Step("take_discard", 24, (),
         "take a card of the discard pile to the back of this caravan",
         "take a card from the discard pile", (C.P_TAKE,)),
    Step("new_caravan", 25, (),
         "the spare Patriarch starts a new caravan of the player's (at most 4)",
         "start a new caravan"),
    Step("shuffle", 26, (Arg("DECK", DECK, 0, decks=("special",)),),
         "shuffle the deck (only the special deck)",
         "shuffle the {DECK} deck"),
    Step("trade", 27, (),
         f"pay k >= 1 gold; for each gold, +{C.TRADE_SPICE} of a spice or +{C.TRADE_MULES} mules, "
         "chosen one at a time",
         f"pay gold: for each, +{C.TRADE_SPICE} of a spice or +{C.TRADE_MULES} mules", (C.P_TRADE_PAY, C.P_TRADE)),
    Step("set_distinct", 28, (Arg("MASK", MASK, 0), _n("c", 1), _n("v", 2)),
         "set c different resources of MASK to v, chosen one at a time",
         "set {c} different {MASK:plural} to {v} each", (C.P_SETDIST,)),
)
BY_NAME: dict[str, Step] = {s.name: s for s in STEPS}
BY_OPCODE: dict[int, Step] = {s.opcode: s for s in STEPS}


class StepError(ValueError):
    """A step's text that is not a step of the language."""


@dataclass(frozen=True)
class Parsed:
    """A step's text read against the table: its row and each argument as written (a FLAGS
    argument: its words in the order written; an OPTION: True; None where not given)."""

    step: Step
    given: dict[str, Any] = field(default_factory=dict)

    def code(self) -> tuple[int, int, int, int]:
        """The four integers the core runs: opcode, a, b, c."""
        slots = [0, 0, 0]
        for arg in self.step.args:
            v = self.given.get(arg.field)
            if v is not None:
                slots[arg.slot] |= _encode(arg, v)
        return (self.step.opcode, slots[0], slots[1], slots[2])


def _encode(arg: Arg, v: Any) -> int:
    if arg.kind == RESOURCE:
        return C.REG if v == "$" else RES_INDEX[v]
    if arg.kind in (NUMBER, AMOUNT):
        return COUNTS[v].code if v in COUNTS else int(v)
    if arg.kind == MASK:
        m = 0
        for part in v.split("|"):
            m |= C.SPICE_MASK if part == "spice" else 1 << RES_INDEX[part]
        return m
    if arg.kind == DECK:
        return DECKS[v]
    if arg.kind == OPTION:
        return arg.value
    bits = {f.word: f.bit for f in arg.flags}
    m = 0
    for word in v:
        m |= bits[word]
    return m


def _check_value(arg: Arg, v: str, step: str) -> None:
    """StepError unless `v` is a value of `arg`'s kind."""
    if arg.kind == RESOURCE:
        if v != "$" and v not in RES_INDEX:
            raise StepError(f"unknown resource {v!r}")
    elif arg.kind in (NUMBER, AMOUNT):
        if arg.kind == AMOUNT and v in COUNTS:
            return
        if not (v.isascii() and v.isdigit()) or not arg.lo <= int(v) <= 9:
            allowed = "a count or " if arg.kind == AMOUNT else ""
            raise StepError(f"{arg.name} must be {allowed}a number {arg.lo}..9, not {v!r}: {step!r}")
    elif arg.kind == MASK:
        for part in v.split("|"):
            if part != "spice" and part not in RES_INDEX:
                raise StepError(f"unknown resource {part!r}")
    elif arg.kind == DECK and v not in arg.decks:
        raise StepError(f"{arg.name} is {' or '.join(arg.decks)}, not {v!r}: {step!r}")


def parse(text: str) -> Parsed:
    """A step's text read against the table (StepError: not a step of the language). The required
    arguments come first, in order; then the optional ones: keywords, options and flags in any order,
    optional positional ones in order."""
    words = text.split()
    if not words:
        raise StepError("empty step")
    step = BY_NAME.get(words[0])
    if step is None:
        raise StepError(f"unknown step {words[0]!r}")
    rest = words[1:]
    given: dict[str, Any] = {}
    for arg in step.args:
        if arg.optional:
            continue
        if not rest:
            raise StepError(f"{step.name!r} takes {step.syntax()!r}: {text!r}")
        _check_value(arg, rest[0], text)
        given[arg.field] = rest.pop(0)
    while rest:
        found = _optional_for(step, rest, given)
        if found is None:
            raise StepError(f"{step.name!r} takes {step.syntax()!r}: {text!r}")
        arg = found
        if arg.kind == OPTION:
            given[arg.field] = True
            del rest[:len(arg.name.split())]
        elif arg.kind == FLAGS:
            given.setdefault(arg.field, []).append(rest.pop(0))
        else:
            if arg.keyword:
                rest.pop(0)
                if not rest:
                    raise StepError(f"{arg.keyword!r} needs a value: {text!r}")
            _check_value(arg, rest[0], text)
            given[arg.field] = rest.pop(0)
    return Parsed(step, given)


def _optional_for(step: Step, rest: list[str], given: dict[str, Any]) -> Arg | None:
    """The optional argument the words `rest` begin with."""
    for arg in step.args:
        if not arg.optional:
            continue
        if arg.kind == OPTION and rest[:len(arg.name.split())] == arg.name.split() and arg.field not in given:
            return arg
        if arg.kind == FLAGS and rest[0] in {f.word for f in arg.flags}:
            return arg
        if arg.keyword and rest[0] == arg.keyword and arg.field not in given:
            return arg
    for arg in step.args:
        if arg.optional and arg.kind in (NUMBER, AMOUNT) and not arg.keyword and arg.field not in given:
            return arg
    return None


def compile_step(text: str) -> tuple[int, int, int, int]:
    """A step's text as the core's four integers (StepError: not a step)."""
    return parse(text).code()


# ---- what the table tells about compiled steps -----------------------------------------------

def _given(arg: Arg, a_b_c: tuple[int, int, int]) -> bool:
    """Whether an optional argument was given in a compiled step (it stores a non-zero value)."""
    return a_b_c[arg.slot] != 0


def waits(op: int, a: int, b: int, c: int) -> tuple[int, ...]:
    """The pending decisions (`P_*`) a compiled step can stop its program with."""
    step = BY_OPCODE[op]
    out = step.waits
    for arg in step.args:
        if arg.kind == FLAGS:
            for f in arg.flags:
                if (a, b, c)[arg.slot] & f.bit:
                    out += f.waits
        elif arg.waits and _given(arg, (a, b, c)):
            out += arg.waits
    return out


def reads_reg(op: int, a: int, b: int, c: int) -> bool:
    """Whether a compiled step reads `$` (the resource chosen last)."""
    for arg in BY_OPCODE[op].args:
        v = (a, b, c)[arg.slot]
        if (arg.kind == RESOURCE and v == C.REG) or (arg.reads_reg and v):
            return True
    return False


def check_core(core: Any) -> list[str]:
    """Where the core's constants differ from this table (empty: they agree): OP_<STEP> for each
    step's opcode, F_<WORD> for each fulfil modifier's bit, and the resources' indices."""
    out = []
    for s in STEPS:
        have = getattr(core, "OP_" + s.name.upper(), None)
        if have != s.opcode:
            out.append(f"core.OP_{s.name.upper()} is {have}, the step table says {s.opcode}")
    for f in FULFIL_FLAGS:
        have = getattr(core, "F_" + f.word.upper(), None)
        if have != f.bit:
            out.append(f"core.F_{f.word.upper()} is {have}, the step table says {f.bit}")
    for name in ("cinnamon", "gold", "mules"):
        if getattr(core, name.upper(), None) != RES_INDEX[name]:
            out.append(f"core.{name.upper()} is not {RES_INDEX[name]}, the index of {name} in RESOURCES")
    if core.NRES != len(RESOURCES) or core.SPICE_MASK != (1 << len(SPICES)) - 1:
        out.append("core.NRES or core.SPICE_MASK does not fit RESOURCES")
    return out


def reference() -> str:
    """The step language as text: each step's syntax and what it does, then the argument kinds."""
    lines = []
    for s in STEPS:
        lines.append(s.syntax())
        lines.append("    " + s.does)
    lines.append("")
    lines.append("R: " + KIND_WORDS[RESOURCE])
    lines.append("MASK: " + KIND_WORDS[MASK])
    counted = ", ".join(f"{s.name} {a.name}" for s in STEPS for a in s.args if a.kind == AMOUNT)
    lines.append(f"amounts ({counted}): {KIND_WORDS[AMOUNT]}; other numbers: {KIND_WORDS[NUMBER]}")
    return "\n".join(lines)
