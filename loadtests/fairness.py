"""One client's pressure against a running server, and how another client fares meanwhile.

- `flood`: `--requests` concurrent synchronous `POST /suggest` of `--time-ms` each from one client;
  what each got and how soon (a refusal should come at once, not after a wait in a queue).
- `keepalive`: `--connections` keep-alive connections from one client, each sending a valid novice
  `POST /suggest` spread over `--spread` seconds, again and again on the same connection.

Meanwhile another client (from `--bystander` as its source address: a loopback address of its own
against a local server) asks a novice `POST /suggest` and `GET /healthz` in turn; its latencies are
reported. One JSON document on stdout.

    python -m loadtests.fairness --url http://127.0.0.1:8000 flood --requests 40 --time-ms 2000
    python -m loadtests.fairness --url http://127.0.0.1:8000 keepalive --connections 80 --spread 9
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import statistics
import threading
import time
from typing import Any
from urllib.parse import urlsplit


def request(host: str, port: int, method: str, path: str, body: Any = None, source: str | None = None,
            timeout: float = 120.0) -> tuple[str, float, dict[str, Any]]:
    """(status, seconds, JSON body) of one request on a fresh connection from `source`; the
    exception's name for a failure without a status."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    data = None if body is None else json.dumps(body).encode()
    t0 = time.monotonic()
    try:
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"} if data else {})
        resp = conn.getresponse()
        raw = resp.read()
        status = str(resp.status)
        try:
            doc = json.loads(raw) if raw else {}
        except ValueError:
            doc = {}
    except OSError as err:
        status, doc = type(err).__name__, {}
    finally:
        conn.close()
    return status, time.monotonic() - t0, doc if isinstance(doc, dict) else {}


def summary(seconds: list[float]) -> dict[str, float]:
    if not seconds:
        return {}
    s = sorted(seconds)
    return {"n": len(s), "median_s": round(statistics.median(s), 4),
            "p99_s": round(s[min(len(s) - 1, int(0.99 * len(s)))], 4), "max_s": round(s[-1], 4)}


class Bystander:
    """Another client: a novice `/suggest` and `GET /healthz` in turn until stopped."""

    def __init__(self, host: str, port: int, state: dict[str, Any], source: str | None) -> None:
        self.host, self.port, self.state, self.source = host, port, state, source
        self.times: dict[str, list[float]] = {"suggest": [], "healthz": []}
        self.statuses: dict[str, int] = {}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        body = {"state": self.state, "level": "novice", "seed": 1, "mode": "sync"}
        while not self.stop.is_set():
            asks = (("suggest", "POST", "/suggest", body), ("healthz", "GET", "/healthz", None))
            for name, method, path, doc in asks:
                status, took, _ = request(self.host, self.port, method, path, doc, self.source, timeout=60)
                self.times[name].append(took)
                self.statuses[status] = self.statuses.get(status, 0) + 1
            self.stop.wait(0.05)

    def __enter__(self) -> Bystander:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()

    def report(self) -> dict[str, Any]:
        return {"statuses": self.statuses, **{k: summary(v) for k, v in self.times.items()}}


def flood(host: str, port: int, state: dict[str, Any], requests: int, time_ms: int) -> dict[str, Any]:
    """`requests` concurrent sync searches of `time_ms` from one client: each one's status and time."""
    out: list[tuple[str, float, str]] = [("", 0.0, "")] * requests
    start = threading.Barrier(requests)

    def one(i: int) -> None:
        start.wait()
        status, took, doc = request(host, port, "POST", "/suggest",
                                    {"state": state, "time_ms": time_ms, "mode": "sync", "seed": i})
        out[i] = (status, took, str(doc.get("error", "")))

    threads = [threading.Thread(target=one, args=(i,)) for i in range(requests)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    by: dict[str, list[float]] = {}
    for status, took, _ in out:
        by.setdefault(status, []).append(took)
    return {"requests": requests, "time_ms": time_ms, "by_status": {k: summary(v) for k, v in by.items()},
            "errors": sorted({e for _, _, e in out if e})}


def keepalive(host: str, port: int, state: dict[str, Any], connections: int, spread: float,
              seconds: float) -> dict[str, Any]:
    """`connections` keep-alive connections, each sending a valid novice /suggest byte by byte over
    `spread` seconds, again and again, for `seconds`: the answers each got, by status."""
    body = json.dumps({"state": state, "level": "novice", "seed": 1, "mode": "sync"}).encode()
    head = (f"POST /suggest HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    data = head + body
    statuses: dict[str, int] = {}
    lock = threading.Lock()
    end = time.monotonic() + seconds

    def one() -> None:
        sock: socket.socket | None = None
        while time.monotonic() < end:
            try:
                if sock is None:
                    sock = socket.create_connection((host, port), timeout=60)
                pieces = 10
                step = max(1, len(data) // pieces)
                for k in range(0, len(data), step):
                    sock.sendall(data[k : k + step])
                    time.sleep(spread / pieces)
                got = sock.recv(65536)
                status = got.split(b" ", 2)[1].decode() if got.startswith(b"HTTP/") else "closed"
                if b"connection: close" in got.lower() or not got:
                    sock.close()
                    sock = None
            except OSError as err:
                status = type(err).__name__
                if sock is not None:
                    sock.close()
                sock = None
                time.sleep(0.5)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
        if sock is not None:
            sock.close()

    threads = [threading.Thread(target=one, daemon=True) for _ in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 120)
    return {"connections": connections, "spread_s": spread, "seconds": seconds, "answers": statuses}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True)
    p.add_argument("--bystander", default="127.0.0.3", help="the other client's source address ('' for any)")
    sub = p.add_subparsers(dest="probe", required=True)
    f = sub.add_parser("flood")
    f.add_argument("--requests", type=int, default=40)
    f.add_argument("--time-ms", type=int, default=2000)
    k = sub.add_parser("keepalive")
    k.add_argument("--connections", type=int, default=80)
    k.add_argument("--spread", type=float, default=9.0)
    k.add_argument("--seconds", type=float, default=30.0)
    args = p.parse_args(argv)
    where = urlsplit(args.url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    status, _, game = request(host, port, "POST", "/games", {"players": 2, "seed": 3, "observer": 0})
    if status != "200":
        raise SystemExit(f"POST /games answered {status}")
    state = game["state"]
    with Bystander(host, port, state, args.bystander or None) as other:
        time.sleep(0.5)
        if args.probe == "flood":
            result = flood(host, port, state, args.requests, args.time_ms)
        else:
            result = keepalive(host, port, state, args.connections, args.spread, args.seconds)
    print(json.dumps({"probe": args.probe, **result, "bystander": other.report()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
