"""A Redis outage as a web pod lives it: readiness on the health port of gunicorn's master
(`KASHGAR_HEALTH_BIND`), synchronous searches, async jobs, and what a kubelet probing as
`deploy/k8s/web.yaml` does (every 10 s, out of the Service after 6 failures in a row) would make
of it.

    python -m loadtests.outage                  # Redis down 30 s: the pod should stay in the Service
    python -m loadtests.outage --down 70        # longer than the grace: it should leave, and come back

Redis (append-only, synced on every write; the Kubernetes manifest syncs every second) is killed
with SIGKILL `--before` seconds into the run and started again on the same port `--down` seconds
later; the run goes on `--after` seconds more. Nothing is written under `--reports` but the
servers' logs. Meanwhile one thread probes `/readyz` on the health port every half second, one
client sends synchronous searches back to back, and one submits an async job every 2 s (a job
accepted is polled to its end after the run).

It passes when every synchronous search answered 200 (some of them while Redis was down),
readiness turned not ready during the outage
and ready again within `--recover-s` of Redis being back, async jobs were refused with 503
`queue_unavailable` while Redis was down, and every job accepted finished. Whether the simulated
kubelet took the pod out of the Service is reported (for every phase of its 10 s period against
the outage), not judged: that is what `--down` sets.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import engine_ext
from lab.serving import Gunicorn, Worker, free_port, http_json, wait_until
from loadtests.faults import FAULT_ENV, TERMINAL, RestartableRedis
from loadtests.stack import DEFAULT_REPORTS

PERIOD_S = 10.0  # deploy/k8s/web.yaml: readinessProbe.periodSeconds
FAILURE_THRESHOLD = 6  # readinessProbe.failureThreshold
PROBE_EVERY_S = 0.5


@dataclass
class Timeline:
    """What happened when (seconds since the run started)."""

    probes: list[tuple[float, int, str]] = field(default_factory=list)  # t sent, status, checks.queue
    sync: list[tuple[float, float, int]] = field(default_factory=list)  # t sent, t answered, status
    async_: list[tuple[float, float, int, str]] = field(default_factory=list)  # sent, answered, status, URL or error
    stopped_at: float = 0.0  # Redis killed
    restarting_at: float = 0.0  # redis-server started again ...
    started_at: float = 0.0  # ... and answering


def _request(method: str, url: str, body: Any, timeout: float) -> tuple[int, Any]:
    """http_json, with any failure to get an answer as status 0 and the error's name (a thread
    that died of an unexpected error would go unnoticed)."""
    try:
        return http_json(method, url, body, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - a refused, cut or unreadable answer is a data point
        return 0, type(exc).__name__


def _probe_loop(url: str, t0: float, stop: threading.Event, out: Timeline) -> None:
    while not stop.is_set():
        sent = time.monotonic()
        status, body = _request("GET", url, None, 5.0)
        queue = str(body.get("checks", {}).get("queue", "")) if isinstance(body, dict) else str(body)
        out.probes.append((round(sent - t0, 3), status, queue))
        stop.wait(max(0.0, PROBE_EVERY_S - (time.monotonic() - sent)))


def _sync_loop(url: str, body: dict[str, Any], t0: float, stop: threading.Event, out: Timeline) -> None:
    while not stop.is_set():
        sent = time.monotonic()
        status, _ = _request("POST", url, body, 60.0)
        out.sync.append((round(sent - t0, 3), round(time.monotonic() - t0, 3), status))


def _async_loop(url: str, body: dict[str, Any], t0: float, stop: threading.Event, out: Timeline) -> None:
    while not stop.is_set():
        sent = time.monotonic()
        status, answer = _request("POST", url, body, 30.0)
        what = str(answer.get("status_url") or answer.get("error")) if isinstance(answer, dict) else str(answer)
        out.async_.append((round(sent - t0, 3), round(time.monotonic() - t0, 3), status, what))
        stop.wait(max(0.0, 2.0 - (time.monotonic() - sent)))


def _job_end(url: str) -> str:
    """The status a job ends in (waits up to 2 minutes)."""
    def ended() -> str | None:
        status = http_json("GET", url, timeout=10)[1].get("status")
        return str(status) if status in TERMINAL else None

    return str(wait_until(ended, 120, interval=0.3, what=f"job {url}"))


def kubelet(probes: list[tuple[float, int, str]], period: float = PERIOD_S,
            threshold: int = FAILURE_THRESHOLD, phases: int = 20) -> dict[str, Any]:
    """A kubelet's readiness probe read off the probe timeline: for `phases` offsets of its period,
    the probe at each tick is the sample taken last before it; the most failures in a row, and
    for how many offsets the pod would have left the Service (`threshold` in a row)."""
    worst = []
    for k in range(phases if probes else 0):
        tick, run, most = probes[0][0] + period * k / phases, 0, 0
        i = 0
        while tick <= probes[-1][0]:
            while i + 1 < len(probes) and probes[i + 1][0] <= tick:
                i += 1
            run = run + 1 if probes[i][1] != 200 else 0
            most = max(most, run)
            tick += period
        worst.append(most)
    return {"period_s": period, "failure_threshold": threshold, "phases": phases,
            "most_failures_in_a_row": max(worst, default=0),
            "phases_out_of_service": sum(m >= threshold for m in worst)}


def summary(tl: Timeline, recover_s: float, jobs: dict[str, str]) -> dict[str, Any]:
    """The run's figures and verdict from its timeline and the end states of the accepted jobs.
    "While down": sent from 1 s after the kill (a request sent before may still be in flight) and
    answered before redis-server was started again."""
    down = (tl.stopped_at, tl.started_at)
    not_ready = [t for t, s, _ in tl.probes if s != 200 and down[0] <= t < down[1]]
    ready_again = [t for t, s, _ in tl.probes if s == 200 and t >= down[1]]
    window = [(t, s) for t, answered, s, _ in tl.async_ if t >= down[0] + 1.0 and answered < tl.restarting_at]
    during = [s for _, s in window]
    sync_bad = [(t, s) for t, _, s in tl.sync if s != 200]
    sync_down = [s for t, answered, s in tl.sync if t >= down[0] and answered < tl.restarting_at]
    out: dict[str, Any] = {
        "redis_down_s": round(down[1] - down[0], 1),
        "not_ready_after_s": round(not_ready[0] - down[0], 2) if not_ready else None,
        "ready_again_after_s": round(ready_again[0] - down[1], 2) if ready_again else None,
        "probes": len(tl.probes),
        "sync_searches": {"answered_200": len(tl.sync) - len(sync_bad), "while_down_200": sync_down.count(200),
                          "other": sync_bad[:10]},
        "async_while_down": {str(s): during.count(s) for s in sorted(set(during))},
        "jobs_accepted": len(jobs),
        "jobs_end": {s: list(jobs.values()).count(s) for s in sorted(set(jobs.values()))},
        "kubelet": kubelet(tl.probes),
    }
    problems = []
    if sync_bad:
        problems.append(f"{len(sync_bad)} sync searches did not answer 200")
    if not sync_down:
        problems.append("no sync search was answered while Redis was down")
    if out["not_ready_after_s"] is None:
        problems.append("readiness never turned not ready while Redis was down")
    if out["ready_again_after_s"] is None or out["ready_again_after_s"] > recover_s:
        problems.append(f"not ready again within {recover_s} s of Redis being back")
    if not during or set(during) != {503}:
        odd = [f"{s} sent at {t} s" for t, s in window if s != 503]
        problems.append(f"async submissions while Redis was down (killed at {down[0]} s, started again at "
                        f"{tl.restarting_at} s) answered {out['async_while_down']}, not only 503: {odd or 'none'}")
    if not jobs or set(jobs.values()) != {"finished"}:
        problems.append(f"accepted jobs ended {out['jobs_end']}")
    out["problems"] = problems
    return out


def run(down: float, before: float, after: float, web_workers: int, recover_s: float, log_dir: str) -> dict[str, Any]:
    """Kill Redis `before` s into the run, start it `down` s later, go on max(`after`, `recover_s`)
    s more, then wait for every accepted job."""
    Path(log_dir).mkdir(parents=True, exist_ok=True)
    redis_server = RestartableRedis(log_dir, "aof")
    health = f"http://127.0.0.1:{free_port()}"
    env = dict(FAULT_ENV, KASHGAR_REDIS_URL=redis_server.url, KASHGAR_HEALTH_BIND=health.removeprefix("http://"),
               KASHGAR_REDIS_TIMEOUT="0.5", KASHGAR_LOG_LEVEL="WARNING")
    worker: Worker | None = None
    web: Gunicorn | None = None
    stop = threading.Event()
    tl = Timeline()
    jobs: dict[str, str] = {}
    try:
        redis_server.start()
        worker = Worker(redis_server.url, env=env, log_dir=log_dir).start()
        web = Gunicorn(env=env, workers=web_workers, log_dir=log_dir).start()
        wait_until(lambda: http_json("GET", health + "/readyz", timeout=5)[0] == 200, 30, interval=0.2,
                   what="the health port to say ready")
        state = engine_ext.new_game(players=2, seed=5).to_json(observer=0)
        t0 = time.monotonic()
        sync_body = {"state": state, "iterations": 200, "mode": "sync"}
        async_body = {"state": state, "iterations": 100, "mode": "async"}
        threads = [threading.Thread(target=_probe_loop, args=(health + "/readyz", t0, stop, tl), daemon=True),
                   threading.Thread(target=_sync_loop, args=(web.url + "/suggest", sync_body, t0, stop, tl),
                                    daemon=True),
                   threading.Thread(target=_async_loop, args=(web.url + "/suggest", async_body, t0, stop, tl),
                                    daemon=True)]
        for t in threads:
            t.start()
        time.sleep(before)
        tl.stopped_at = round(time.monotonic() - t0, 3)
        redis_server.kill()
        time.sleep(down)
        tl.restarting_at = round(time.monotonic() - t0, 3)
        redis_server.start()
        tl.started_at = round(time.monotonic() - t0, 3)
        time.sleep(max(after, recover_s))
        stop.set()
        for t in threads:
            t.join()
        for _, _, status, url in tl.async_:
            if status == 202:
                jobs[url] = _job_end(web.url + url)
    finally:
        stop.set()
        if web is not None:
            web.stop()
        if worker is not None:
            worker.stop()
        redis_server.stop()  # and its data directory
    return summary(tl, recover_s, jobs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--down", type=float, default=30.0, help="seconds Redis stays down")
    ap.add_argument("--before", type=float, default=10.0, help="seconds of the run before Redis is killed")
    ap.add_argument("--after", type=float, default=15.0,
                    help="seconds of the run after Redis is back (at least --recover-s)")
    ap.add_argument("--web-workers", type=int, default=2)
    ap.add_argument("--recover-s", type=float, default=5.0, help="most seconds to ready again after Redis is back")
    ap.add_argument("--reports", default=str(DEFAULT_REPORTS))
    args = ap.parse_args(argv)
    out = run(args.down, args.before, args.after, args.web_workers, args.recover_s, f"{args.reports}/outage-logs")
    print(json.dumps(out, indent=2))
    print("OK" if not out["problems"] else "FAILED: " + "; ".join(out["problems"]))
    return 0 if not out["problems"] else 1


if __name__ == "__main__":
    sys.exit(main())
