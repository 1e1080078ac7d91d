"""Decisions as values: immutable, hashable, with a canonical text, a JSON form and a repr
that round-trips. Inside the core a decision is an int code `kind << 8 | arg`."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine_ext import core as L
from engine_ext.carddata import RES_INDEX, RESOURCES, SLOTS, CardData
from engine_ext.document.schema import json_pointer

if TYPE_CHECKING:
    from engine_ext.core import State

OPTIONS = SLOTS + ("pass",)  # what `select` does with a caravan's front card: OPT_A .. OPT_PASS
KIND_NAMES = {L.K_SELECT: "select", L.K_CHOOSE: "choose", L.K_KEEP: "keep", L.K_FULFIL: "fulfil",
              L.K_SKIP: "skip", L.K_TAKE: "take", L.K_REMOVE: "remove", L.K_PAY: "pay", L.K_ROUTE: "route"}
KIND_CODES = {v: k for k, v in KIND_NAMES.items()}
# the fields of each kind's JSON form besides "kind" (any other key is an error)
JSON_FIELDS = {"select": ("caravan", "option"), "choose": ("resource",), "keep": ("card",), "take": ("card",),
               "fulfil": ("contract",), "skip": (), "remove": ("caravan", "position"), "pay": ("amount",),
               "route": ("to", "order")}
_NUM = r"0|[1-9][0-9]{0,2}"  # a number in a decision's text: ASCII digits, no leading zeros, at most 3


def _short(text: str, limit: int = 60) -> str:
    """`text` cut to `limit` characters for a message."""
    return text if len(text) <= limit else text[:limit] + "..."


class DecisionError(ValueError):
    """A decision that cannot be read; `pointer` names the JSON field."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.pointer))  # the pointer survives pickling


@dataclass(frozen=True, order=True)
class Decision:
    """One atomic choice. `kind` is one of KIND_NAMES' values; `args` its arguments:
    select (caravan, option), choose (resource), keep/take (card slug), fulfil (contract
    number), remove (caravan, position), pay (amount), skip (), route ((destination caravans),
    (order)): `order` is () or the source caravans in the order their front cards are moved,
    kept canonical (see `route_args`). A route made with flat args, (destinations...), has no order."""

    kind: str
    args: tuple[Any, ...] = ()
    # a route's `order` as it was written (text or JSON), before it was made canonical: not part of
    # the value (equality, hash, repr), only checked against the state's caravans by to_code
    given_order: tuple[int, ...] = dataclasses.field(default=(), compare=False)

    # ---- text ---------------------------------------------------------------------
    def __str__(self) -> str:
        k, a = self.kind, self.args
        if k == "select":
            return f"c{a[0]}:{a[1]}"
        if k == "remove":
            return f"remove c{a[0]} {a[1]}"
        if k == "route":
            to, order = _route_parts(a)
            text = "route " + " ".join(str(x) for x in to)
            return text + (" order " + " ".join(str(x) for x in order) if order else "")
        if k == "skip":
            return "skip"
        return f"{k} {a[0]}"

    def __repr__(self) -> str:
        return f"Decision.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Decision:
        """The decision of its canonical text (`str`): exactly that text, with ASCII digits, single
        spaces and no whitespace around it; a number without leading zeros. (A route's `order` may
        list the sources in any order, see `route_args`.)"""
        if not isinstance(text, str):
            raise DecisionError(f"a decision's text is a string, not {type(text).__name__}")
        t = text
        if t != t.strip():
            raise DecisionError(f"not a decision: {_short(text)!r} (no whitespace around a decision's text)")
        m = re.fullmatch(r"c([0-9]):(a|b|part|pass)", t)
        if m:
            return cls("select", (int(m.group(1)), m.group(2)))
        if t == "skip":
            return cls("skip")
        m = re.fullmatch(rf"remove c([0-9]) ({_NUM})", t)
        if m:
            return cls("remove", (int(m.group(1)), int(m.group(2))))
        m = re.fullmatch(r"route((?: [0-9])+)(?: order(.*))?", t, re.DOTALL)
        if m:
            to = [int(x) for x in m.group(1).split(" ")[1:]]
            if m.group(2) is None:
                return cls("route", route_args(to, None))
            if not re.fullmatch(r"(?: [0-9])+", m.group(2)):
                raise DecisionError(f"'order' must list caravan indices: {_short(text)!r}", "/order")
            given = tuple(int(w) for w in m.group(2).split(" ")[1:])
            return cls("route", route_args(to, given), given)
        m = re.fullmatch(r"(choose|keep|take) ([a-z_]+)", t)
        if m:
            if m.group(1) == "choose" and m.group(2) not in RES_INDEX:
                raise DecisionError(f"unknown resource {m.group(2)!r}")
            return cls(m.group(1), (m.group(2),))
        m = re.fullmatch(rf"(fulfil|pay) ({_NUM})", t)
        if m:
            return cls(m.group(1), (int(m.group(2)),))
        raise DecisionError(f"not a decision: {_short(text)!r}")

    # ---- JSON -----------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        k, a = self.kind, self.args
        if k == "select":
            return {"kind": k, "caravan": a[0], "option": a[1]}
        if k == "choose":
            return {"kind": k, "resource": a[0]}
        if k in ("keep", "take"):
            return {"kind": k, "card": a[0]}
        if k == "fulfil":
            return {"kind": k, "contract": a[0]}
        if k == "remove":
            return {"kind": k, "caravan": a[0], "position": a[1]}
        if k == "pay":
            return {"kind": k, "amount": a[0]}
        if k == "route":
            to, order = _route_parts(a)
            out: dict[str, Any] = {"kind": k, "to": list(to)}
            if order:
                out["order"] = list(order)
            return out
        return {"kind": k}

    @classmethod
    def from_json(cls, obj: Any) -> Decision:
        if isinstance(obj, str):
            return cls.parse(obj)
        if not isinstance(obj, dict):
            raise DecisionError("a decision is an object or a text", "")
        kind = obj.get("kind")
        if kind is None and ("decision" in obj or "text" in obj):  # an item of a list of legal decisions
            raise DecisionError("an item of `legal` holds the decision: give its `decision` (or its `text`), "
                                "not the whole item", "/kind")
        if kind is None:
            kinds = ", ".join(sorted(KIND_CODES))
            raise DecisionError(f"a decision object names its kind (`kind`: one of {kinds})", "/kind")
        if not isinstance(kind, str) or kind not in KIND_CODES:
            raise DecisionError(f"unknown decision kind {_short(repr(kind))}", "/kind")
        for key in obj:
            if key != "kind" and key not in JSON_FIELDS[kind]:
                allowed = ", ".join(repr(k) for k in ("kind",) + JSON_FIELDS[kind])
                name = key if isinstance(key, str) else str(key)
                raise DecisionError(f"unknown field {_short(name)!r} of a {kind} decision (it has {allowed})",
                                    json_pointer([name]))

        def field(name: str, typ: type) -> Any:
            if name not in obj:
                raise DecisionError(f"missing {name!r}", f"/{name}")
            v = obj[name]
            if typ is int and (isinstance(v, bool) or not isinstance(v, int)):
                raise DecisionError(f"{name!r} must be an integer", f"/{name}")
            if typ is str and not isinstance(v, str):
                raise DecisionError(f"{name!r} must be a string", f"/{name}")
            return v

        if kind == "select":
            opt = field("option", str)
            if opt not in OPTIONS:
                raise DecisionError(f"option must be one of {OPTIONS}", "/option")
            return cls(kind, (field("caravan", int), opt))
        if kind == "choose":
            res = field("resource", str)
            if res not in RES_INDEX:
                raise DecisionError(f"unknown resource {_short(res)!r}", "/resource")
            return cls(kind, (res,))
        if kind in ("keep", "take"):
            return cls(kind, (field("card", str),))
        if kind == "fulfil":
            return cls(kind, (field("contract", int),))
        if kind == "remove":
            return cls(kind, (field("caravan", int), field("position", int)))
        if kind == "pay":
            return cls(kind, (field("amount", int),))
        if kind == "route":
            to = obj.get("to")
            if not isinstance(to, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in to):
                raise DecisionError("'to' must be a list of caravan indices", "/to")
            order = obj.get("order")
            if order is not None and (not isinstance(order, list)
                                      or not all(isinstance(x, int) and not isinstance(x, bool) for x in order)):
                raise DecisionError("'order' must be a list of caravan indices", "/order")
            return cls(kind, route_args(to, order), tuple(order or ()))
        return cls(kind)

    # ---- codes ------------------------------------------------------------------------
    @classmethod
    def from_code(cls, code: int, state: State, data: CardData) -> Decision:
        """The decision of a core code; DecisionError for a code that names none."""
        problem = code_problem(code, data, lambda: len(route_sources(state)))
        if problem:
            raise DecisionError(problem)
        kind, arg = code >> 8, code & 255
        if kind == L.K_SELECT:
            return cls("select", (arg >> 2, OPTIONS[arg & 3]))
        if kind == L.K_CHOOSE:
            return cls("choose", (RESOURCES[arg],))
        if kind in (L.K_KEEP, L.K_TAKE):
            return cls(KIND_NAMES[kind], (data.kinds[arg].slug,))
        if kind == L.K_FULFIL:
            return cls("fulfil", (arg + 1,))
        if kind == L.K_REMOVE:
            return cls("remove", (arg >> 6, arg & 63))
        if kind == L.K_PAY:
            return cls("pay", (arg,))
        if kind == L.K_ROUTE:
            return cls("route", route_form(state, arg))
        return cls("skip")

    def to_code(self, state: State, data: CardData) -> int:
        """The core's code for this decision (DecisionError if it cannot be one)."""
        k, a = self.kind, self.args
        _check_args(k, a)
        if k == "select":
            if not 0 <= a[0] < 4:
                raise DecisionError("caravan out of range", "/caravan")
            if a[1] not in OPTIONS:
                raise DecisionError(f"option must be one of {OPTIONS}", "/option")
            return L.K_SELECT << 8 | (a[0] * 4 + OPTIONS.index(a[1]))
        if k == "choose":
            if a[0] not in RES_INDEX:
                raise DecisionError(f"unknown resource {_short(a[0])!r}", "/resource")
            return L.K_CHOOSE << 8 | RES_INDEX[a[0]]
        if k in ("keep", "take"):
            if a[0] not in data.by_slug:
                raise DecisionError(f"unknown card {_short(str(a[0]))!r}", "/card")
            return KIND_CODES[k] << 8 | data.by_slug[a[0]].index
        if k == "fulfil":
            if not 1 <= a[0] <= L.NCON:
                raise DecisionError("contract number out of 1..40", "/contract")
            return L.K_FULFIL << 8 | (a[0] - 1)
        if k == "remove":
            if not (0 <= a[0] < 4 and 0 <= a[1] < 64):
                raise DecisionError("caravan or position out of range", "/position")
            return L.K_REMOVE << 8 | (a[0] * 64 + a[1])
        if k == "pay":
            if not 1 <= a[0] <= 9:
                raise DecisionError("amount out of 1..9", "/amount")
            return L.K_PAY << 8 | a[0]
        if k == "route":
            to, order = _route_parts(a)
            sources = route_sources(state)
            if order or self.given_order:
                for given in (order, self.given_order):
                    if given and sorted(given) != sources:
                        raise DecisionError(f"'order' must list each source caravan {sources} once: "
                                            f"{list(given)}", "/order")
                if order:
                    order = route_args(to, order)[1]  # canonical (it is, unless the args were made by hand)
            for code in state.legal_codes():
                if code >> 8 == L.K_ROUTE and _form_of(route_moves(sources, code & 255)) == (to, order):
                    return int(code)
            raise DecisionError(f"not a legal route: {list(to)}", "/to")
        return L.K_SKIP << 8


# the arguments of each kind (`Decision.args`), by type (a route's: see `_check_args`)
ARG_TYPES: dict[str, tuple[type, ...]] = {"select": (int, str), "choose": (str,), "keep": (str,), "take": (str,),
                                          "fulfil": (int,), "remove": (int, int), "pay": (int,), "skip": ()}


def _ints(values: Any) -> bool:
    return isinstance(values, tuple) and all(isinstance(x, int) and not isinstance(x, bool) for x in values)


def _check_args(kind: Any, args: Any) -> None:
    """DecisionError unless `args` are arguments of a decision of `kind` (a Decision made by hand
    may hold anything)."""
    if kind == "route":
        if _ints(args) or (isinstance(args, tuple) and len(args) == 2 and _ints(args[0]) and _ints(args[1])):
            return
        raise DecisionError(f"a route's arguments are its destinations (and order), not {_short(repr(args))}", "/to")
    if kind not in ARG_TYPES:
        raise DecisionError(f"unknown decision kind {_short(repr(kind))}", "/kind")
    types = ARG_TYPES[kind]
    if (not isinstance(args, tuple) or len(args) != len(types)
            or not all(isinstance(x, t) and not isinstance(x, bool) for x, t in zip(args, types, strict=False))):
        names = ", ".join(f"{f} ({t.__name__})" for f, t in zip(JSON_FIELDS[kind], types, strict=True))
        raise DecisionError(f"a {kind} decision's arguments are: {names or 'none'}; not {_short(repr(args))}")


# the arguments below which a code of each kind names a decision (a card kind's: the card data's kinds)
ARG_LIMITS = {L.K_SELECT: 4 * len(OPTIONS), L.K_CHOOSE: L.NRES, L.K_KEEP: 0, L.K_TAKE: 0, L.K_FULFIL: L.NCON,
              L.K_REMOVE: 256, L.K_PAY: 10, L.K_SKIP: 1}


def code_problem(code: Any, data: CardData, sources: Callable[[], int]) -> str:
    """What is wrong with a core decision code ('' if it names a decision): its kind, or its argument
    out of that kind's range. `sources()`: how many caravans the deciding player routes (the Hirte)."""
    if not isinstance(code, int) or isinstance(code, bool) or not 0 <= code < (L.K_ROUTE + 1) << 8:
        return f"unknown decision code {code!r}"
    kind, arg = code >> 8, code & 255
    if kind == L.K_ROUTE:
        m = sources()
        return "" if 2 <= m <= 4 and arg < L.ROUTE_N[m] else f"no route {arg} over {m} caravans (code {code})"
    if kind not in ARG_LIMITS:
        return f"unknown decision code {code}"
    if arg >= (len(data.kinds) if kind in (L.K_KEEP, L.K_TAKE) else ARG_LIMITS[kind]) or (kind == L.K_PAY and arg == 0):
        return f"decision code {code}: no {KIND_NAMES[kind]} {arg}"
    return ""


def _route_parts(args: tuple[Any, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(destinations, order) of a route's args: ((to...), (order...)), or flat (to...)."""
    if len(args) == 2 and isinstance(args[0], tuple):
        return tuple(args[0]), tuple(args[1])
    return tuple(args), ()


def route_args(to: Any, order: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The canonical args of a route: `to` the destination caravan of each non-empty caravan's
    front card (in caravan order), `order` None or the source caravans in the order their front
    cards are moved. Only the order within each destination matters: the canonical order lists the
    sources grouped by destination ascending, each group in the order given, and is () when every
    group is in ascending caravan order (cards sharing a destination go in caravan order). An order
    that is not a permutation of len(to) distinct caravans 0..3 is a DecisionError on /order; that
    they are the deciding player's non-empty caravans is checked against the state (to_code)."""
    to = tuple(int(x) for x in to)
    if order is None:
        return to, ()
    order = tuple(order)
    if len(order) != len(to) or len(set(order)) != len(order) or not all(0 <= x < 4 for x in order):
        raise DecisionError(f"'order' must list each of the {len(to)} source caravans once: {list(order)}",
                            "/order")
    sources = sorted(order)  # the non-empty caravans, as `to` lists them
    dest = {s: to[i] for i, s in enumerate(sources)}
    grouped = tuple(s for d in sorted(set(to)) for s in order if dest[s] == d)
    ascending = all(a < b for a, b in zip(grouped, grouped[1:], strict=False) if dest[a] == dest[b])
    return to, () if ascending else grouped


def route_sources(state: State) -> list[int]:
    """The deciding player's caravans whose front cards a route moves (`State.route_sources`: its
    non-empty ones, in caravan order; none when the game is over)."""
    return list(state.route_sources())


def route_moves(cars: list[int], index: int) -> list[tuple[int, int]]:
    """The moves of the Hirte's route `index` over the non-empty caravans `cars` (`route_sources`):
    (source caravan, destination caravan) of each front card, in the order they are made."""
    m = len(cars)
    off = L.ROUTE_OFF[m] + index * m * 2
    return [(cars[L.ROUTE[off + 2 * i]], cars[L.ROUTE[off + 2 * i + 1]]) for i in range(m)]


def _form_of(moves: list[tuple[int, int]]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The canonical args (destinations, order) of a route's moves (see `route_args`)."""
    dest = dict(moves)
    return route_args([dest[c] for c in sorted(dest)], [s for s, _ in moves])


def route_form(state: State, index: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The canonical args (destinations, order) of the Hirte's route `index` for the deciding player."""
    return _form_of(route_moves(route_sources(state), index))

