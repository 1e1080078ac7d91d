"""The state document's format (`kashgar/state@1`): its names, its JSON Schema and the checks
against it, and StateError, which names a wrong field by its JSON pointer."""

from __future__ import annotations

import itertools
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any, TypeGuard

import jsonschema
import jsonschema_rs

try:  # the size of a document, written ten times faster (a run-time dependency; json does without)
    import orjson
except ImportError:  # pragma: no cover - installed with the project
    orjson = None  # type: ignore[assignment]
from jsonschema.exceptions import best_match

from engine_ext import core as L
from engine_ext.carddata import SLOTS

SCHEMA_ID = "kashgar/state@1"
MAX_DOC_BYTES = 32 * 1024  # a real state is at most about 3 KB (4 players, late in the game)
MAX_DEPTH = 32  # a real state nests 5 deep (decks/contract/known/0/1)
SCHEMA_ERRORS = 16  # the schema errors looked at to name the wrong field
DECK_NAMES = ("standard", "special", "contract")
# the pending decisions (`P_*`) by their names in a document (the cinnamon paid with spices is "zimt" there)
WAIT_NAMES = {L.P_CHOOSE: "choose", L.P_KEEP: "keep", L.P_FULFIL: "fulfil", L.P_WHEAT: "wheat",
              L.P_CINNAMON: "zimt", L.P_REMOVE: "remove", L.P_REMOVE_ANY: "remove_any",
              L.P_REMOVE_PAT: "remove_patriarch", L.P_ROUTE: "route", L.P_TAKE: "take",
              L.P_TRADE_PAY: "trade_pay", L.P_TRADE: "trade", L.P_SETDIST: "set_distinct",
              L.P_CFREE: "contracts_free"}
WAIT_CODES = {v: k for k, v in WAIT_NAMES.items()}
SLOT_NAMES = SLOTS


class StateError(ValueError):
    """A state document that cannot be a Kashgar state. `pointer` is the JSON pointer of the
    field that is wrong, `message` says what is wrong with it."""

    def __init__(self, pointer: str, message: str) -> None:
        super().__init__(f"{pointer or '/'}: {message}")
        self.pointer = pointer
        self.message = message

    def __reduce__(self) -> tuple[Any, ...]:
        # pickled with both fields, so it crosses a process boundary (arena workers, root-parallel
        # parts) intact; the default rebuilds it from the one-string args and fails
        return (type(self), (self.pointer, self.message))


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    text = resources.files("engine_ext").joinpath("data/state.schema.json").read_text(encoding="utf-8")
    result: dict[str, Any] = json.loads(text)
    return result


def state_schema() -> dict[str, Any]:
    """The published state schema (`data/state.schema.json`) as one self-contained document: its
    `$defs` references replaced by what they name (for embedding, e.g. in the OpenAPI document)."""
    full = schema()
    out: dict[str, Any] = _inline_refs(full, full.get("$defs", {}))
    return out


def _inline_refs(node: Any, defs: dict[str, Any]) -> Any:
    """The schema with its local `$ref`s replaced by what they name (validation is several
    times faster without reference lookups; the shipped file keeps its `$defs`)."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline_refs(defs[ref.split("/")[-1]], defs)
        return {k: _inline_refs(v, defs) for k, v in node.items() if k != "$defs"}
    if isinstance(node, list):
        return [_inline_refs(v, defs) for v in node]
    return node


def is_strict_int(value: Any) -> TypeGuard[int]:
    """A JSON integer as the engine reads one: an int, not a bool and not a whole float (3.0).
    JSON Schema counts 3.0 as an integer; the engine does not (a float loses precision past
    2**53, which would silently change an `rng`, and an integer field is written as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


_STRICT_TYPES = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: is_strict_int(value))
_StrictValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=_STRICT_TYPES)


@lru_cache(maxsize=1)
def _validator() -> Any:
    full = schema()
    return _StrictValidator(_inline_refs(full, full.get("$defs", {})))


@lru_cache(maxsize=1)
def _compiled() -> Any:
    """The same schema compiled (jsonschema-rs): it only says whether a document is valid, in a few
    hundredths of a millisecond where `_validator` takes milliseconds; `_validator` names the error."""
    full = schema()
    return jsonschema_rs.validator_for(_inline_refs(full, full.get("$defs", {})))


def _plain(doc: Any) -> bool:
    """Whether `doc` holds only dicts, lists, strings, integers, booleans and None: no float (the
    schema has no field for one, and jsonschema-rs counts 3.0 as an integer where the engine does
    not: `is_strict_int`) and no tuple (jsonschema-rs counts one as an array, the loader does not)."""
    stack = [doc]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is not str and kind is not int and kind is not bool and node is not None:
            return False
    return True


def _valid_fast(doc: Any) -> bool:
    """Whether `doc` is surely valid: False is "ask `_validator`", never an error."""
    if not _plain(doc):
        return False
    try:
        return bool(_compiled().is_valid(doc))
    except (ValueError, TypeError, OverflowError):
        return False


def json_pointer(path: Any) -> str:
    """The JSON pointer (RFC 6901) of a path of keys and indices: `~` and `/` escaped."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def _message(e: jsonschema.ValidationError) -> str:
    """What is wrong, in words: for a value that fits none of a field's alternatives by type
    alone (an `observer` of 0.0), the types it may have rather than "not valid under any"."""
    if e.validator in ("oneOf", "anyOf") and e.context:
        here = [c for c in e.context if not c.relative_path]
        if here and all(c.validator == "type" for c in here):
            types = " or ".join(dict.fromkeys(repr(c.validator_value) for c in here))
            return f"{e.instance!r} is not of type {types}"
    return str(e.message)


def _not_json(doc: Any) -> StateError:
    """Where a document holds what no JSON text can (it comes from a Python caller): a key that is
    not a string, a value of another type, an integer too long to write, or nesting deeper than
    MAX_DEPTH."""
    stack: list[tuple[tuple[Any, ...], Any]] = [((), doc)]
    while stack:
        path, node = stack.pop()
        where = json_pointer(path)
        if len(path) > MAX_DEPTH:
            return StateError(where, f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    return StateError(where, f"an object's keys are strings, not {type(k).__name__} ({k!r:.40})")
                stack.append(((*path, k), v))
        elif isinstance(node, list | tuple):
            stack.extend(((*path, i), v) for i, v in enumerate(node))
        elif isinstance(node, int) and not isinstance(node, bool):
            if node.bit_length() > 64 * 8:
                return StateError(where, f"an integer of {node.bit_length()} bits is no state's number")
        elif not isinstance(node, str | float | bool) and node is not None:
            return StateError(where, f"not a JSON value: a {type(node).__name__}")
    return StateError("", "not a JSON document")


def _size(doc: Any) -> int:
    """The length of `doc` as compact JSON; StateError (`_not_json`) when it is no JSON document."""
    try:
        return len(json.dumps(doc, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        raise _not_json(doc) from None


def validate_schema(doc: Any) -> None:
    if not isinstance(doc, dict):
        raise StateError("", "a state is a JSON object")
    try:
        size = len(orjson.dumps(doc)) if orjson is not None else _size(doc)
    except (TypeError, ValueError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        size = _size(doc)  # what orjson refuses and json writes (an integer above 64 bits, NaN)
    if size > MAX_DOC_BYTES:
        raise StateError("", f"the state document is larger than {MAX_DOC_BYTES} bytes ({size}; a real state "
                             "is a few KB)")
    if _valid_fast(doc):
        return
    validator = _validator()
    # the first errors are enough to name the field (a large wrong document has thousands)
    errors = sorted(itertools.islice(validator.iter_errors(doc), SCHEMA_ERRORS),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    if errors:
        # inside a field's alternatives (`oneOf`: a deck as a list or as {"count", "known"}), the
        # error of the alternative the value is meant as, which names the field itself
        errors = [best_match([e]) or e for e in errors]
        e = max(errors, key=lambda e: len(e.absolute_path))
        path = list(e.absolute_path)
        if e.validator == "required" and isinstance(e.instance, dict):
            missing = [k for k in e.validator_value if k not in e.instance]
            path += missing[:1]  # point at the missing field itself
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):
            known = set(e.schema.get("properties", {}))
            patterns = list(e.schema.get("patternProperties", {}))
            extra = sorted(k for k in e.instance if k not in known and not any(re.search(p, k) for p in patterns))
            path += extra[:1]  # point at the unknown field itself
        raise StateError(json_pointer(path), _message(e))
