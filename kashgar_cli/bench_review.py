"""`kashgar bench review`: the wall time of one game review (`POST /reviews`) on the embedded queue
and on 1, 2, ... RQ workers, each on a real stack started here (gunicorn, redis-server, `kashgar
worker`), and the speed-up over one worker. Runs the lab's serving helpers (`pip install -e
".[lab]"`)."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from kashgar_cli.errors import CliError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    def add(flag: str, **kw: Any) -> None:
        if flag not in parser._option_string_actions:
            parser.add_argument(flag, **kw)

    add("--record", default=None, help="review: the game record to review (default: a game expert plays itself)")
    add("--review-level", default="master", help="review: the level that judges (default master)")
    add("--review-workers", default="1,2", help="review: RQ worker counts to time, comma-separated (default 1,2)")


def _record(path: str | None) -> dict[str, Any]:
    if path:
        with open(path, encoding="utf-8") as f:
            return dict(json.load(f))
    from lab.review_noise import play

    return play("expert", 2, 7)


def _time_review(url: str, record: dict[str, Any], level: str) -> tuple[float, int]:
    from lab.serving import http_json

    t0 = time.monotonic()
    status, body = http_json("POST", url + "/reviews", {"record": record, "level": level}, timeout=60)
    if status != 202:
        raise CliError(f"POST /reviews answered {status}: {body}")
    while True:
        status, job = http_json("GET", url + body["status_url"], timeout=60)
        if job.get("status") == "finished" and job.get("result"):
            return time.monotonic() - t0, int(job["result"]["reviewed"])
        if job.get("status") in ("failed", "cancelled"):
            raise CliError(f"the review {job['status']}: {job.get('error')}")
        time.sleep(0.2)


def run(args: argparse.Namespace) -> int:
    from lab.serving import Gunicorn, RedisServer, Worker

    try:
        counts = [int(x) for x in str(args.review_workers).split(",") if x]
    except ValueError:
        raise CliError(f"--review-workers: want counts separated by commas, not {args.review_workers!r}") from None
    record = _record(args.record)
    env = {"KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_ASYNC_CLIENT_SECONDS": "0", "KASHGAR_ASYNC_TOTAL_SECONDS": "0"}
    rows: list[dict[str, Any]] = []
    with Gunicorn(env=env, workers=1) as web:
        wall, n = _time_review(web.url, record, args.review_level)
        rows.append({"queue": "embedded", "workers": 1, "wall_s": round(wall, 2), "decisions": n})
    for k in counts:
        with RedisServer() as redis_server:
            workers = [Worker(redis_server.url, env=env).start() for _ in range(k)]
            try:
                with Gunicorn(env={**env, "KASHGAR_REDIS_URL": redis_server.url}, workers=1) as web:
                    wall, n = _time_review(web.url, record, args.review_level)
            finally:
                for w in workers:
                    w.stop()
        rows.append({"queue": "redis", "workers": k, "wall_s": round(wall, 2), "decisions": n})
    one = next((r["wall_s"] for r in rows if r["queue"] == "redis" and r["workers"] == 1), None)
    for r in rows:
        r["speedup_vs_1_worker"] = round(one / r["wall_s"], 2) if one else None
    if args.json:
        print(json.dumps({"level": args.review_level, "moves": len(record["moves"]), "rows": rows}, indent=2))
    else:
        print(f"review of a {len(record['moves'])}-move game at {args.review_level}")
        print(f"{'queue':>9} {'workers':>7} {'wall s':>8} {'decisions':>9} {'speed-up':>8}")
        for r in rows:
            print(f"{r['queue']:>9} {r['workers']:>7} {r['wall_s']:>8} {r['decisions']:>9} "
                  f"{r['speedup_vs_1_worker'] or '-':>8}")
    return 0
