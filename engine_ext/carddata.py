"""Load the card data file and compile every action's effect steps into the core's tables.

The step language is the table in `engine_ext.steps`. Each step becomes four integers (opcode and
three arguments) in `Rules.ops`; each action gets its start, length and the cost the turn's
legality check needs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import tomllib

from engine_ext import core as C
from engine_ext import steps
from engine_ext.steps import RES_INDEX, RESOURCES, SPICES

__all__ = ["CONTRACT_KINDS", "DECKS", "RESOURCES", "RES_INDEX", "SLOTS", "SPICES", "CardData", "CardDataError",
           "CardKind", "Contract", "compile_step", "core_disagrees", "default", "load_text", "parse"]

DECKS = ("start", "standard", "special", "additional", "patriarch", "back")
CONTRACT_KINDS = ("small", "large", "wheat", "pepper", "gold")  # in the order of the core's CK_*
SLOTS = ("a", "b", "part")  # an action's slot: the core's OPT_A, OPT_B, OPT_PART


def core_disagrees() -> list[str]:
    """Where the core's constants (its own C ints in the compiled build) differ from the tables here
    and in `steps` (empty: they agree; checked on import)."""
    out = steps.check_core(C)
    out += [f"core.CK_{k.upper()} is not {i}" for i, k in enumerate(CONTRACT_KINDS)
            if getattr(C, f"CK_{k.upper()}") != i]
    out += [f"core.OPT_{s.upper()} is not {i}" for i, s in enumerate(SLOTS + ("pass",))
            if getattr(C, f"OPT_{s.upper()}") != i]
    return out


if core_disagrees():  # pragma: no cover - a build out of step with its tables
    raise ImportError("engine_ext.core disagrees with the step and card tables: " + "; ".join(core_disagrees()))


class CardDataError(ValueError):
    """The card data file is wrong; the message names the card and the step."""


@dataclass(frozen=True)
class CardKind:
    index: int
    slug: str
    name: str
    english: str
    deck: str
    copies: int
    vp: int | str
    bang: bool
    rank: int
    actions: tuple[tuple[str, ...] | None, ...]  # a, b, parting (None where absent)
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "slug": self.slug, "name": self.name, "english": self.english, "deck": self.deck,
            "copies": self.copies, "vp": self.vp, "bang": self.bang, "rank": self.rank or None,
            "caravan": [list(a) for a in self.actions[:2] if a is not None],
            "parting": list(self.actions[2]) if self.actions[2] is not None else None,
            "source": self.source,
        }


@dataclass(frozen=True)
class Contract:
    number: int
    kind: str
    vp: int
    mules: int
    cost: dict[str, int]
    payout: dict[str, int]
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "kind": self.kind, "vp": self.vp, "mules": self.mules,
                "cost": dict(self.cost), "payout": dict(self.payout), "source": self.source}


@dataclass
class CardData:
    kinds: list[CardKind]
    contracts: list[Contract]
    by_slug: dict[str, CardKind] = field(default_factory=dict)
    card_kind: list[int] = field(default_factory=list)  # card instance id -> kind index
    ids_by_kind: dict[int, list[int]] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)
    path: str = ""  # the file it was read from ("" : the package's own, or a text)
    sha256: str = ""  # of the file's text (UTF-8), to tell one card file from another

    @cached_property
    def core_rules(self) -> C.Rules:
        """These tables as the interpreted core's `Rules` (for the JSON layer's `document.array`)."""
        return C.Rules(self.tables)

    @property
    def patriarch(self) -> CardKind:
        return self.by_slug["patriarch"]

    def kind(self, slug: str) -> CardKind:
        return self.by_slug[slug]


def compile_step(step: str, where: str) -> tuple[int, int, int, int]:
    """One effect step as (opcode, a, b, c) (`engine_ext.steps`); CardDataError names `where`."""
    try:
        return steps.compile_step(step)
    except steps.StepError as e:
        raise CardDataError(f"{where}: {e}") from None


def _action_cost(steps: list[tuple[int, int, int, int]]) -> tuple[list[int], int, int, int]:
    """What the turn's legality check needs: literal costs, a 'some resource >= k' condition
    (Bootsmann), and whether the Fahrender Händler's 'pay at least 1 gold' applies."""
    cost = [0] * 7
    minmask = 0
    minimum = 0
    trade = 0
    for op, a, b, _c in steps:
        if op == C.OP_PAY and a != C.REG:
            cost[a] += b
        elif op == C.OP_CHOOSE and b > 0 and not minmask:
            minmask, minimum = a, b
        elif op == C.OP_TRADE:
            trade = 1
        elif op not in (C.OP_PAY, C.OP_CHOOSE):
            break
    return cost, minmask, minimum, trade


def parse(doc: dict[str, Any]) -> CardData:
    kinds: list[CardKind] = []
    seen: set[str] = set()
    for i, row in enumerate(doc.get("card", [])):
        where = f"card {row.get('slug', i)!r}"
        for key in ("slug", "name", "deck", "copies", "vp", "source"):
            if key not in row:
                raise CardDataError(f"{where}: missing {key!r}")
        if row["slug"] in seen:
            raise CardDataError(f"{where}: duplicate slug")
        seen.add(row["slug"])
        if row["deck"] not in DECKS:
            raise CardDataError(f"{where}: unknown deck {row['deck']!r}")
        if not (isinstance(row["vp"], int) or row["vp"] == "wheat"):
            raise CardDataError(f"{where}: vp must be a number or 'wheat'")
        caravan = row.get("caravan", [])
        if len(caravan) > 2:
            raise CardDataError(f"{where}: at most two caravan actions")
        actions: list[tuple[str, ...] | None] = [tuple(a) for a in caravan] + [None] * (2 - len(caravan))
        actions.append(tuple(row["parting"]) if "parting" in row else None)
        kinds.append(CardKind(len(kinds), row["slug"], row["name"], row.get("english", ""), row["deck"],
                              int(row["copies"]), row["vp"], bool(row.get("bang", False)),
                              int(row.get("rank", 0)), tuple(actions), row["source"]))
    contracts: list[Contract] = []
    for i, row in enumerate(doc.get("contract", [])):
        where = f"contract {row.get('number', i)}"
        if row.get("number") != i + 1:
            raise CardDataError(f"{where}: contracts must be numbered 1..40 in order")
        if row.get("kind") not in CONTRACT_KINDS:
            raise CardDataError(f"{where}: unknown kind {row.get('kind')!r}")
        for res in list(row.get("cost", {})) + list(row.get("payout", {})):
            if res not in RES_INDEX:
                raise CardDataError(f"{where}: unknown resource {res!r}")
        contracts.append(Contract(row["number"], row["kind"], int(row["vp"]), int(row["mules"]),
                                  dict(row.get("cost", {})), dict(row.get("payout", {})), row["source"]))
    data = CardData(kinds, contracts, {k.slug: k for k in kinds})
    for slug in ("patriarch", "matriarch", "aristokratin"):
        if slug not in data.by_slug:
            raise CardDataError(f"the card data needs a {slug!r} card")
    if len(contracts) != C.NCON:
        raise CardDataError(f"there must be {C.NCON} contracts, not {len(contracts)}")
    _build_tables(data)
    return data


def _build_tables(data: CardData) -> None:
    ops: list[int] = []
    a_start: list[int] = []
    a_len: list[int] = []
    a_cost: list[int] = []
    a_minmask: list[int] = []
    a_min: list[int] = []
    a_trade: list[int] = []
    kact: list[int] = []
    for k in data.kinds:
        for slot, action in enumerate(k.actions):
            if action is None:
                kact.append(-1)
                continue
            steps = [compile_step(s, f"card {k.slug!r} action {SLOTS[slot]}") for s in action]
            kact.append(len(a_start))
            a_start.append(len(ops) // 4)
            a_len.append(len(steps))
            for st in steps:
                ops.extend(st)
            cost, minmask, minimum, trade = _action_cost(steps)
            a_cost.extend(cost)
            a_minmask.append(minmask)
            a_min.append(minimum)
            a_trade.append(trade)
    # card instances: kinds in file order, copies each (the Matriarch is the Patriarch's back)
    card_kind: list[int] = []
    ids: dict[int, list[int]] = {}
    for k in data.kinds:
        for _ in range(k.copies):
            ids.setdefault(k.index, []).append(len(card_kind))
            card_kind.append(k.index)
    if len(card_kind) > C.NCARDS:
        raise CardDataError(f"at most {C.NCARDS} person cards, not {len(card_kind)}")
    con_cost: list[int] = []
    for ct in data.contracts:
        con_cost.extend(ct.cost.get(r, 0) for r in RESOURCES)
    data.card_kind = card_kind
    data.ids_by_kind = ids
    data.tables = {
        "kvp": [0 if k.vp == "wheat" else int(k.vp) for k in data.kinds],
        "kwheat": [1 if k.vp == "wheat" else 0 for k in data.kinds],
        "kbang": [1 if k.bang else 0 for k in data.kinds],
        "kact": kact, "ckind": card_kind,
        "a_start": a_start, "a_len": a_len, "a_cost": a_cost, "a_minmask": a_minmask,
        "a_min": a_min, "a_trade": a_trade, "ops": ops,
        "con_kind": [CONTRACT_KINDS.index(c.kind) for c in data.contracts],
        "con_vp": [c.vp for c in data.contracts],
        "con_mules": [c.mules for c in data.contracts],
        "con_cost": con_cost,
        "con_pay_res": [RES_INDEX[next(iter(c.payout))] if c.payout else 0 for c in data.contracts],
        "con_pay_n": [next(iter(c.payout.values())) if c.payout else 0 for c in data.contracts],
        "k_patriarch": data.by_slug["patriarch"].index,
        "k_matriarch": data.by_slug["matriarch"].index,
    }


def load_text(text: str, path: str = "") -> CardData:
    data = parse(tomllib.loads(text))
    data.path = path
    data.sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return data


@lru_cache(maxsize=1)
def default() -> CardData:
    """The card data shipped in the package."""
    text = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
    return load_text(text)
