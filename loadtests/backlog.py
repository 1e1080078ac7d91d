"""A backlog longer than the heartbeat timeout, with nothing going wrong: every part of every job
must run once, with no retry and no failure.

    python -m loadtests.backlog                 # 25 jobs x 16 parts on 2 RQ workers, heartbeat timeout 5 s

Many small parts queue up behind two workers for longer than the heartbeat timeout, so the
reaper looks at parts that wait while workers take them. A part a worker has taken but not yet
started must not be taken for lost (RQ 3 holds it in the queue's intermediate list): before that
was known, such parts were retried, and a job whose part was retried twice failed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import engine_ext
from lab.serving import http_json, stack
from loadtests.stack import DEFAULT_REPORTS

TERMINAL = ("finished", "failed", "cancelled")


def run(jobs: int, parts: int, workers: int, heartbeat_timeout: float, log_dir: str) -> dict[str, Any]:
    env = {"KASHGAR_HEARTBEAT_TIMEOUT": str(heartbeat_timeout), "KASHGAR_HEARTBEAT_INTERVAL": "1",
           "KASHGAR_LOG_LEVEL": "WARNING"}
    state = engine_ext.new_game(players=2, seed=5).to_json(observer=0)
    t0 = time.monotonic()
    with stack(workers=workers, web_workers=2, env=env, log_dir=log_dir) as (_, web, _):
        urls = []
        t1 = time.monotonic()
        for i in range(jobs):
            status, body = http_json("POST", web.url + "/suggest", {"state": state, "iterations": 100 * parts,
                                                                    "parallel": parts, "seed": i, "mode": "async"})
            if status != 202:
                raise RuntimeError(f"job {i} not accepted: {status} {body}")
            urls.append(body["status_url"])
        done: dict[str, Any] = {}
        while len(done) < len(urls) and time.monotonic() - t0 < 600:
            for u in urls:
                if u not in done:
                    job = http_json("GET", web.url + u)[1]
                    if job["status"] in TERMINAL:
                        done[u] = job
            time.sleep(0.5)
        backlog_s = time.monotonic() - t1
    outcomes: dict[str, int] = {}
    for job in done.values():
        outcomes[job["status"]] = outcomes.get(job["status"], 0) + 1
    return {"jobs": jobs, "parts": jobs * parts, "rq_workers": workers, "heartbeat_timeout_s": heartbeat_timeout,
            "ended": len(done), "outcomes": outcomes,
            "part_retries": sum(len(p["history"]) for job in done.values() for p in job["parts"]),
            "backlog_s": round(backlog_s, 1), "wall_s": round(time.monotonic() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=25)
    ap.add_argument("--parts", type=int, default=16, help="root-parallel parts per job (100 iterations each)")
    ap.add_argument("--rq-workers", type=int, default=2)
    ap.add_argument("--heartbeat-timeout", type=float, default=5.0)
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    args = ap.parse_args(argv)
    out = run(args.jobs, args.parts, args.rq_workers, args.heartbeat_timeout, f"{args.reports}/backlog-logs")
    print(json.dumps(out, indent=2))
    ok = out["ended"] == out["jobs"] == out["outcomes"].get("finished", 0) and out["part_retries"] == 0
    print("OK: every part ran once" if ok else "FAILED: retries or jobs not finished")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
