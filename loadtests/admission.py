"""One careless or hostile client against the real stack (gunicorn from `kashgar serve`, and with
`--backend redis` a `redis-server`, one `kashgar worker` and `--express-workers` (1) `kashgar worker
--express`), measured from outside:

- flood: client A sends `--flood` copies of `{"time_ms": 600000, "parallel": 16, "mode": "async"}`
  (9,600 search-seconds each): how many are accepted (202) and refused (429);
- backlog: A queues `--backlog` one-part jobs of `--part-s` seconds (1), then client B one
  100-iteration job: how long B waits for its answer (and how many of A's jobs finished
  meanwhile); A's jobs still running are cancelled after;
- cancel (Redis): A queues `--cancel-jobs` more jobs of 1 s and cancels every job it has: how
  many parts still wait in Redis right after, and how long a new job of B then takes;
- restarts (embedded): a 3 s job, and `kashgar serve` stopped (SIGTERM) and started again twice
  while it runs (same data directory): its end status and attempts.

Clients are told apart by X-Forwarded-For (the server trusts one proxy hop). It measures, it does
not judge; a server that has none of these defences is measured the same way (B's wait is then
capped at `--wait-s`).

    python -m loadtests.admission                     # embedded queue
    python -m loadtests.admission --backend redis
    python -m loadtests.admission --flood 0 --backlog 6 --part-s 600   # B behind A's allowance of 600 s parts
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any

import engine_ext
from lab.serving import Gunicorn, free_port, stack

ENV = {"KASHGAR_TRUSTED_PROXIES": "1", "KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_HEARTBEAT_INTERVAL": "0.5",
       "KASHGAR_HEARTBEAT_TIMEOUT": "5"}
TERMINAL = ("finished", "failed", "cancelled")


def call(method: str, url: str, body: Any = None, client: str = "") -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if client:
        headers["X-Forwarded-For"] = client
    req = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            raw, status = resp.read(), resp.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


def wait_job(url: str, limit_s: float) -> tuple[dict[str, Any] | None, float]:
    """The job once terminal (None if not within `limit_s`), and the seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        status, job = call("GET", url)
        if status == 200 and job["status"] in TERMINAL:
            return job, time.monotonic() - t0
        time.sleep(0.05)
    return None, time.monotonic() - t0


def flood(base: str, state: dict[str, Any], n: int) -> dict[str, Any]:
    body = {"state": state, "time_ms": 600_000, "parallel": 16, "mode": "async"}
    codes: dict[str, int] = {}
    t0 = time.monotonic()
    urls = []
    for _ in range(n):
        status, answer = call("POST", base + "/suggest", body, "10.9.0.1")
        codes[str(status)] = codes.get(str(status), 0) + 1
        if status == 202:
            urls.append(answer["status_url"])
    return {"sent": n, "answers": codes, "seconds": round(time.monotonic() - t0, 1), "urls": urls}


def backlog(base: str, state: dict[str, Any], n: int, wait_s: float, part_s: float = 1.0) -> dict[str, Any]:
    job = {"state": state, "time_ms": int(part_s * 1000), "parallel": 1, "mode": "async"}
    urls: list[str] = []
    codes: dict[str, int] = {}
    for _ in range(n):
        status, answer = call("POST", base + "/suggest", job, "10.9.0.1")
        codes[str(status)] = codes.get(str(status), 0) + 1
        if status == 202:
            urls.append(answer["status_url"])
    status, answer = call("POST", base + "/suggest", {"state": state, "iterations": 100, "mode": "async"},
                          "10.9.0.2")
    done, waited = wait_job(base + answer["status_url"], wait_s) if status == 202 else (None, 0.0)
    finished_meanwhile = 0
    for u in urls:
        _, j = call("GET", base + u)
        if isinstance(j, dict) and j.get("status") == "finished" and done is not None and j["finished_at"] > done[
                "created_at"] and j["finished_at"] < done["finished_at"]:
            finished_meanwhile += 1
    if part_s > 1.0:  # A's long jobs would hold the server for what follows
        for u in urls:
            call("DELETE", base + u, None, "10.9.0.1")
    return {"backlog_answers": codes, "b_status": status,
            "b_seconds": round(waited, 2), "b_job": done["status"] if done else f"not done after {wait_s:.0f} s",
            "a_jobs_finished_while_b_waited": finished_meanwhile, "urls": urls}


def redis_depth(url: str) -> int:
    import redis

    conn = redis.Redis.from_url(url)
    return (int(conn.llen("rq:queue:kashgar")) + int(conn.llen("rq:queue:kashgar-express"))
            + int(conn.hlen("kashgar:fair:parts")))


def cancel_all(base: str, state: dict[str, Any], urls: list[str], redis_url: str, wait_s: float,
               more: int) -> dict[str, Any]:
    """A queues `more` one-part jobs of 1 s, then cancels every job it has (`urls` too)."""
    job = {"state": state, "time_ms": 1000, "parallel": 1, "mode": "async"}
    for _ in range(more):
        status, answer = call("POST", base + "/suggest", job, "10.9.0.1")
        if status == 202:
            urls = [*urls, answer["status_url"]]
    before = redis_depth(redis_url)
    t0 = time.monotonic()
    for u in urls:
        call("DELETE", base + u, None, "10.9.0.1")
    cancel_s = time.monotonic() - t0
    after = redis_depth(redis_url)
    status, answer = call("POST", base + "/suggest", {"state": state, "iterations": 100, "mode": "async"},
                          "10.9.0.3")
    done, waited = wait_job(base + answer["status_url"], wait_s) if status == 202 else (None, 0.0)
    return {"cancelled": len(urls), "cancel_seconds": round(cancel_s, 1), "parts_waiting_before": before,
            "parts_waiting_right_after": after, "new_job_seconds": round(waited, 2),
            "new_job": done["status"] if done else f"not done after {wait_s:.0f} s"}


def restarts(state: dict[str, Any], log_dir: str, times: int = 2) -> dict[str, Any]:
    env = dict(ENV, KASHGAR_DATA_DIR=tempfile.mkdtemp(prefix="kashgar-data-"),
               KASHGAR_JOBS_DB=os.path.join(tempfile.mkdtemp(prefix="kashgar-jobs-"), "jobs.sqlite")
               if os.environ.get("KASHGAR_LOAD_JOBS_DB") else "")
    body = {"state": state, "time_ms": 3000, "parallel": 1, "mode": "async"}
    port = free_port()  # one address: the default job store is the address's
    with Gunicorn(env=env, workers=1, port=port, log_dir=log_dir) as web:
        status, answer = call("POST", web.url + "/suggest", body)
        path = answer["status_url"]
        time.sleep(1.0)
    seen = []
    for _ in range(times):
        with Gunicorn(env=env, workers=1, port=port, log_dir=log_dir) as web:
            status, job = call("GET", web.url + path)
            seen.append(status if status != 200 else job["parts"][0]["status"])
            time.sleep(1.5)
    with Gunicorn(env=env, workers=1, port=port, log_dir=log_dir) as web:
        done, _ = wait_job(web.url + path, 60)
        status, job = call("GET", web.url + path)
    if status != 200:
        return {"after_restarts": seen, "end": f"{status} (job gone)"}
    return {"after_restarts": seen, "end": job["status"], "attempt": job["parts"][0]["attempt"],
            "history": [h.get("error") for h in job["parts"][0]["history"]]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=("embedded", "redis"), default="embedded")
    ap.add_argument("--flood", type=int, default=None, help="big requests sent (default 1000 embedded, 500 Redis)")
    ap.add_argument("--backlog", type=int, default=20, help="jobs A queues before B's")
    ap.add_argument("--part-s", type=float, default=1.0, help="seconds of each of A's backlog jobs")
    ap.add_argument("--express-workers", type=int, default=1, help="`kashgar worker --express` beside the one (Redis)")
    ap.add_argument("--cancel-jobs", type=int, default=500, help="1 s jobs A queues, then cancels (Redis)")
    ap.add_argument("--wait-s", type=float, default=60.0, help="longest wait for B's job")
    ap.add_argument("--json", default=None, help="write the figures here too")
    args = ap.parse_args(argv)
    state = dict(engine_ext.new_game(players=2, seed=5).to_json(observer=0))
    logs = tempfile.mkdtemp(prefix="kashgar-admission-")
    out: dict[str, Any] = {"backend": args.backend, "date": time.strftime("%Y-%m-%d %H:%M")}
    n = args.flood if args.flood is not None else (1000 if args.backend == "embedded" else 500)
    if args.backend == "embedded":
        with Gunicorn(env=ENV, workers=2, log_dir=logs) as web:
            f = flood(web.url, state, n)
            for u in f.pop("urls"):  # a server that took them is freed for what follows
                call("DELETE", web.url + u, None, "10.9.0.1")
            out["flood"] = f
            b = backlog(web.url, state, args.backlog, args.wait_s, args.part_s)
            b.pop("urls")
            out["backlog"] = b
        out["restarts"] = restarts(state, logs)
    else:
        with stack(workers=1, web_workers=2, env=ENV, log_dir=logs, express_workers=args.express_workers) as (
                redis_server, web, _):
            f = flood(web.url, state, n)
            big = f.pop("urls")
            out["flood"] = f
            b = backlog(web.url, state, args.backlog, args.wait_s, args.part_s)
            out["backlog"] = {k: v for k, v in b.items() if k != "urls"}
            out["cancel"] = cancel_all(web.url, state, big + b["urls"], redis_server.url, args.wait_s,
                                       args.cancel_jobs)
    print(json.dumps(out, indent=2))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
