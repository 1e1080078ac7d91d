"""The compiled schema check (jsonschema-rs) that lets a valid state through without the slower
jsonschema pass never lets through a document the jsonschema pass refuses: every field of a
full state, a view and a mid-turn state replaced by values of other types, bounds and shapes."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

import engine_ext
from engine_ext.document import schema as document_schema

REPLACEMENTS: list[Any] = [None, True, 0, -1, 3.0, 0.5, 10**30, "", "x", "patriarch", [], [1], (1, 2), {}, {1: 2},
                           {"count": 3}, {"cards": []}]


def documents() -> list[dict[str, Any]]:
    g = engine_ext.new_game(3, seed=5)
    mid = None
    for _ in range(40):
        doc = g.to_json()
        if doc["pending"] and mid is None:
            mid = doc
        g.apply(g.legal_codes()[0])
    out = [g.to_json(), g.view(1)]
    return out + ([mid] if mid else [])


def paths(node: Any, here: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield here
    if isinstance(node, dict):
        for k, v in node.items():
            yield from paths(v, (*here, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from paths(v, (*here, i))


def replaced(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def test_the_compiled_check_accepts_only_what_jsonschema_accepts() -> None:
    slow = document_schema._validator()
    accepted = 0
    for doc in documents():
        assert document_schema._valid_fast(doc)  # a real state takes the fast path
        for path in list(paths(doc))[1:]:
            for value in REPLACEMENTS:
                mutated = replaced(doc, path, value)
                if document_schema._valid_fast(mutated):
                    accepted += 1
                    errors = list(slow.iter_errors(mutated))
                    assert not errors, (path, value, errors[0].message)
            extra = replaced(doc, (*path[:-1], "unknown_field"), 1) if isinstance(path[-1], str) else None
            if extra is not None:
                assert not document_schema._valid_fast(extra) or not list(slow.iter_errors(extra)), path
    assert accepted  # some mutations are valid states (the comparison ran on both outcomes)


@pytest.mark.parametrize("value", [3.0, True, (1, 2, 3)])
def test_a_value_the_compiled_check_reads_otherwise_goes_to_jsonschema(value: Any) -> None:
    doc = documents()[0]
    doc["turn"] = value
    assert not document_schema._valid_fast(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, document_schema.state_schema(), cls=document_schema._StrictValidator)
