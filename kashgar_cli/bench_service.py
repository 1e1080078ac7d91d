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

`--floor` measures the service against the floor of its own stack instead: a minimal Flask app
(`lab/floor_app.py`: it parses the body and answers a JSON of a novice answer's size) served by
gunicorn with the same settings (workers, gthread, threads, keep-alive), both sent the same bodies
(the mover's view at the opening of 2-player deals, about 1 KB) by one closed-loop load generator
(`ClosedLoop`: 4 keep-alive connections), in rounds of `--round-seconds` that alternate between the
two (`--rounds` per level, the order flipped each round). Per level: both servers' requests/s, their
ratio, and the ratio to the ideal 1 / (floor cost + search cost), the floor's cost per request being
cores / its requests/s and the search's the level's `core_seconds` / cores. The servers' own CPU
seconds per answered request (read from /proc) are reported beside them: on a machine shared with
other work they say what a request costs better than requests/s do.
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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from kashgar_cli.errors import CliError, float_above, positive_int
from kashgar_cli.provenance import provenance

DEFAULT_LEVELS = "casual,skilled,advanced,expert,master"
FLOOR_LEVELS = "novice,beginner,casual,club,skilled,advanced,expert"


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
    add("--floor", action="store_true",
        help="instead: the service and a minimal Flask app (lab/floor_app.py) under the same gunicorn settings, "
             f"side by side, per level (default {FLOOR_LEVELS})")
    add("--rounds", type=positive_int, default=3, help="--floor: rounds of each server per level (default 3)")
    add("--round-seconds", type=float_above(0), default=5.0, help="--floor: seconds of a round (default 5)")
    add("--compare", default=None, metavar="URL",
        help="--floor: also another build of the service (an earlier commit, served at URL) in the same rounds")


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
    if getattr(args, "floor", False):
        return run_floor(args, cores, workers)
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


# ---- against the floor: the service and a minimal Flask app side by side ----------------------

CONNECTIONS = 4


class ClosedLoop:
    """One load generator: `connections` keep-alive connections, each sending its next request as
    its answer arrives (closed loop), in one thread on one poller, with requests prepared as bytes
    and answers read by their Content-Length: a client cheap enough that the server, not the client,
    sets the pace. Bodies are sent in turn."""

    def __init__(self, url: str, bodies: list[bytes], path: str = "/suggest", connections: int = CONNECTIONS) -> None:
        parts = urlsplit(url)
        self.address = (parts.hostname or "127.0.0.1", parts.port or 80)
        host = f"{self.address[0]}:{self.address[1]}"
        self.requests = [(f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(b)}\r\n\r\n").encode("latin-1") + b for b in bodies]
        self.connections = connections

    def run(self, seconds: float, warmup: float = 0.0, cpu: Callable[[], float | None] | None = None
            ) -> dict[str, Any]:
        """Requests answered 200 in the `seconds` after `warmup` (an answer counts if it ends in the
        window), requests/s, errors by status (0: the connection broke), and the first answer's JSON;
        with `cpu` (the server's CPU seconds so far), the server's CPU seconds in the window."""
        import selectors
        import socket

        sel = selectors.DefaultSelector()
        statuses: dict[int, int] = {}
        counted = 0
        sample: dict[str, Any] | None = None
        t_start = time.perf_counter()
        t_from = t_start + warmup
        t_end = t_from + seconds
        next_body = 0

        class Conn:
            sock: socket.socket
            buf: bytearray

        def open_conn() -> Conn:
            c = Conn()
            c.sock = socket.create_connection(self.address, timeout=30.0)
            c.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            c.buf = bytearray()
            sel.register(c.sock, selectors.EVENT_READ, c)
            return c

        def send(c: Conn) -> None:
            nonlocal next_body
            c.sock.sendall(self.requests[next_body % len(self.requests)])
            next_body += 1

        conns = [open_conn() for _ in range(self.connections)]
        for c in conns:
            send(c)
        in_flight = len(conns)
        drain_until = t_end + 10.0  # the answers still coming after the window (a slow one: an error)
        cpu_from = cpu_to = None
        client_from = client_to = 0.0
        while in_flight:
            now = time.perf_counter()
            if cpu_from is None and now >= t_from:
                cpu_from, client_from = (cpu() if cpu else None), time.process_time()
            if cpu_to is None and now >= t_end:
                cpu_to, client_to = (cpu() if cpu else None), time.process_time()
            if now > drain_until:
                break
            for key, _ in sel.select(timeout=1.0):
                c = key.data
                try:
                    data = c.sock.recv(262144)
                except OSError:
                    data = b""
                if not data:  # closed: an error, and a new connection takes its place
                    statuses[0] = statuses.get(0, 0) + 1
                    sel.unregister(c.sock)
                    c.sock.close()
                    in_flight -= 1
                    if time.perf_counter() < t_end:
                        try:
                            send(open_conn())
                        except OSError:  # refused: one connection fewer
                            statuses[0] += 1
                            continue
                        in_flight += 1
                    continue
                c.buf += data
                head_end = c.buf.find(b"\r\n\r\n")
                if head_end < 0:
                    continue
                head = bytes(c.buf[:head_end]).decode("latin-1").split("\r\n")
                length, close = 0, False
                for line in head[1:]:
                    name, _, value = line.partition(":")
                    name = name.strip().lower()
                    if name == "content-length":
                        length = int(value)
                    elif name == "connection" and value.strip().lower() == "close":
                        close = True
                if len(c.buf) < head_end + 4 + length:
                    continue
                status = int(head[0].split(" ", 2)[1])
                body = bytes(c.buf[head_end + 4:head_end + 4 + length])
                del c.buf[:head_end + 4 + length]
                done = time.perf_counter()
                if t_from <= done <= t_end:
                    statuses[status] = statuses.get(status, 0) + 1
                    if status == 200:
                        counted += 1
                if sample is None and status == 200:
                    sample = json.loads(body)
                in_flight -= 1
                if close:
                    sel.unregister(c.sock)
                    c.sock.close()
                if done < t_end:
                    if close:
                        c = open_conn()
                    send(c)
                    in_flight += 1
        for key in list(sel.get_map().values()):
            key.fileobj.close()  # type: ignore[union-attr]
        sel.close()
        server_cpu = None if cpu_from is None or cpu_to is None else cpu_to - cpu_from
        return {
            "answered": counted,
            "rps": counted / seconds,
            "server_cpu_s": server_cpu,
            "client_cpu_s": client_to - client_from if cpu_to is not None else None,
            "errors": {str(k): v for k, v in sorted(statuses.items()) if k != 200},
            "sample": sample,
        }


def listening_processes(port: int) -> list[int]:
    """The processes holding the loopback socket that listens on `port` (a gunicorn's master and
    workers), from /proc (Linux; [] elsewhere or when they are not this user's to read)."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) > 9 and f[3] == "0A" and int(f[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                inodes.add(f"socket:[{f[9]}]")
    pids: list[int] = []
    if not inodes:
        return pids
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") in inodes for fd in fds):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def cpu_seconds(pids: list[int]) -> float | None:
    """The CPU seconds (user and system) the processes `pids` have used so far; None when one of
    them cannot be read."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            return None
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick if pids else None


def opening_views(n: int) -> list[dict[str, Any]]:
    """The view of the player to move at the opening of `n` 2-player deals (seeds 0..n-1), about
    1 KB each as a body."""
    import engine_ext

    out = []
    for seed in range(n):
        g = engine_ext.new_game(players=2, seed=seed)
        out.append(dict(g.to_json(observer=g.current_player)))
    return out


def _mean_ms(values: list[float]) -> float | None:
    return round(statistics.fmean(values), 3) if values else None


def floor_report(levels: list[dict[str, Any]], ours_url: str, floor_url: str, rounds: int, seconds: float,
                 cores: int, positions: int = 4, warmup: float | None = None,
                 progress: Any = None, compare_url: str | None = None) -> dict[str, Any]:
    """Per level, `rounds` rounds of `seconds` each of the service, of the floor app (and of
    `compare_url`, another build of the service, when given) in turn, the order turned every round
    so that a drift of the machine falls on each alike, from one closed-loop load generator with
    the same bodies: their requests/s, the service's share of the floor's, and of the ideal
    1 / (floor cost + search cost), where the floor's cost per request is cores / its requests/s and
    the search's the level's `core_seconds` / cores; the same from the servers' CPU clocks."""
    warm = min(1.0, 0.2 * seconds) if warmup is None else warmup
    views = opening_views(positions)
    servers = [("ours", ours_url), ("floor", floor_url)] + ([("compare", compare_url)] if compare_url else [])
    out: list[dict[str, Any]] = []
    for lv in levels:
        name = lv["name"]
        bodies = [json.dumps({"state": v, "level": name, "seed": k, "mode": "sync"}).encode()
                  for k, v in enumerate(views)]
        rps: dict[str, list[float]] = {who: [] for who, _ in servers}
        cpu_ms: dict[str, list[float]] = {who: [] for who, _ in servers}  # server CPU ms per answered request
        errors: dict[str, dict[str, int]] = {who: {} for who, _ in servers}
        answered = {who: 0 for who, _ in servers}
        samples: dict[str, Any] = {}
        for r in range(rounds):
            k = r % len(servers)
            order = servers[k:] + servers[:k]
            if (r // len(servers)) % 2:
                order.reverse()
            for who, url in order:
                pids = listening_processes(urlsplit(url).port or 80)
                got = ClosedLoop(url, bodies).run(seconds, warm, cpu=partial(cpu_seconds, pids) if pids else None)
                if got["server_cpu_s"] is not None and got["answered"]:
                    cpu_ms[who].append(1000 * got["server_cpu_s"] / got["answered"])
                rps[who].append(got["rps"])
                answered[who] += got["answered"]
                for code, n in got["errors"].items():
                    errors[who][code] = errors[who].get(code, 0) + n
                samples.setdefault(who, got["sample"])
            if progress is not None:
                progress(name, r)
        ours, floor = statistics.fmean(rps["ours"]), statistics.fmean(rps["floor"])
        search_s = lv.get("core_seconds")
        floor_cost = cores / floor if floor > 0 else float("inf")  # core-seconds per request
        ideal = cores / (floor_cost + search_s) if search_s is not None and floor > 0 else None

        ours_ms, floor_ms = _mean_ms(cpu_ms["ours"]), _mean_ms(cpu_ms["floor"])
        sample = samples.get("ours") or {}
        row: dict[str, Any] = {
            "level": name,
            "ours_rps": round(ours, 1),
            "floor_rps": round(floor, 1),
            "of_floor": round(ours / floor, 3) if floor > 0 else None,
            "of_floor_per_round": [round(a / b, 3) if b > 0 else None
                                   for a, b in zip(rps["ours"], rps["floor"], strict=True)],
            "ours_rps_per_round": [round(x, 1) for x in rps["ours"]],
            "floor_rps_per_round": [round(x, 1) for x in rps["floor"]],
            "floor_core_ms": round(1000 * floor_cost, 3),
            "search_core_ms": None if search_s is None else round(1000 * search_s, 3),
            "ours_core_ms": round(1000 * cores / ours, 3) if ours > 0 else None,
            "ideal_rps": None if ideal is None else round(ideal, 1),
            "of_ideal": None if ideal is None or not ideal else round(ours / ideal, 3),
            "answered": answered,
            "errors": errors,
            "answer_level": sample.get("level"),
            # measured on the servers' own CPU clocks: what a request costs whatever else runs
            "ours_cpu_ms": ours_ms,
            "floor_cpu_ms": floor_ms,
            "of_floor_by_cpu": round(floor_ms / ours_ms, 3) if ours_ms and floor_ms else None,
            "of_ideal_by_cpu": (round((floor_ms + 1000 * search_s) / ours_ms, 3)
                                if ours_ms and floor_ms and search_s is not None else None),
        }
        if compare_url:
            other, other_ms = statistics.fmean(rps["compare"]), _mean_ms(cpu_ms["compare"])
            row.update({
                "compare_rps": round(other, 1),
                "compare_rps_per_round": [round(x, 1) for x in rps["compare"]],
                "compare_of_floor": round(other / floor, 3) if floor > 0 else None,
                "compare_of_ideal": None if ideal is None or not ideal else round(other / ideal, 3),
                "compare_cpu_ms": other_ms,
                "compare_of_ideal_by_cpu": (round((floor_ms + 1000 * search_s) / other_ms, 3)
                                            if other_ms and floor_ms and search_s is not None else None),
                # ours against the other build, round by round: the machine's drift cancels within a round
                "ours_over_compare_per_round": [round(a / b, 3) if b > 0 else None
                                                for a, b in zip(rps["ours"], rps["compare"], strict=True)],
            })
        out.append(row)
    return {"connections": CONNECTIONS, "rounds": rounds, "round_s": seconds, "warmup_s": warm,
            "positions": positions, "body_bytes": round(statistics.fmean(len(json.dumps(
                {"state": v, "level": "novice", "seed": 0, "mode": "sync"})) for v in views)),
            "compare": compare_url, "levels": out}


def run_floor(args: argparse.Namespace, cores: int, workers: int) -> int:
    """`--floor`: the service (started here, or `--url`) and the floor app, started here with the
    same gunicorn settings, side by side (`floor_report`)."""
    import shutil
    import tempfile

    from lab.serving import FloorServer, Gunicorn, http_json

    logs = tempfile.mkdtemp(prefix="kashgar-bench-floor-")
    ours = floor = None
    load_before = os.getloadavg()
    try:
        url = args.url
        if url is None:
            # as `kashgar serve` runs (its access log included); one load generator, one address
            ours = Gunicorn(env={"KASHGAR_CLIENT_CONNECTIONS": "0"}, workers=workers, log_dir=logs).start()
            url = ours.url
        floor = FloorServer(workers=workers, log_dir=logs).start()
        try:
            _, info = http_json("GET", url + "/levels")
        except OSError as exc:
            raise CliError(f"cannot reach {url}: {getattr(exc, 'reason', None) or exc}", status=1) from None
        known = {lv["name"]: lv for lv in info["levels"]}
        wanted = [x for x in (FLOOR_LEVELS if args.levels == DEFAULT_LEVELS else args.levels).split(",") if x]
        if args.levels == "all":
            wanted = list(known)
        unknown = [x for x in wanted if x not in known]
        if unknown:
            raise CliError(f"argument --levels: unknown levels {unknown}; known: {list(known)}")
        limit_cores = min(cores, workers)

        def said(level: str, r: int) -> None:
            if not args.json:
                print(f"  {level}: round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)

        report = floor_report([known[x] for x in wanted], url, floor.url, args.rounds, args.round_seconds,
                              limit_cores, positions=min(args.positions, 4), progress=said,
                              compare_url=args.compare)
        report.update({
            "benchmark": "service-floor",
            "provenance": provenance(),
            "cores": cores,
            "web_workers": workers,
            "limit_cores": limit_cores,
            "machine": platform.machine(),
            "loadavg_before": [round(x, 2) for x in load_before],
            "loadavg_after": [round(x, 2) for x in os.getloadavg()],
        })
        if args.json:
            print(json.dumps(report, indent=2))
        else:
            print(f"{'level':>10} {'ours/s':>8} {'floor/s':>8} {'of floor':>9} {'ideal/s':>8} {'of ideal':>9} "
                  f"{'CPU ms ours':>12} {'floor':>6} {'of ideal':>9}  per round (ours/floor)")
            for r in report["levels"]:
                ideal = "-" if r["ideal_rps"] is None else f"{r['ideal_rps']:.0f}"
                of_ideal = "-" if r["of_ideal"] is None else f"{r['of_ideal']:.2f}"
                print(f"{r['level']:>10} {r['ours_rps']:>8.0f} {r['floor_rps']:>8.0f} {r['of_floor']:>9.2f} "
                      f"{ideal:>8} {of_ideal:>9} {r['ours_cpu_ms'] or '-':>12} {r['floor_cpu_ms'] or '-':>6} "
                      f"{r['of_ideal_by_cpu'] or '-':>9}  {', '.join(str(x) for x in r['of_floor_per_round'])}")
                if report["compare"]:
                    print(f"{'':>10} compared: {r['compare_rps']:.0f}/s, {r['compare_of_floor']} of the floor, CPU "
                          f"{r['compare_cpu_ms']} ms; ours over it per round: {r['ours_over_compare_per_round']}")
        ok = all(all(n > 0 for n in r["answered"].values()) and not any(r["errors"].values())
                 for r in report["levels"])
        return 0 if ok else 1
    finally:
        for server in (floor, ours):
            if server is not None:
                server.stop()
        shutil.rmtree(logs, ignore_errors=True)
