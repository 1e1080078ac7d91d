"""Run the locust load test headless against a stack it starts on loopback, or against a service
that already runs, and write the CSV and HTML reports.

    python -m loadtests.run_stack                       # 60 s, 6 users, the full mix
    python -m loadtests.run_stack --users 10 --run-time 5m --tags suggest
    python -m loadtests.run_stack --shape step          # step load (KASHGAR_STEP_* knobs)
    python -m loadtests.run_stack --host http://127.0.0.1:8000   # a service you started

The stack: a `redis-server`, `--rq-workers` RQ workers (`kashgar worker`) and gunicorn
(`kashgar serve`, `--web-workers` processes, default one per core), each on a free loopback port.
Reports: `<reports>/<name>_stats.csv`, `_stats_history.csv`, `_failures.csv`, `_exceptions.csv`
and `<name>.html`. The exit status is 1 when any request failed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from loadtests.stack import DEFAULT_REPORTS, LocustResult, is_loopback, run_locust, start_stack


def report(result: LocustResult) -> dict[str, object]:
    rows = {
        name: {
            "requests": int(r["Request Count"]),
            "failures": int(r["Failure Count"]),
            "rps": round(float(r["Requests/s"]), 2),
            "p50_ms": r["50%"],
            "p95_ms": r["95%"],
            "p99_ms": r["99%"],
        }
        for name, r in result.rows.items()
    }
    return {"returncode": result.returncode, "csv": f"{result.csv_prefix}_stats.csv", "html": str(result.html), **rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default=None, help="a running service to test instead of starting a stack")
    ap.add_argument("--allow-remote", action="store_true", help="allow a --host that is not a loopback address")
    ap.add_argument("--users", type=int, default=6)
    ap.add_argument("--spawn-rate", type=float, default=2.0)
    ap.add_argument("--run-time", default="60s", help="locust --run-time (bounded; default 60s)")
    ap.add_argument("--tags", nargs="*", default=None, help="suggest, async, rules (default: all)")
    ap.add_argument("--shape", choices=["step"], default=None, help="use the step-load shape")
    ap.add_argument("--web-workers", type=int, default=None, help="gunicorn workers (default: one per core)")
    ap.add_argument("--rq-workers", type=int, default=1)
    ap.add_argument("--embedded", action="store_true", help="no Redis: the embedded job queue")
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    ap.add_argument("--name", default="run")
    args = ap.parse_args(argv)

    def go(host: str) -> int:
        res = run_locust(
            host,
            users=args.users,
            spawn_rate=args.spawn_rate,
            run_time=args.run_time,
            name=args.name,
            reports=args.reports,
            tags=args.tags,
            shape=args.shape == "step",
        )
        print(json.dumps(report(res), indent=2))
        if not res.rows:
            print(res.output[-3000:], file=sys.stderr)
            return 2
        failed = res.failures()
        if failed:
            print(f"FAILED: {failed} failed requests (see {res.csv_prefix}_failures.csv)", file=sys.stderr)
            return 1
        return 0

    if args.host:
        if not is_loopback(args.host) and not args.allow_remote:
            print(f"{args.host} is not a loopback address; pass --allow-remote to load-test it", file=sys.stderr)
            return 2
        return go(args.host)
    logs = Path(args.reports) / f"{args.name}-logs"
    with start_stack(
        web_workers=args.web_workers, rq_workers=args.rq_workers, redis=not args.embedded, log_dir=logs
    ) as stack:
        print(
            f"stack: {stack.url} redis={stack.redis.url if stack.redis else 'embedded'} "
            f"rq_workers={len(stack.workers)} logs={logs}",
            flush=True,
        )
        return go(stack.url)


if __name__ == "__main__":
    sys.exit(main())
