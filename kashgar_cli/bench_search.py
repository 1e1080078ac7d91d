"""`kashgar bench search [--json]`: search speed on fixed positions, ours and OpenSpiel's.

Positions: 2, 3 and 4 players, the opening (deal seed 1) and a midgame (60 seeded random
decisions later, between turns). For each: our SO-ISMCTS (default settings, or a level or
`ismcts:` spec given with `--bot`; the default builds) in iterations per second on one core, and
OpenSpiel's Python ISMCTSBot on the same position (our adapter, its random-rollout evaluator),
plus the size of a 100,000-iteration tree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import time
from typing import Any

from kashgar_cli.errors import CliError, at_least, positive_int
from kashgar_cli.provenance import provenance


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--search-iterations", type=positive_int, default=20000, help="our iterations per position")
    # OpenSpiel's first simulation only expands the root: one alone leaves it unvisited (an assertion)
    parser.add_argument("--os-iterations", type=at_least(2), default=40,
                        help="OpenSpiel ISMCTS iterations per position (at least 2)")
    parser.add_argument("--no-openspiel", action="store_true", help="skip OpenSpiel's ISMCTS")
    parser.add_argument("--tree-iterations", type=positive_int, default=100000, help="iterations of the tree-size run")
    parser.add_argument("--bot", default="", help="our search's settings: a level (e.g. master) or an ismcts: "
                        "spec (e.g. ismcts:macro=1,rollout=turn); default: the default settings")


def positions(players: int, engine: Any) -> dict[str, Any]:
    g = engine.new_game(players=players, seed=1)
    out = {"opening": g.clone()}
    rng = random.Random(players)
    k = 0
    while k < 60 or g.state.pending() != 0:
        codes = g.legal_codes()
        g.state.apply(codes[rng.randrange(len(codes))])
        k += 1
    out["midgame"] = g
    return out


def run(args: argparse.Namespace) -> int:
    import engine_ext
    from bots import build_for
    from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig
    from lab.bots import make_bot

    spec = str(getattr(args, "bot", "") or "")
    try:
        ours = make_bot(spec) if spec else ISMCTSBot()
    except ValueError as exc:
        raise CliError(f"argument --bot: {exc}") from None
    if not isinstance(ours, ISMCTSBot):
        raise CliError(f"argument --bot: {spec!r}: want a level or an ismcts: spec")
    config: ISMCTSConfig = ours.config
    eng = engine_ext.get_engine()
    iters = int(getattr(args, "search_iterations", 20000))
    os_iters = int(getattr(args, "os_iterations", 40))
    use_os = not getattr(args, "no_openspiel", False)
    if use_os:
        try:
            from lab.openspiel_adapter import OpenSpielISMCTS
        except ImportError:
            use_os = False
    from kashgar_cli.progress import Progress

    rows = []
    todo = [(n, name, g) for n in (2, 3, 4) for name, g in positions(n, eng).items()]
    bar = Progress(len(todo) + 1, unit="run", desc="bench search")
    for n, name, g in todo:
        bot = ISMCTSBot(config)
        bot.search(g.state, iterations=min(iters, 500), seed=0)  # warm up
        cpu0 = time.process_time()
        s, done, ms = bot.search(g.state, iterations=iters, seed=1)
        cpu = max(time.process_time() - cpu0, 1e-9)  # this process's CPU time: what a shared machine
        row: dict[str, Any] = {"players": n, "position": name, "iterations": done,  # does not inflate
                               "ours_it_per_s": round(done / ms * 1000.0, 1),
                               "ours_it_per_cpu_s": round(done / cpu, 1), "tree_nodes": s.tree.size}
        if use_os:
            # warmed up as ours is (the first call imported OpenSpiel's modules inside the clock)
            OpenSpielISMCTS(iterations=2).analyse(g, seed=0)
            t0 = time.perf_counter()
            OpenSpielISMCTS(iterations=os_iters).analyse(g, seed=1)
            dt = time.perf_counter() - t0
            row["openspiel_it_per_s"] = round(os_iters / dt, 1)
            row["ratio"] = round(row["ours_it_per_s"] / row["openspiel_it_per_s"], 1)
        rows.append(row)
        bar.update(len(rows))
    mid2 = positions(2, eng)["midgame"]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    s, done, ms = ISMCTSBot(config).search(mid2.state, iterations=int(getattr(args, "tree_iterations", 100000)),
                                     seed=2)
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    bar.update(len(rows) + 1)
    bar.close()
    result: dict[str, Any] = {
        "engine_compiled": bool(eng.COMPILED), "search_compiled": build_for(mid2.state).compiled,
        "cores": 1, "machine_cores": os.cpu_count(), "bot": spec or "ismcts", "provenance": provenance(),
        "positions": rows,
        "tree": {"iterations": done, "nodes": s.tree.size, "array_bytes": s.tree.nbytes(),
                 "max_rss_growth_bytes": max(0, rss1 - rss0) * 1024, "max_rss_bytes": rss1 * 1024,
                 "seconds": round(ms / 1000.0, 2), "it_per_s": round(done / ms * 1000.0, 1)},
    }
    if getattr(args, "json", False):
        print(json.dumps(result, indent=2))
        return 0
    print(f"engine compiled: {result['engine_compiled']}, search compiled: {result['search_compiled']}, "
          f"our search: {result['bot']}")
    print(f"{'players':>7} {'position':<9} {'ours it/s':>10} {'it/CPU s':>9} {'OpenSpiel it/s':>15} {'ratio':>7}")
    for r in rows:
        print(f"{r['players']:>7} {r['position']:<9} {r['ours_it_per_s']:>10.0f} {r['ours_it_per_cpu_s']:>9.0f} "
              f"{r.get('openspiel_it_per_s', float('nan')):>15.1f} {r.get('ratio', float('nan')):>7.1f}")
    t = result["tree"]
    print(f"tree of {t['iterations']} iterations: {t['nodes']} nodes, {t['array_bytes'] / 1e6:.1f} MB of arrays, "
          f"max RSS grew {t['max_rss_growth_bytes'] / 1e6:.1f} MB (process {t['max_rss_bytes'] / 1e6:.0f} MB), "
          f"{t['seconds']} s")
    return 0
