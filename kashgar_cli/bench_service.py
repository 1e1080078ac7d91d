"""`kashgar bench service`: throughput and latency of POST /suggest per level against gunicorn.

For each level: (1) the search time per request, measured one request at a time (the mean of
the server-reported `elapsed_ms`); the throughput limit is then min(cores, web workers) / search
time (a web worker runs one search at a time); (2) the throughput with the server saturated
(closed loop, 2 requests in flight per web worker), as a fraction of that limit; (3) latency
percentiles under an open-loop load at `--load` (default 80%) of the serving limit, requests sent
at evenly spaced times, latency counted from the scheduled send time (no coordinated omission).

The serving limit is min(cores, web workers) / the serial wall time of a request (search plus
HTTP, JSON, state loading): at the cheapest levels that cost outside the search is half a request
or more, so a load paced by the search-time limit alone is above what the server can serve and
measures a growing queue instead of latency. The reported fraction of the limit stays measured
against the search-time limit, the ideal the service's overhead is counted against.

The positions are of 2, 3 and 4 players in turn; phase (1)'s search time and phase (3)'s latency
are also reported per player count (`search_by_players`, `latency_by_players`), since a search's
cost grows with the seats it models.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from kashgar_cli.errors import CliError, float_above, positive_int
from kashgar_cli.provenance import provenance

DEFAULT_LEVELS = "casual,skilled,advanced,expert,master"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the service benchmark's options (skipping any the parser already has, e.g. --json)."""

    def add(flag: str, **kw: Any) -> None:
        if flag not in parser._option_string_actions:
            parser.add_argument(flag, **kw)

    add("--url", default=None, help="a running service (default: start gunicorn here)")
    add("--levels", default=DEFAULT_LEVELS, help=f"comma-separated level names, or 'all' (default {DEFAULT_LEVELS})")
    add(
        "--time-ms", type=positive_int, action="append", default=[],
        help="also bench a time budget of this many ms (repeatable)",
    )
    add("--duration", type=float_above(0), default=6.0, help="seconds per phase (default 6)")
    add("--workers", type=positive_int, default=None, help="gunicorn workers (default: cores)")
    add("--load", type=float_above(0), default=0.8, help="open-loop load as a fraction of the serving limit")
    add("--positions", type=positive_int, default=12, help="distinct game positions to ask about")
    add("--json", action="store_true", help="print the results as JSON")


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def positions(n: int, seed: int = 0) -> list[dict[str, Any]]:
    """Views of the player to move in varied positions (2-4 players, openings to mid-game)."""
    import engine_ext

    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    k = 0
    while len(out) < n:
        g = engine_ext.new_game(players=2 + k % 3, seed=seed + k)
        for _ in range(rng.randrange(0, 60)):
            legal = g.legal()
            if g.is_terminal or not legal:
                break
            g.apply(rng.choice(legal))
        if not g.is_terminal and g.current_player >= 0:
            out.append(dict(g.to_json(observer=g.current_player)))
        k += 1
    return out


class Target:
    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or 80

    def post(self, path: str, body: bytes, timeout: float = 120.0) -> tuple[int, dict[str, Any]]:
        """(status, body); a broken connection counts as status 599 (an error, not a crash)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        try:
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, json.loads(data) if data else {}
        except (OSError, http.client.HTTPException, ValueError) as exc:
            return 599, {"error": repr(exc)}
        finally:
            conn.close()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    i = min(len(s) - 1, max(0, int(round(q / 100.0 * (len(s) - 1)))))
    return s[i]


def by_players(players: list[int], values: list[tuple[int, float]], key: str) -> dict[str, dict[str, Any]]:
    """Per player count: how many values there are and their mean, p50 and p95 (named after `key`).
    `values` are (body index, value) pairs; `players[k]` is body k's player count."""
    out: dict[str, dict[str, Any]] = {}
    for n in sorted(set(players)):
        vals = [v for k, v in values if players[k] == n]
        if vals:
            out[str(n)] = {
                "count": len(vals),
                f"mean_{key}": round(statistics.fmean(vals), 1),
                f"p50_{key}": round(pct(vals, 50), 1),
                f"p95_{key}": round(pct(vals, 95), 1),
            }
    return out


def bench_level(
    target: Target,
    bodies: list[bytes],
    cores: int,
    workers: int,
    duration: float,
    load: float,
    players: list[int] | None = None,
) -> dict[str, Any]:
    """One level's phases; the throughput limit counts the cores the web workers can use, min(cores,
    workers): one worker searches one request at a time. `players[k]` is body k's player count:
    the search time of the serial phase and the latency under load are also split by it (not split
    when it is not given)."""
    errors = 0
    # warm-up
    for body in bodies[:3]:
        target.post("/suggest", body)
    # (1) search time, one request at a time
    search_ms: list[float] = []
    search_by_body: list[tuple[int, float]] = []
    wall_ms: list[float] = []
    iterations: list[int] = []
    end = time.monotonic() + max(1.0, duration / 2)
    i = 0
    while time.monotonic() < end or len(search_ms) < 5:
        b = i % len(bodies)
        i += 1
        t0 = time.perf_counter()
        status, ans = target.post("/suggest", bodies[b])
        if status != 200:
            errors += 1
            if errors >= 20 and not search_ms:  # nothing answered: say so rather than ask forever
                raise CliError(f"the server answered {status} to every one of {errors} searches: {ans}", status=1)
            continue
        wall_ms.append((time.perf_counter() - t0) * 1000)  # of answered searches only, as search_ms
        search_ms.append(float(ans["elapsed_ms"]))
        search_by_body.append((b, float(ans["elapsed_ms"])))
        iterations.append(int(ans["iterations"]))
    mean_search, mean_wall = statistics.fmean(search_ms), statistics.fmean(wall_ms)
    limit = min(cores, workers) / (mean_search / 1000.0)
    serving_limit = min(limit, min(cores, workers) / (mean_wall / 1000.0))

    # (2) saturated throughput, closed loop
    done = 0
    lock = threading.Lock()
    stop_at = time.monotonic() + duration

    def loop(k: int) -> None:
        nonlocal done, errors
        j = k
        while time.monotonic() < stop_at:
            status, _ = target.post("/suggest", bodies[j % len(bodies)])
            j += 1
            with lock:
                if status == 200:
                    done += 1
                else:
                    errors += 1

    concurrency = 2 * workers
    t0 = time.monotonic()
    threads = [threading.Thread(target=loop, args=(k,)) for k in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    throughput = done / (time.monotonic() - t0)

    # (3) latency under an open-loop load, paced by what the server can serve
    rate = load * serving_limit
    n = max(10, int(rate * duration))
    latencies: list[float] = []
    latency_by_body: list[tuple[int, float]] = []
    lat_lock = threading.Lock()

    def one(scheduled: float, idx: int) -> None:
        nonlocal errors
        delay = scheduled - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        status, _ = target.post("/suggest", bodies[idx])
        ms = (time.perf_counter() - scheduled) * 1000
        with lat_lock:
            if status == 200:
                latencies.append(ms)
                latency_by_body.append((idx, ms))
            else:
                errors += 1

    # every body once per round, in a fresh (seeded) order each round: no body always follows the same one
    order_rng = random.Random(0)
    order: list[int] = []
    while len(order) < n:
        one_round = list(range(len(bodies)))
        order_rng.shuffle(one_round)
        order += one_round
    start = time.perf_counter() + 0.2
    with ThreadPoolExecutor(max_workers=min(256, max(8, int(rate * 2)))) as pool:
        for k in range(n):
            pool.submit(one, start + k / rate, order[k])
    return {
        "iterations": int(statistics.median(iterations)),
        "search_ms": round(mean_search, 2),
        "serial_wall_ms": round(mean_wall, 2),
        "limit_rps": round(limit, 2),
        "serving_limit_rps": round(serving_limit, 2),
        "throughput_rps": round(throughput, 2),
        "fraction_of_limit": round(throughput / limit, 3),
        "fraction_of_serving_limit": round(throughput / serving_limit, 3),
        "load_rps": round(rate, 2),
        "p50_ms": round(pct(latencies, 50), 1),
        "p95_ms": round(pct(latencies, 95), 1),
        "p99_ms": round(pct(latencies, 99), 1),
        "p99_within_budget_plus_50": bool(pct(latencies, 99) <= mean_search + 50),
        "requests": i + done + n,
        "errors": errors,
        "search_by_players": by_players(players, search_by_body, "search_ms") if players else {},
        "latency_by_players": by_players(players, latency_by_body, "ms") if players else {},
    }


def run(args: argparse.Namespace) -> int:
    from kashgar_cli.progress import Progress
    from lab.serving import Gunicorn, http_json

    cores = cpu_count()
    workers = args.workers or cores
    load_before = os.getloadavg()
    server = None
    url = args.url
    if url is None:
        # one load generator, one address: its many connections are the load, not one client's abuse
        env = {"KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_CLIENT_CONNECTIONS": "0"}
        server = Gunicorn(env=env, workers=workers).start()
        url = server.url
    try:
        try:
            status, info = http_json("GET", url + "/levels")
        except OSError as exc:  # refused, no such host, timed out (urllib's URLError is an OSError)
            raise CliError(f"cannot reach {url}: {getattr(exc, 'reason', None) or exc}", status=1) from None
        names = [lv["name"] for lv in info["levels"]]
        wanted = names if args.levels == "all" else [x for x in args.levels.split(",") if x]
        unknown = [x for x in wanted if x not in names]
        if unknown:
            raise CliError(f"argument --levels: unknown levels {unknown}; known: {names}")
        states = positions(args.positions)
        players = [int(st["players"]) for st in states]
        target = Target(url)
        results: list[dict[str, Any]] = []
        cases: list[tuple[str, dict[str, Any]]] = [(lv, {"level": lv}) for lv in wanted]
        cases += [(f"time_ms={ms}", {"time_ms": ms}) for ms in args.time_ms]
        bar = Progress(len(cases), unit="level", desc="bench service")
        for name, extra in cases:
            bodies = [json.dumps(dict(extra, state=s, seed=k, mode="sync")).encode() for k, s in enumerate(states)]
            r = bench_level(target, bodies, cores, workers, args.duration, args.load, players)
            r["level"] = name
            results.append(r)
            bar.update(len(results))
            if not args.json:
                bar.write(
                    f"{name:>12}: search {r['search_ms']:.1f} ms, limit {r['limit_rps']:.1f}/s "
                    f"(serving {r['serving_limit_rps']:.1f}/s), "
                    f"throughput {r['throughput_rps']:.1f}/s ({100 * r['fraction_of_limit']:.0f}%), "
                    f"at {r['load_rps']:.1f}/s: p50 {r['p50_ms']} p95 {r['p95_ms']} p99 {r['p99_ms']} ms, "
                    f"errors {r['errors']}", file=sys.stdout,
                )
                split = ", ".join(
                    f"{n}p {v['mean_search_ms']:.1f} ms (n={v['count']}), p95 under load "
                    f"{r['latency_by_players'].get(n, {}).get('p95_ms', float('nan'))} ms"
                    for n, v in r["search_by_players"].items()
                )
                bar.write(f"{'':>12}  by players: {split}", file=sys.stdout)
        bar.close()
        health = http_json("GET", url + "/healthz")[1]
        report = {
            "benchmark": "service",
            "provenance": provenance(),
            "cores": cores,
            "web_workers": workers,
            "limit_cores": min(cores, workers),
            "compiled": health.get("compiled"),
            "machine": platform.machine(),
            "duration_s": args.duration,
            "load": args.load,
            "positions": args.positions,
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
            "results": results,
        }
        if args.json:
            print(json.dumps(report, indent=2))
        return 0 if all(r["errors"] == 0 for r in results) else 1
    finally:
        if server is not None:
            server.stop()
