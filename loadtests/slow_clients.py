"""Slow clients against a running server: `--clients` connections that each send one byte of a
request every `--every` seconds (half of them in the head, half in a 10 KB body), and meanwhile
another client asking `POST /games` and a novice `POST /suggest` in turn for `--seconds`. Reports
that client's latencies and what each slow connection got, and when (after its first byte).

    python -m loadtests.slow_clients --url http://127.0.0.1:8000 --clients 2 --every 8 --seconds 30
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import threading
import time
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit


def post(url: str, body: Any, timeout: float = 120.0) -> tuple[str, float]:
    """(status, seconds) of one POST; the exception's name for a failure without a status."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    t0 = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            resp.read()
            status = str(resp.status)
    except urllib.error.HTTPError as err:
        status = str(err.code)
    except OSError as err:
        status = type(err).__name__
    return status, time.monotonic() - t0


class SlowConnections:
    """The trickling connections, each read by a thread of its own until the server answers or closes."""

    def __init__(self, host: str, port: int, count: int, every: float) -> None:
        head = b"POST /games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        self.requests = [head + (b"Content-Length: 10000\r\n\r\n{" if i % 2 else b"X-Slow: ") + b" " * 4000
                         for i in range(count)]
        self.socks = [socket.create_connection((host, port)) for _ in range(count)]
        self.first: list[float | None] = [None] * count
        self.ended: list[float | None] = [None] * count
        self.answers: list[str] = [""] * count
        self.every = every
        self.stop = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._send, daemon=True).start()
        for i in range(len(self.socks)):
            threading.Thread(target=self._read, args=(i,), daemon=True).start()

    def _send(self) -> None:
        sent = 0
        while not self.stop.is_set():
            for i, sock in enumerate(self.socks):
                if self.ended[i] is None:
                    try:
                        sock.send(self.requests[i][sent : sent + 1])
                    except OSError:
                        continue
                    self.first[i] = self.first[i] or time.monotonic()
            sent += 1
            self.stop.wait(self.every)

    def _read(self, i: int) -> None:
        data = b""
        try:
            while chunk := self.socks[i].recv(65536):
                data += chunk
        except OSError:
            pass
        self.ended[i] = time.monotonic()
        self.answers[i] = data.split(b" ", 2)[1].decode() if data.startswith(b"HTTP/") else "closed"

    def close(self) -> None:
        self.stop.set()
        for sock in self.socks:
            sock.close()


def run(url: str, clients: int, every: float, seconds: float) -> dict[str, Any]:
    parts = urlsplit(url)
    with urllib.request.urlopen(urllib.request.Request(
            url + "/games", data=b'{"players": 2, "seed": 3, "observer": 0}', method="POST",
            headers={"Content-Type": "application/json"}), timeout=60) as resp:
        view = json.loads(resp.read())["state"]
    slow = SlowConnections(parts.hostname or "127.0.0.1", parts.port or 80, clients, every)
    slow.start()
    time.sleep(0.5)
    answers: list[tuple[str, float]] = []
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        answers.append(post(url + "/games", {"players": 2, "seed": 1}))
        answers.append(post(url + "/suggest", {"state": view, "level": "novice", "mode": "sync"}))
        time.sleep(0.2)
    slow.close()
    time.sleep(0.2)
    waits = [e - f for e, f in zip(slow.ended, slow.first, strict=True) if e is not None and f is not None]
    times = [t for _, t in answers]
    return {"slow_clients": clients, "every_s": every, "requests": len(answers),
            "statuses": sorted({s for s, _ in answers}), "median_s": round(statistics.median(times), 4),
            "max_s": round(max(times), 3), "slow_client_answers": sorted(set(slow.answers)),
            "slow_client_answered_after_s": [round(min(waits), 1), round(max(waits), 1)] if waits else None}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--clients", type=int, default=2, help="slow connections (default 2)")
    p.add_argument("--every", type=float, default=8.0, help="seconds between two bytes of each (default 8)")
    p.add_argument("--seconds", type=float, default=30.0, help="how long the other client asks (default 30)")
    args = p.parse_args(argv)
    print(json.dumps(run(args.url.rstrip("/"), args.clients, args.every, args.seconds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
