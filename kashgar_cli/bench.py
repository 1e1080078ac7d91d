"""`kashgar bench engine|search|service [--json]`: speed measured in one run.

`bench state` times reading a state document (`kashgar_cli.bench_state`).
`bench engine` plays the same seeded random games on the compiled and the interpreted core
in one process and reports games/s, decisions/s, their ratio, and the size of a state clone.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
from typing import Any

import engine_ext
from kashgar_cli.errors import float_above
from kashgar_cli.provenance import provenance


def _measure(engine: engine_ext.Engine, players: int, seconds: float, max_games: int) -> dict[str, Any]:
    """Random playouts from fresh setups (clone of a prepared start, then play to the end)."""
    starts = [engine.new_game(players, seed=s).state for s in range(16)]
    games = decisions = 0
    t0 = time.perf_counter()
    while games < max_games:
        st = starts[games % len(starts)].clone()
        decisions += st.playout(games)
        games += 1
        if time.perf_counter() - t0 >= seconds:
            break
    elapsed = time.perf_counter() - t0
    return {"games": games, "decisions": decisions, "seconds": round(elapsed, 3),
            "games_per_s": round(games / elapsed, 1), "decisions_per_s": round(decisions / elapsed),
            "decisions_per_game": round(decisions / max(games, 1), 1)}


def _clone_bytes(engine: engine_ext.Engine) -> int:
    """Bytes of one State clone (the object, with its arrays)."""
    st = engine.new_game(2, seed=0).state
    size = sys.getsizeof(st)
    if not engine.COMPILED:
        size += sys.getsizeof(st.d) + sys.getsizeof(st.legal_buf) + 28 * (len(st.d) + len(st.legal_buf))
    return size


def bench_engine(seconds: float, players: list[int]) -> dict[str, Any]:
    out: dict[str, Any] = {"benchmark": "engine", "machine": platform.machine(), "provenance": provenance(),
                           "results": []}
    from kashgar_cli.progress import Progress

    have_compiled = engine_ext.compiled_available()
    bar = Progress(len(players) * (2 if have_compiled else 1), unit="run", desc="bench engine")
    for n in players:
        row: dict[str, Any] = {"players": n}
        interp = _measure(engine_ext.get_engine(False), n, seconds, 10**9)
        bar.update(bar.count + 1)
        row["interpreted"] = interp
        if have_compiled:
            comp = _measure(engine_ext.get_engine(True), n, seconds, 10**9)
            bar.update(bar.count + 1)
            row["compiled"] = comp
            row["ratio"] = round(comp["decisions_per_s"] / interp["decisions_per_s"], 1)
        out["results"].append(row)
    bar.close()
    out["clone_bytes"] = {"interpreted": _clone_bytes(engine_ext.get_engine(False))}
    if have_compiled:
        out["clone_bytes"]["compiled"] = _clone_bytes(engine_ext.get_engine(True))
    return out


def _print_engine(r: dict[str, Any]) -> None:
    made = r["provenance"]
    print(f"kashgar bench engine  {made['date']}  {r['machine']}  {made['cores']} cores  Python {made['python']}")
    print(f"{'players':>7} {'build':>12} {'games/s':>10} {'decisions/s':>13} {'dec/game':>9}")
    for row in r["results"]:
        for build in ("compiled", "interpreted"):
            if build in row:
                m = row[build]
                print(f"{row['players']:>7} {build:>12} {m['games_per_s']:>10} {m['decisions_per_s']:>13,} "
                      f"{m['decisions_per_game']:>9}")
        if "ratio" in row:
            print(f"{'':>7} {'ratio':>12} {row['ratio']:>10}x")
    print("state clone: " + ", ".join(f"{k} {v} bytes" for k, v in r["clone_bytes"].items()))


def player_counts(text: str) -> list[int]:
    """An argparse type: player counts separated by commas, each 2, 3 or 4."""
    try:
        counts = [int(x) for x in text.split(",")]
    except ValueError:
        counts = []
    if not counts or any(n not in (2, 3, 4) for n in counts):
        raise argparse.ArgumentTypeError(f"want player counts (2, 3 or 4) separated by commas, not {text!r}")
    return counts


def _run(args: argparse.Namespace) -> int:
    if args.what == "engine":
        result = bench_engine(args.seconds, args.players)
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            _print_engine(result)
        return 0
    module = {"search": "kashgar_cli.bench_search", "service": "kashgar_cli.bench_service",
              "state": "kashgar_cli.bench_state", "review": "kashgar_cli.bench_review"}[args.what]
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError:
        print(f"kashgar bench {args.what}: not available in this build", file=sys.stderr)
        return 2
    return int(mod.run(args) or 0)


def register(sub: Any) -> None:
    p = sub.add_parser("bench", help="benchmarks: engine, search, service, state, review")
    p.add_argument("what", choices=["engine", "search", "service", "state", "review"])
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--seconds", type=float_above(0), default=3.0, help="time per measurement (engine, state)")
    p.add_argument("--players", type=player_counts, default="2,3,4", help="player counts (engine)")
    for name in ("kashgar_cli.bench_search", "kashgar_cli.bench_service", "kashgar_cli.bench_review"):
        try:
            mod = importlib.import_module(name)
        except ModuleNotFoundError:
            continue
        if hasattr(mod, "add_arguments"):
            try:
                mod.add_arguments(p)
            except argparse.ArgumentError:
                pass
    p.set_defaults(func=_run)
