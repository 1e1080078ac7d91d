"""`kashgar bench state`: what reading a state document costs, per document, on typical states (2 to
4 players, early to late, full states and views): the schema check as the loader runs it (a
compiled check, `engine_ext.document.schema`), the jsonschema pass it replaced (still what names a
wrong field), and the whole load (`engine_ext.from_json`)."""

from __future__ import annotations

import argparse
import json
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import engine_ext
from engine_ext.document import schema as document_schema
from kashgar_cli.provenance import provenance


def typical_states(count: int = 24) -> list[dict[str, Any]]:
    """States of random games at several points, as full states and as a seat's view."""
    rnd = random.Random(7)
    out: list[dict[str, Any]] = []
    for i in range(count // 2):
        g = engine_ext.new_game(2 + i % 3, seed=i)
        for _ in range(rnd.randrange(0, 120)):
            if g.is_terminal:
                break
            g.apply(rnd.choice(g.legal_codes()))
        out += [g.to_json(), g.view(i % g.players)]
    return out


def _per_call_ms(fn: Callable[[dict[str, Any]], Any], docs: list[dict[str, Any]], seconds: float) -> float:
    calls = 0
    t0 = time.perf_counter()
    while True:
        for doc in docs:
            fn(doc)
        calls += len(docs)
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return round(elapsed / calls * 1000, 4)


def bench_state(seconds: float) -> dict[str, Any]:
    docs = typical_states()
    slow = document_schema._validator()
    rows = {
        "schema check (compiled, as loaded)": _per_call_ms(document_schema.validate_schema, docs, seconds),
        "schema check (jsonschema, before)": _per_call_ms(lambda d: list(slow.iter_errors(d)), docs, seconds),
        "whole load (from_json)": _per_call_ms(engine_ext.from_json, docs, seconds),
    }
    size = sum(len(json.dumps(d)) for d in docs) // len(docs)
    return {"benchmark": "state", "machine": platform.machine(), "provenance": provenance(), "documents": len(docs),
            "mean_bytes": size, "ms_per_document": rows}


def run(args: argparse.Namespace) -> int:
    result = bench_state(args.seconds)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    made = result["provenance"]
    print(f"kashgar bench state  {made['date']}  {result['machine']}  {made['cores']} cores  Python {made['python']}")
    print(f"{result['documents']} documents, {result['mean_bytes']} bytes on average")
    for name, ms in result["ms_per_document"].items():
        print(f"{name:>36} {ms:>8.3f} ms")
    return 0
