"""How long a health probe waits while every web worker is busy: `/readyz` on the API port (in the
queue of the searches) against `/readyz` on the health port of gunicorn's master
(`KASHGAR_HEALTH_BIND`, `service.health_listener`).

    python -m loadtests.probes                  # 2 web workers, 8 clients of 2 s sync searches, 60 s

Closed-loop clients (no think time) send synchronous `/suggest` requests with a time budget, so
requests queue behind the web workers. Each port is probed from a thread of its own, one probe
at a time, the next a second after the last was sent or as soon as it was answered if that took
longer (so the API port, whose probes wait for the queue, gets fewer), with the timeouts a
Kubernetes probe would have (30 s on the API port, 5 s on the health port). Embedded queue (no
Redis).
"""

from __future__ import annotations

import argparse
import http.client
import json
import statistics
import sys
import threading
import time
from typing import Any

import engine_ext
from lab.serving import free_port, http_json
from loadtests.stack import DEFAULT_REPORTS, start_stack


def _probe_loop(url: str, timeout: float, until: float, out: list[float], failed: list[str]) -> None:
    while time.monotonic() < until:
        t0 = time.monotonic()
        try:
            status, _ = http_json("GET", url, timeout=timeout)
            if status == 200:
                out.append(time.monotonic() - t0)
            else:
                failed.append(str(status))
        except (OSError, http.client.HTTPException) as exc:  # a timeout, a refused or cut connection
            failed.append(type(exc).__name__)
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))


def _client_loop(url: str, body: dict[str, Any], until: float, done: list[int]) -> None:
    while time.monotonic() < until:
        try:
            status, _ = http_json("POST", url, body, timeout=120)
        except OSError:
            status = 0
        done.append(status)


def _summary(times: list[float], failed: list[str]) -> dict[str, Any]:
    if not times:
        return {"answered": 0, "failed": len(failed)}
    ordered = sorted(times)
    return {"answered": len(times), "failed": len(failed), "median_s": round(statistics.median(ordered), 3),
            "p95_s": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 3),
            "max_s": round(ordered[-1], 3)}


def run(web_workers: int, clients: int, search_ms: int, seconds: float, log_dir: str) -> dict[str, Any]:
    health_port = free_port()
    env = {"KASHGAR_HEALTH_BIND": f"127.0.0.1:{health_port}", "KASHGAR_LOG_LEVEL": "WARNING"}
    state = engine_ext.new_game(players=2, seed=5).to_json(observer=0)
    body = {"state": state, "time_ms": search_ms, "mode": "sync", "seed": 1}
    with start_stack(web_workers=web_workers, redis=False, env=env, log_dir=log_dir) as st:
        until = time.monotonic() + seconds
        done: list[int] = []
        api: tuple[list[float], list[str]] = ([], [])
        master: tuple[list[float], list[str]] = ([], [])
        threads = [threading.Thread(target=_client_loop, args=(st.web.url + "/suggest", body, until, done))
                   for _ in range(clients)]
        for t in threads:
            t.start()
        time.sleep(min(3.0, seconds / 4))  # the queue fills
        threads += [
            threading.Thread(target=_probe_loop, args=(st.web.url + "/readyz", 30.0, until, *api)),
            threading.Thread(target=_probe_loop,
                             args=(f"http://127.0.0.1:{health_port}/readyz", 5.0, until, *master)),
        ]
        for t in threads[-2:]:
            t.start()
        for t in threads:
            t.join()
    return {"web_workers": web_workers, "clients": clients, "search_ms": search_ms, "seconds": seconds,
            "searches": {"answered_200": done.count(200), "other": len(done) - done.count(200)},
            "readyz_api_port": _summary(*api), "readyz_health_port": _summary(*master)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--web-workers", type=int, default=2)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--search-ms", type=int, default=2000, help="time budget of each sync search")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    args = ap.parse_args(argv)
    out = run(args.web_workers, args.clients, args.search_ms, args.seconds, f"{args.reports}/probes-logs")
    print(json.dumps(out, indent=2))
    ok = out["readyz_health_port"]["failed"] == 0 and out["readyz_health_port"]["answered"] > 0
    print("OK: every health-port probe answered" if ok else "FAILED: a health-port probe failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
