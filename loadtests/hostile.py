"""Hostile input against `/suggest`, `/legal` and `/apply`: hypothesis-generated and mutated states
and decisions, in three classes, counted.

- valid: corpus states as clients send them, with legal decisions and small budgets;
- subtle: a corpus state or decision changed in one place (a resource count off by one or
  negative, a card duplicated or swapped for another, a contract number out of range, a seat
  dropped, the turn player or observer out of range, a decision that parses but is not legal,
  a budget just past its limit...);
- garbage: arbitrary JSON in place of a field, of the whole body, or bytes that are not JSON.

Every answer must be a 2xx or a clear 4xx (a JSON body with `error`, `message` and `pointer`),
never a 5xx, each within a time bound. A valid request that gets a 4xx is counted
(`valid_rejected`) and listed, as is every violation.

    python -m loadtests.hostile --examples 300            # against a gunicorn it starts (embedded queue)
    python -m loadtests.hostile --host http://127.0.0.1:8000 --examples 1000
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from loadtests.corpus import load as load_corpus

ENDPOINTS = ("/suggest", "/legal", "/apply")
CARD_SLUGS = [
    "patriarch",
    "matriarch",
    "kraemerin",
    "knecht",
    "prophet",
    "marktfrau",
    "schreiber",
    "zigeuner",
    "aristokratin",
    "stadtwache",
    "hirte",
    "mundschenk",
    "no_such_card",
    "",
]
RESOURCES = ["ginger", "cloves", "pepper", "anise", "cinnamon", "gold", "mules"]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
    | st.sampled_from(CARD_SLUGS + RESOURCES + ["c0:a", "skip", "keep knecht", "kashgar/state@1"])
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=15,
)


@dataclass
class Tally:
    """Answers by class and endpoint, status classes, slowest answer, violations."""

    time_limit_s: float
    counts: Counter[str] = field(default_factory=Counter)
    statuses: Counter[str] = field(default_factory=Counter)
    by_class_status: Counter[str] = field(default_factory=Counter)
    violations: list[dict[str, Any]] = field(default_factory=list)
    valid_rejected: list[dict[str, Any]] = field(default_factory=list)
    #: the first subtle or garbage requests that were answered 2xx (accepted as valid)
    accepted: list[dict[str, Any]] = field(default_factory=list)
    slowest_ms: float = 0.0

    def record(self, klass: str, endpoint: str, status: int, body: Any, ms: float, sent: Any) -> None:
        self.counts[f"{klass} {endpoint}"] += 1
        self.by_class_status[f"{klass} {status}"] += 1
        self.statuses[f"{status // 100}xx"] += 1
        self.statuses[str(status)] += 1
        self.slowest_ms = max(self.slowest_ms, ms)
        problem = None
        if status >= 500 or status < 200 or 300 <= status < 400:
            problem = f"status {status}"
        elif 400 <= status < 500 and not (
            isinstance(body, dict)
            and isinstance(body.get("error"), str)
            and isinstance(body.get("message"), str)
            and isinstance(body.get("pointer"), str)
        ):
            problem = "4xx without a clear JSON error body"
        elif ms > self.time_limit_s * 1000:
            problem = f"took {ms:.0f} ms (limit {self.time_limit_s * 1000:.0f} ms)"
        if problem:
            self.violations.append(
                {
                    "class": klass,
                    "endpoint": endpoint,
                    "status": status,
                    "problem": problem,
                    "body": str(body)[:300],
                    "sent": str(sent)[:300],
                }
            )
        elif klass != "valid" and status < 300 and len(self.accepted) < 200:
            self.accepted.append({"class": klass, "endpoint": endpoint, "sent": sent})
        elif klass == "valid" and status >= 400:
            self.valid_rejected.append({"endpoint": endpoint, "status": status, "body": str(body)[:300]})

    def summary(self) -> dict[str, Any]:
        return {
            "requests": sum(self.counts.values()),
            "by_class_endpoint": dict(sorted(self.counts.items())),
            "statuses": dict(sorted(self.statuses.items())),
            "by_class_status": dict(sorted(self.by_class_status.items())),
            "violations": len(self.violations),
            "valid_rejected": len(self.valid_rejected),
            "slowest_ms": round(self.slowest_ms, 1),
            "time_limit_ms": self.time_limit_s * 1000,
        }


class Client:
    """One keep-alive HTTP connection to a loopback service; raw bytes in, (status, JSON) out."""

    def __init__(self, base_url: str, timeout: float = 30.0) -> None:
        u = urlparse(base_url)
        self.host, self.port, self.timeout = u.hostname or "127.0.0.1", u.port or 80, timeout
        self.conn: http.client.HTTPConnection | None = None

    def send(self, path: str, raw: bytes, content_type: str = "application/json") -> tuple[int, Any, float]:
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            t0 = time.perf_counter()
            try:
                self.conn.request("POST", path, body=raw, headers={"Content-Type": content_type})
                resp = self.conn.getresponse()
                data = resp.read()
                ms = (time.perf_counter() - t0) * 1000
                if resp.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                try:
                    return resp.status, json.loads(data), ms
                except ValueError:
                    return resp.status, data[:300].decode("utf-8", "replace"), ms
            except (ConnectionError, http.client.HTTPException, TimeoutError, OSError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")


# ---- mutations -------------------------------------------------------------------------------


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for k in path:
        doc = doc[k]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def _delete(doc: Any, path: tuple[Any, ...]) -> Any:
    if not path:
        return doc
    parent = _get(doc, path[:-1])
    del parent[path[-1]]
    return doc


def subtle_state(draw: Callable[..., Any], state: dict[str, Any]) -> dict[str, Any]:
    """The state changed in one plausible-looking place."""
    doc = copy.deepcopy(state)
    players = doc["players"]
    op = draw(
        st.sampled_from(
            [
                "resource",
                "card_swap",
                "card_dup",
                "card_drop",
                "contract",
                "display",
                "players",
                "turn_player",
                "observer",
                "seat_drop",
                "leaf_nudge",
                "turn",
                "pending",
            ]
        )
    )
    seat = draw(st.integers(0, players - 1))
    if op == "resource":
        res = draw(st.sampled_from(RESOURCES))
        doc["seats"][seat]["resources"][res] += draw(st.sampled_from([-100, -4, -1, 1, 7, 10**6]))
    elif op in ("card_swap", "card_dup", "card_drop"):
        caravans = [c for c in doc["seats"][seat]["caravans"] if c]
        if caravans:
            car = draw(st.sampled_from(caravans))
            i = draw(st.integers(0, len(car) - 1))
            if op == "card_swap":
                car[i] = draw(st.sampled_from(CARD_SLUGS))
            elif op == "card_dup":
                car.insert(i, car[i])
            else:
                del car[i]
    elif op == "contract":
        doc["seats"][seat]["contracts"].append(draw(st.sampled_from([0, 1, 17, 40, 41, -3])))
    elif op == "display":
        if doc["display"]:
            doc["display"][0] = draw(st.sampled_from([0, 41, doc["display"][-1], 999]))
        else:
            doc["display"] = [1, 1]
    elif op == "players":
        doc["players"] = draw(st.sampled_from([0, 1, players - 1, players + 1, 5]))
    elif op == "turn_player":
        doc["turn_player"] = draw(st.sampled_from([-1, players, 4, 99]))
    elif op == "observer":
        doc["observer"] = draw(st.sampled_from([-1, players, 7, None, (doc.get("observer") or 0) ^ 1]))
    elif op == "seat_drop":
        doc["seats"].pop()
    elif op == "turn":
        doc["turn"] = draw(st.sampled_from([-1, doc["turn_limit"], doc["turn_limit"] + 5, 2**40]))
    elif op == "pending":
        doc["pending"] = draw(json_values) if doc.get("pending") is None else None
    else:  # nudge one numeric leaf
        numeric = [p for p in _paths(doc) if isinstance(_get(doc, p), int) and not isinstance(_get(doc, p), bool)]
        if numeric:
            p = draw(st.sampled_from(numeric))
            _set(doc, p, _get(doc, p) + draw(st.sampled_from([-1, 1, -1000, 10**9])))
    return doc


def garbage_state(draw: Callable[..., Any], state: dict[str, Any]) -> Any:
    """Arbitrary JSON in one place of the state (or in its place)."""
    doc = copy.deepcopy(state)
    paths = _paths(doc)
    p = draw(st.sampled_from(paths))
    op = draw(st.sampled_from(["replace", "delete", "add_key"]))
    if op == "replace":
        return _set(doc, p, draw(json_values))
    if op == "delete":
        return _delete(doc, p or ("seats",))
    target = _get(doc, p)
    if not isinstance(target, dict):
        target = doc
    target["\u00a7" + draw(st.text(max_size=8))] = draw(json_values)  # a key no schema has
    return doc


def subtle_decision(draw: Callable[..., Any], entry: dict[str, Any]) -> Any:
    """A decision that parses (mostly) but is not legal here."""
    return draw(
        st.sampled_from(
            [
                "c3:a",
                "c0:z",
                "c9:pass",
                "keep no_such_card",
                "keep patriarch",
                "fulfil 41",
                "fulfil 0",
                "pay 99",
                "pay -1",
                "route 9 9",
                "remove c0 99",
                "take knecht",
                "choose gold",
                "choose saffron",
                {"kind": "select", "caravan": 7, "option": "a"},
                {"kind": "fulfil", "contract": 12345},
                {"kind": "keep"},
                {"kind": "nope"},
                {"kind": "pay", "amount": 2**64},
                {"kind": "route", "to": [0, 1, 2, 3, 4, 5]},
                entry["decision_text"] + " ",
                entry["decision_text"].upper(),
            ]
        )
    )


def build_request(draw: Callable[..., Any], entries: list[dict[str, Any]]) -> tuple[str, str, bytes, str]:
    """(class, endpoint, raw body, content type) of one hostile request."""
    entry = draw(st.sampled_from(entries))
    endpoint = draw(st.sampled_from(ENDPOINTS))
    klass = draw(st.sampled_from(["valid", "subtle", "garbage"]))
    ctype = "application/json"
    state: Any = entry["state"]
    decision: Any = entry["decision"] if draw(st.booleans()) else entry["decision_text"]
    budget: dict[str, Any] = draw(
        st.sampled_from(
            [
                {"level": "novice"},
                {"level": "beginner"},
                {"iterations": 30},
                {"time_ms": 20},
                {"iterations": 40, "parallel": 2},
            ]
        )
    )
    extra: dict[str, Any] = {}
    if klass == "subtle":
        where = draw(
            st.sampled_from(
                {"/legal": ["state"], "/apply": ["state", "decision"], "/suggest": ["state", "budget"]}[endpoint]
            )
        )
        if where == "state":
            state = subtle_state(draw, entry["state"])
        elif where == "decision":
            decision = subtle_decision(draw, entry)
        else:
            budget = draw(
                st.sampled_from(
                    [
                        {"level": "no_such_level"},
                        {"level": "Novice"},
                        {"iterations": 0},
                        {"iterations": 10**9, "mode": "sync"},
                        {"time_ms": 10**8, "mode": "sync"},
                        {"time_ms": -5},
                        {"iterations": 30, "parallel": 65},
                        {"iterations": 30, "mode": "later"},
                        {"iterations": 30, "seed": -1},
                        {"iterations": 30, "seed": 2**80},
                    ]
                )
            )
    elif klass == "garbage":
        where = draw(st.sampled_from(["state", "decision", "field", "body", "bytes"]))
        if where == "state":
            state = garbage_state(draw, entry["state"])
        elif where == "decision":
            decision = draw(json_values)
        elif where == "field":
            extra = {
                draw(st.sampled_from(["level", "iterations", "time_ms", "seed", "mode", "parallel", "observer"])): draw(
                    json_values
                )
            }
        elif where == "body":
            return klass, endpoint, json.dumps(draw(json_values)).encode(), ctype
        else:
            raw = draw(
                st.sampled_from(
                    [
                        b"",
                        b"{",
                        b"\xff\xfe\x00garbage",
                        b'{"state": NaN}',
                        b'{"state": 1e999}',
                        b"[" * 5000 + b"]" * 5000,
                        b'{"state": {"schema": "kashgar/state@1"}}' * 2,
                    ]
                )
                | st.binary(max_size=200)
            )
            ctype = draw(st.sampled_from(["application/json", "text/plain", "application/x-www-form-urlencoded"]))
            return klass, endpoint, raw, ctype
    body: dict[str, Any] = {"state": state}
    if endpoint == "/apply":
        body["decision"] = decision
    if endpoint == "/suggest":
        body.update({"seed": 1, "mode": "sync"})
        body.update(budget)
    body.update(extra)
    return klass, endpoint, json.dumps(body).encode(), ctype


def run(
    base_url: str,
    *,
    examples: int = 300,
    seed: int = 0,
    time_limit_s: float = 5.0,
    deadline_s: float = 600.0,
) -> Tally:
    """Send `examples` hostile requests (stops early at `deadline_s`); the tally of the answers."""
    entries = load_corpus()
    tally = Tally(time_limit_s)
    client = Client(base_url, timeout=max(30.0, time_limit_s * 3))
    stop_at = time.monotonic() + deadline_s

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def one(data: st.DataObject) -> None:
        if time.monotonic() > stop_at:
            return
        klass, endpoint, raw, ctype = build_request(data.draw, entries)
        try:
            status, body, ms = client.send(endpoint, raw, ctype)
        except (OSError, http.client.HTTPException) as exc:
            status, body, ms = 599, f"no answer: {exc!r}", 0.0
        tally.record(klass, endpoint, status, body, ms, raw[:4000])

    one()
    # a body over the size limit, once per endpoint
    big = json.dumps({"state": {"pad": "x" * 1_200_000}}).encode()
    for endpoint in ENDPOINTS:
        status, body, ms = client.send(endpoint, big)
        tally.record("garbage", endpoint, status, body, ms, "<1.2 MB body>")
    return tally


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default=None, help="a running loopback service (default: start gunicorn here)")
    ap.add_argument("--examples", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=5.0, help="seconds any one answer may take")
    ap.add_argument("--deadline", type=float, default=600.0, help="seconds the whole run may take")
    ap.add_argument("--web-workers", type=int, default=2)
    args = ap.parse_args(argv)

    def go(url: str) -> int:
        t0 = time.monotonic()
        tally = run(url, examples=args.examples, seed=args.seed, time_limit_s=args.time_limit, deadline_s=args.deadline)
        out = tally.summary()
        out["seconds"] = round(time.monotonic() - t0, 1)
        print(json.dumps(out, indent=2))
        for v in tally.violations[:20]:
            print("VIOLATION", json.dumps(v), file=sys.stderr)
        for v in tally.valid_rejected[:10]:
            print("valid request rejected", json.dumps(v), file=sys.stderr)
        return 1 if tally.violations else 0

    if args.host:
        from loadtests.stack import is_loopback

        if not is_loopback(args.host):
            print("hostile input is only sent to loopback services", file=sys.stderr)
            return 2
        return go(args.host)
    from loadtests.stack import start_stack

    with start_stack(web_workers=args.web_workers, redis=False) as stack:
        return go(stack.url)


if __name__ == "__main__":
    sys.exit(main())
