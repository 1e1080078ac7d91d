"""Decisions as values: immutable, hashable, with a canonical text, a JSON form and a repr
that round-trips. Inside the core a decision is an int code `kind << 8 | arg`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine_ext import core as L
from engine_ext.carddata import RES_INDEX, RESOURCES, CardData

if TYPE_CHECKING:
    from engine_ext.core import State

OPTIONS = ("a", "b", "part", "pass")
KIND_NAMES = {L.K_SELECT: "select", L.K_CHOOSE: "choose", L.K_KEEP: "keep", L.K_FULFIL: "fulfil",
              L.K_SKIP: "skip", L.K_TAKE: "take", L.K_REMOVE: "remove", L.K_PAY: "pay", L.K_ROUTE: "route"}
KIND_CODES = {v: k for k, v in KIND_NAMES.items()}


class DecisionError(ValueError):
    """A decision that cannot be read; `pointer` names the JSON field."""

    def __init__(self, message: str, pointer: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.pointer = pointer


@dataclass(frozen=True, order=True)
class Decision:
    """One atomic choice. `kind` is one of KIND_NAMES' values; `args` its arguments:
    select (caravan, option), choose (resource), keep/take (card slug), fulfil (contract
    number), remove (caravan, position), pay (amount), route (destination caravans), skip ()."""

    kind: str
    args: tuple[Any, ...] = ()

    # ---- text ---------------------------------------------------------------------
    def __str__(self) -> str:
        k, a = self.kind, self.args
        if k == "select":
            return f"c{a[0]}:{a[1]}"
        if k == "remove":
            return f"remove c{a[0]} {a[1]}"
        if k == "route":
            return "route " + " ".join(str(x) for x in a)
        if k == "skip":
            return "skip"
        return f"{k} {a[0]}"

    def __repr__(self) -> str:
        return f"Decision.parse({str(self)!r})"

    @classmethod
    def parse(cls, text: str) -> Decision:
        t = text.strip()
        m = re.fullmatch(r"c(\d):(a|b|part|pass)", t)
        if m:
            return cls("select", (int(m.group(1)), m.group(2)))
        if t == "skip":
            return cls("skip")
        m = re.fullmatch(r"remove c(\d) (\d+)", t)
        if m:
            return cls("remove", (int(m.group(1)), int(m.group(2))))
        m = re.fullmatch(r"route((?: \d)+)", t)
        if m:
            return cls("route", tuple(int(x) for x in m.group(1).split()))
        m = re.fullmatch(r"(choose|keep|take) ([a-z_]+)", t)
        if m:
            if m.group(1) == "choose" and m.group(2) not in RES_INDEX:
                raise DecisionError(f"unknown resource {m.group(2)!r}")
            return cls(m.group(1), (m.group(2),))
        m = re.fullmatch(r"(fulfil|pay) (\d+)", t)
        if m:
            return cls(m.group(1), (int(m.group(2)),))
        raise DecisionError(f"not a decision: {text!r}")

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
            return {"kind": k, "to": list(a)}
        return {"kind": k}

    @classmethod
    def from_json(cls, obj: Any) -> Decision:
        if isinstance(obj, str):
            return cls.parse(obj)
        if not isinstance(obj, dict):
            raise DecisionError("a decision is an object or a text", "")
        kind = obj.get("kind")
        if kind not in KIND_CODES:
            raise DecisionError(f"unknown decision kind {kind!r}", "/kind")

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
                raise DecisionError(f"unknown resource {res!r}", "/resource")
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
            return cls(kind, tuple(to))
        return cls(kind)

    # ---- codes ------------------------------------------------------------------------
    @classmethod
    def from_code(cls, code: int, state: State, data: CardData) -> Decision:
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
            return cls("route", tuple(route_targets(state, arg)))
        if kind == L.K_SKIP:
            return cls("skip")
        raise DecisionError(f"unknown decision code {code}")

    def to_code(self, state: State, data: CardData) -> int:
        """The core's code for this decision (ValueError if it cannot be one)."""
        k, a = self.kind, self.args
        if k == "select":
            if not 0 <= a[0] < 4:
                raise DecisionError("caravan out of range", "/caravan")
            return L.K_SELECT << 8 | (a[0] * 4 + OPTIONS.index(a[1]))
        if k == "choose":
            return L.K_CHOOSE << 8 | RES_INDEX[a[0]]
        if k in ("keep", "take"):
            if a[0] not in data.by_slug:
                raise DecisionError(f"unknown card {a[0]!r}", "/card")
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
            for code in state.legal_codes():
                if code >> 8 == L.K_ROUTE and tuple(route_targets(state, code & 255)) == tuple(a):
                    return int(code)
            raise DecisionError(f"not a legal route: {list(a)}", "/to")
        return L.K_SKIP << 8


def route_targets(state: State, index: int) -> list[int]:
    """The destination caravan of each non-empty caravan's front card for the Hirte's
    derangement `index` of the deciding player."""
    p = state.current_player()
    d = state.export()
    cars = [c for c in range(d[L.O_NCAR + p]) if d[L.O_CAR + (p * 4 + c) * 3 + 2] > 0]
    m = len(cars)
    off = L.DER_OFF[m]
    return [cars[L.DER[off + index * m + i]] for i in range(m)]
