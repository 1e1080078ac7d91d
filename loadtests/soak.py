"""Soak: 10 minutes at 80% of the saturation throughput of the fast level, on a stack on
loopback; zero failed requests, and the memory (RSS) of the web and worker processes sampled
every few seconds and reported flat or not.

    python -m loadtests.soak                                  # 80% of saturation.json's fast level
                                                              # (run loadtests.saturation first)
    python -m loadtests.soak --rps 40 --minutes 10 --level casual
    mkdir -p loadtests/reports && nohup python -m loadtests.soak > loadtests/reports/soak.out 2>&1 &

The traffic: sync `/suggest` at the level, paced to the target rate (locust constant throughput),
plus one async user (a 1500-iteration job every 5-10 s, polled) so that the RQ worker works too.
Memory is flat when, for every process, the median RSS of the last minute is within 10% (and
20 MiB) of the median RSS of the second minute (the first minute is warm-up).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

from loadtests.stack import DEFAULT_REPORTS, cores, run_locust, sample_rss, start_stack


def flatness(samples: list[dict[str, Any]], group: str, window_s: float = 60.0) -> dict[str, Any]:
    """Per process of `group`: RSS (MiB) of the second minute vs the last minute."""
    if not samples:
        return {}
    t0, t_end = samples[0]["t"], samples[-1]["t"]
    out: dict[str, Any] = {}
    pids = {pid for s in samples for pid in s[group]}
    for pid in sorted(pids):
        early = [s[group][pid] for s in samples if window_s <= s["t"] - t0 < 2 * window_s and s[group].get(pid)]
        late = [s[group][pid] for s in samples if s["t"] >= t_end - window_s and s[group].get(pid)]
        if not early or not late:
            continue
        a, b = statistics.median(early) / 1024, statistics.median(late) / 1024
        growth = b - a
        out[pid] = {
            "rss_mib_minute2": round(a, 1),
            "rss_mib_last_minute": round(b, 1),
            "growth_mib": round(growth, 1),
            "growth_pct": round(100 * growth / a, 1) if a else 0.0,
            "max_mib": round(max(s[group].get(pid, 0) for s in samples) / 1024, 1),
            "flat": growth <= 0.10 * a and growth <= 20.0,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--level", default=None, help="default: the fast level of saturation.json")
    ap.add_argument("--rps", type=float, default=None, help="target req/s (default: 80%% of saturation)")
    ap.add_argument("--fraction", type=float, default=0.8)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--users", type=int, default=8, help="sync users sharing the target rate")
    ap.add_argument("--sample-every", type=float, default=5.0)
    ap.add_argument("--saturation", default=str(DEFAULT_REPORTS / "saturation.json"))
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    args = ap.parse_args(argv)
    reports = Path(args.reports)
    level, rps, source = args.level, args.rps, "given"
    if rps is None or level is None:
        if not Path(args.saturation).exists():
            print(
                f"soak: {args.saturation} not found; run `python -m loadtests.saturation` first, "
                "or give both --level and --rps",
                file=sys.stderr,
            )
            return 2
        sat = json.loads(Path(args.saturation).read_text())
        fast_level, fast = next(iter(sat["levels"].items()))
        level = level or fast_level
        if rps is None:
            rps = round(args.fraction * sat["levels"][level]["saturation_rps"], 1)
            source = f"{args.fraction:.0%} of {sat['levels'][level]['saturation_rps']} req/s ({args.saturation})"
    assert level is not None and rps is not None
    run_s = int(args.minutes * 60)
    print(f"soak: {level} at {rps} req/s ({source}) for {run_s} s on {cores()} cores", flush=True)
    samples: list[dict[str, Any]] = []
    with start_stack(rq_workers=1, log_dir=reports / "soak-logs") as stack:
        done = threading.Event()

        def sampler() -> None:
            while not done.wait(args.sample_every):
                samples.append(sample_rss(stack))

        samples.append(sample_rss(stack))
        th = threading.Thread(target=sampler, daemon=True)
        th.start()
        t0 = time.time()
        res = run_locust(
            stack.url,
            users=args.users + 1,
            spawn_rate=args.users + 1,
            run_time=f"{run_s}s",
            name="soak",
            reports=reports,
            tags=["suggest", "async"],
            env={
                "KASHGAR_LOAD_LEVELS": level,
                "KASHGAR_LOAD_THROUGHPUT": str(rps / args.users),
                "KASHGAR_LOAD_WEIGHTS": f"suggest:{args.users},async:1",
                "KASHGAR_LOAD_ASYNC_THINK": "5,10",
                "KASHGAR_LOAD_ASYNC_ITERATIONS": "1500",
            },
            timeout=run_s + 120,
        )
        done.set()
        th.join(10)
        wall = time.time() - t0
    web = flatness(samples, "web")
    workers = flatness(samples, "workers")
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "cores": cores(),
        "level": level,
        "target_rps": rps,
        "target_source": source,
        "seconds": round(wall, 1),
        "requests": res.count(),
        "failures": res.failures(),
        "rps": round(res.figure("Requests/s"), 2),
        "sync": {
            k: res.figure(c, f"/suggest [{level}]")
            for k, c in (("rps", "Requests/s"), ("p50_ms", "50%"), ("p95_ms", "95%"), ("p99_ms", "99%"))
        },
        "async_jobs": res.count("async search [total]"),
        "async_failures": res.failures("async search [total]"),
        "rss_samples": len(samples),
        "web_rss": web,
        "worker_rss": workers,
        "memory_flat": all(v["flat"] for v in (*web.values(), *workers.values())),
        "locust_returncode": res.returncode,
    }
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "soak.json").write_text(json.dumps(result, indent=2) + "\n")
    (reports / "soak_rss.json").write_text(json.dumps(samples) + "\n")
    print(json.dumps(result, indent=2))
    ok = result["failures"] == 0 and result["requests"] > 0
    print(
        ("OK" if ok else "FAILED") + f": {result['failures']} failed of {result['requests']} requests; "
        f"memory {'flat' if result['memory_flat'] else 'NOT flat'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
