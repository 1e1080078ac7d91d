"""Load the card data file and compile every action's effect steps into the core's tables.

The step language is the table in `engine_ext.steps`. Each step becomes four integers (opcode and
three arguments) in `Rules.ops`; each action gets its start, length and the cost the turn's
legality check needs.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

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
    """The card data file is wrong; the message names the card (or contract), the field and, read
    from a file, its line: `table` ("card" or "contract"), `index` (its place among them), `field`
    and `line` (1-based; 0: not known) say where."""

    def __init__(self, message: str, table: str = "", index: int = -1, field: str = "", line: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.table = table
        self.index = index
        self.field = field
        self.line = line

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.table, self.index, self.field, self.line))


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


CARD_FIELDS: dict[str, tuple[type, ...]] = {
    "slug": (str,), "name": (str,), "english": (str,), "deck": (str,), "copies": (int,), "vp": (int, str),
    "bang": (bool,), "rank": (int,), "caravan": (list,), "parting": (list,), "source": (str,)}
CARD_REQUIRED = ("slug", "name", "deck", "copies", "vp", "source")
CONTRACT_FIELDS: dict[str, tuple[type, ...]] = {
    "number": (int,), "kind": (str,), "vp": (int,), "mules": (int,), "cost": (dict,), "payout": (dict,),
    "source": (str,)}
CONTRACT_REQUIRED = ("number", "kind", "vp", "mules", "source")


def _typed(row: dict[str, Any], fields: dict[str, tuple[type, ...]], required: tuple[str, ...],
           fail: Any) -> None:
    """Every field of a card or contract known, of its type, the required ones there."""
    for key in required:
        if key not in row:
            fail(key, f"missing {key!r}")
    for key, value in row.items():
        if key not in fields:
            fail(key, f"unknown field {key!r} (the fields are: {', '.join(fields)})")
        types = fields[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            fail(key, f"{key} must be {' or '.join(_TYPE_WORDS[t] for t in types)}, not {value!r}")


_TYPE_WORDS = {str: "a string", int: "a whole number", bool: "true or false", list: "a list", dict: "a table"}


def _steps(value: Any, fail: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        fail(key, f"{key}: an action is a list of steps, each a string, not {value!r}")
    return tuple(value)


def parse(doc: dict[str, Any]) -> CardData:
    """The card data of a card file's TOML; CardDataError names the card or contract and the field
    (its `table`, `index` and `field`: `load_text` adds the line)."""
    kinds: list[CardKind] = []
    seen: set[str] = set()
    cards = doc.get("card", [])
    if not isinstance(cards, list):
        raise CardDataError("the cards are [[card]] tables")
    for i, row in enumerate(cards):
        where = f"card {row.get('slug', i)!r}"

        def fail(key: str, message: str, where: str = where, i: int = i) -> None:
            raise CardDataError(f"{where}, field {key!r}: {message}", "card", i, key)

        _typed(row, CARD_FIELDS, CARD_REQUIRED, fail)
        if not row["slug"] or not row["slug"].replace("_", "").isalnum() or row["slug"] != row["slug"].lower():
            fail("slug", "a slug is lower-case letters, digits and _")
        if row["slug"] in seen:
            fail("slug", "duplicate slug")
        seen.add(row["slug"])
        if row["deck"] not in DECKS:
            fail("deck", f"unknown deck {row['deck']!r} (decks: {', '.join(DECKS)})")
        if row["copies"] < 0:
            fail("copies", "copies must be 0 or more")
        if isinstance(row["vp"], str) and row["vp"] != "wheat":
            fail("vp", "vp must be a number or 'wheat'")
        caravan = row.get("caravan", [])
        if len(caravan) > 2:
            fail("caravan", "at most two caravan actions")
        actions: list[tuple[str, ...] | None] = [_steps(a, fail, "caravan") for a in caravan]
        actions += [None] * (2 - len(caravan))
        actions.append(_steps(row["parting"], fail, "parting") if "parting" in row else None)
        kinds.append(CardKind(len(kinds), row["slug"], row["name"], row.get("english", ""), row["deck"],
                              int(row["copies"]), row["vp"], bool(row.get("bang", False)),
                              int(row.get("rank", 0)), tuple(actions), row["source"]))
    contracts: list[Contract] = []
    rows = doc.get("contract", [])
    if not isinstance(rows, list):
        raise CardDataError("the contracts are [[contract]] tables")
    for i, row in enumerate(rows):
        where = f"contract {row.get('number', i + 1)}"

        def cfail(key: str, message: str, where: str = where, i: int = i) -> None:
            raise CardDataError(f"{where}, field {key!r}: {message}", "contract", i, key)

        _typed(row, CONTRACT_FIELDS, CONTRACT_REQUIRED, cfail)
        if row["number"] != i + 1:
            cfail("number", f"contracts must be numbered 1..{C.NCON} in order (this one is number {i + 1})")
        if row["kind"] not in CONTRACT_KINDS:
            cfail("kind", f"unknown kind {row['kind']!r} (kinds: {', '.join(CONTRACT_KINDS)})")
        for key in ("cost", "payout"):
            for res, n in row.get(key, {}).items():
                if res not in RES_INDEX:
                    cfail(key, f"unknown resource {res!r}")
                if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= 9:
                    cfail(key, f"{res} must be a number 0..9, not {n!r}")
        if len(row.get("payout", {})) > 1:
            cfail("payout", "a contract pays one resource")
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
            key = "parting" if slot == 2 else "caravan"
            try:
                steps = [compile_step(s, f"card {k.slug!r}, field {key!r}, action {SLOTS[slot]}") for s in action]
            except CardDataError as e:
                raise CardDataError(e.message, "card", k.index, key) from None
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
    """The card data of a card file's text; CardDataError names the card, the field and the line
    (`path`, when given, heads the message)."""
    head = f"{path}: " if path else ""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise CardDataError(f"{head}not TOML: {e}") from None
    try:
        data = parse(doc)
    except CardDataError as e:
        line = line_of(text, e.table, e.index, e.field)
        at = f"line {line}: " if line else ""
        raise CardDataError(f"{head}{at}{e.message}", e.table, e.index, e.field, line) from None
    data.path = path
    data.sha256 = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return data


_HEADER = re.compile(r"^\[\[?\s*[A-Za-z0-9_.-]+\s*\]\]?\s*(#.*)?$")  # a table's header line (bare keys)


def line_of(text: str, table: str, index: int, field: str = "") -> int:
    """The line (from 1) of `field` in the `index`-th `[[table]]` of a card file's text (tomllib
    gives no line numbers): the field's `key =` line in that table, else the table's header; 0 when
    not found."""
    if not table or index < 0:
        return 0
    header = f"[[{table}]]"
    seen = -1
    start = 0
    lines = text.splitlines()
    for n, raw in enumerate(lines, 1):
        stripped = raw.strip()
        if _HEADER.match(stripped):
            if seen == index:
                break  # the next table: the field is not in this one
            if stripped.split("#", 1)[0].replace(" ", "") == header:
                seen += 1
                if seen == index:
                    start = n
            continue
        if seen == index and field and stripped.split("=", 1)[0].strip() == field and "=" in stripped:
            return n
    return start


CARDS_ENV = "KASHGAR_CARDS"  # the path of another card file to play with (the schema of data/cards.toml)


def load_file(path: str) -> CardData:
    """The card data of the file at `path` (CardDataError: unreadable, or wrong, named by line)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise CardDataError(f"{path}: cannot read it: {getattr(e, 'strerror', None) or e}") from None
    return load_text(text, str(Path(path).resolve()))


def packaged() -> CardData:
    """The card data shipped in the package (engine_ext/data/cards.toml)."""
    res = resources.files("engine_ext").joinpath("data/cards.toml")
    data = load_text(res.read_text(encoding="utf-8"), str(res))
    return data


@lru_cache(maxsize=1)
def default() -> CardData:
    """The card data this process plays with: the file `KASHGAR_CARDS` names, else the package's.
    Read once; every process started with the same environment (web processes, search processes,
    RQ workers) reads the same file."""
    path = os.environ.get(CARDS_ENV, "").strip()
    return load_file(path) if path else packaged()
