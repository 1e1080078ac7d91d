"""Saturation curve: requests per second and p50/p95/p99 latency of synchronous `/suggest` as
closed-loop users (no think time) grow, for a fast and a slow level, against a stack on loopback;
compared with the limit cores / search time.

    python -m loadtests.saturation                         # casual (fast) and master (slow)
    python -m loadtests.saturation --levels club --users 1 2 4 8 --step 20

The search time of a level is measured first, in this process, on the same corpus states
(mean of `analyse_state` at that level over 24 states); the limit is `cores / search time`. The locust
process runs on the same machine and takes its share of the cores: the figures are a lower bound
of what the service does with the machine to itself.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from loadtests.corpus import load as load_corpus
from loadtests.stack import DEFAULT_REPORTS, cores, run_locust, start_stack


def search_ms(level: str, samples: int = 24) -> float:
    """Mean wall time (ms) of one search at `level` on corpus states, in this process (the mean,
    not the median: throughput is bounded by the mean cost of a request)."""
    from bots.suggest import analyse_state

    entries = load_corpus()[:: max(1, len(load_corpus()) // samples)][:samples]
    analyse_state(entries[0]["state"], level=level, seed=0)  # warm up
    times = []
    for i, e in enumerate(entries):
        t0 = time.perf_counter()
        analyse_state(e["state"], level=level, seed=i)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.fmean(times)


def curve(url: str, level: str, users: list[int], step_s: int, reports: Path) -> list[dict[str, Any]]:
    rows = []
    for u in users:
        res = run_locust(
            url,
            users=u,
            spawn_rate=u,
            run_time=f"{step_s}s",
            name=f"saturation-{level}-u{u}",
            reports=reports,
            tags=["suggest"],
            env={"KASHGAR_LOAD_LEVELS": level, "KASHGAR_LOAD_THINK": "0", "KASHGAR_LOAD_WEIGHTS": "suggest:1"},
        )
        row = {
            "users": u,
            "requests": res.count(),
            "failures": res.failures(),
            "rps": round(res.figure("Requests/s"), 2),
            "p50_ms": res.figure("50%"),
            "p95_ms": res.figure("95%"),
            "p99_ms": res.figure("99%"),
        }
        rows.append(row)
        print(f"  {level} users={u}: {json.dumps(row)}", flush=True)
    return rows


def saturation_point(rows: list[dict[str, Any]], gain: float = 0.05) -> dict[str, Any]:
    """The first step after which more users add less than `gain` throughput; the best rps."""
    best = max(rows, key=lambda r: r["rps"])
    knee = rows[-1]
    for prev, cur in zip(rows, rows[1:], strict=False):
        if cur["rps"] < prev["rps"] * (1 + gain):
            knee = prev
            break
    return {"saturates_at_users": knee["users"], "saturation_rps": knee["rps"], "max_rps": best["rps"]}


def markdown(result: dict[str, Any]) -> str:
    out = []
    for level, r in result["levels"].items():
        out.append(
            f"**{level}**: search {r['search_ms']:.1f} ms, limit {r['limit_rps']:.1f} req/s "
            f"({result['cores']} cores / search time); max {r['max_rps']:.1f} req/s = "
            f"{100 * r['max_rps'] / r['limit_rps']:.0f}% of the limit; saturates at {r['saturates_at_users']} users "
            f"({r['saturation_rps']:.1f} req/s)\n"
        )
        out.append("| users | req/s | p50 ms | p95 ms | p99 ms | failures |")
        out.append("|---:|---:|---:|---:|---:|---:|")
        for row in r["curve"]:
            out.append(
                f"| {row['users']} | {row['rps']:.1f} | {row['p50_ms']:.0f} | {row['p95_ms']:.0f} | "
                f"{row['p99_ms']:.0f} | {row['failures']} |"
            )
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", nargs="*", default=["casual", "master"], help="fast level first, then slow")
    ap.add_argument("--users", nargs="*", type=int, default=[1, 2, 3, 4, 6, 8])
    ap.add_argument("--step", type=int, default=15, help="seconds per step")
    ap.add_argument("--web-workers", type=int, default=None)
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    ap.add_argument("--json", default=None, help="write the result here (default <reports>/saturation.json)")
    args = ap.parse_args(argv)
    reports = Path(args.reports)
    n = cores()
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "cores": n,
        "step_s": args.step,
        "levels": {},
    }
    with start_stack(web_workers=args.web_workers, rq_workers=1, log_dir=reports / "saturation-logs") as stack:
        result["web_workers"] = args.web_workers or n
        for level in args.levels:
            ms = search_ms(level)
            limit = n / (ms / 1000)
            print(f"{level}: search {ms:.1f} ms -> limit {limit:.1f} req/s on {n} cores", flush=True)
            rows = curve(stack.url, level, args.users, args.step, reports)
            result["levels"][level] = {
                "search_ms": round(ms, 2),
                "limit_rps": round(limit, 2),
                "curve": rows,
                **saturation_point(rows),
            }
    text = json.dumps(result, indent=2)
    out = Path(args.json or reports / "saturation.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text + "\n")
    print(text)
    print(markdown(result))
    return 0 if all(r["failures"] == 0 for lv in result["levels"].values() for r in lv["curve"]) else 1


if __name__ == "__main__":
    sys.exit(main())
