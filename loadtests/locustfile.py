"""Locust load test of the Kashgar AI service: a realistic mix of traffic on real game states.

- `suggest` (SuggestUser): synchronous `/suggest` at several levels (fast to slow), the way a game
  client asks for the bot's move while a player waits.
- `async` (AsyncUser): long searches (`mode: async`, 202 + job), polled at `/jobs/<id>` until
  they finish; the whole search is reported as `async search [total]`.
- `rules` (RulesUser): the rules API, `/games`, `/legal`, `/apply`, and short walks through a game.

States come from the self-play corpus (`loadtests/corpus.py`): every phase of the game, every kind
of decision, 2 to 4 players, as the player to move sees them. Run one part alone with
`--tags suggest` (or `async`, `rules`). Users think between requests (KASHGAR_LOAD_THINK).

Knobs (environment):
  KASHGAR_LOAD_LEVELS   sync levels and weights, `novice:3,casual:3,club:2,skilled:1`
  KASHGAR_LOAD_THINK    think time in seconds, `min,max` (default `1,3`; `0` for closed loop)
  KASHGAR_LOAD_THROUGHPUT  instead of think time: tasks per second per sync/rules user (paced load)
  KASHGAR_LOAD_ASYNC_ITERATIONS  budget of an async search (default 6000), KASHGAR_LOAD_ASYNC_PARALLEL (2)
  KASHGAR_LOAD_ASYNC_THINK       think time of the async users (default: KASHGAR_LOAD_THINK)
  KASHGAR_LOAD_ASYNC_TIMEOUT     seconds an async job may take until it counts as failed (120)
  KASHGAR_LOAD_WEIGHTS  user mix `suggest:6,async:1,rules:3`
  KASHGAR_LOAD_SEED     seed of the users' random choices (default 0)
  KASHGAR_LOAD_SHAPE=step  a step-load shape: KASHGAR_STEP_USERS users more every
                        KASHGAR_STEP_SECONDS, KASHGAR_STEP_COUNT steps (then it stops)
"""

from __future__ import annotations

import itertools
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from locust import FastHttpUser, LoadTestShape, between, constant, constant_throughput, events, tag, task

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from loadtests.corpus import load as load_corpus  # noqa: E402
from loadtests.env import async_timeout_s  # noqa: E402

TERMINAL = {"finished", "failed", "cancelled"}


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


def parse_weights(text: str) -> list[tuple[str, int]]:
    """`a:3,b:1` -> [("a", 3), ("b", 1)]; a name without weight weighs 1."""
    out: list[tuple[str, int]] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        name, _, w = item.partition(":")
        out.append((name.strip(), int(w) if w else 1))
    return out


def think_time(variable: str = "KASHGAR_LOAD_THINK") -> Any:
    """Think time from `variable` (`min,max` or one number), or paced by KASHGAR_LOAD_THROUGHPUT."""
    rate = os.environ.get("KASHGAR_LOAD_THROUGHPUT")
    if rate and variable == "KASHGAR_LOAD_THINK":  # each user runs its task `rate` times per second
        return constant_throughput(float(rate))
    lo, _, hi = _env(variable, _env("KASHGAR_LOAD_THINK", "1,3")).partition(",")
    if not hi:
        return constant(float(lo))
    return between(float(lo), float(hi))


CORPUS: list[dict[str, Any]] = load_corpus(os.environ.get("KASHGAR_LOAD_CORPUS"))
LEVELS = parse_weights(_env("KASHGAR_LOAD_LEVELS", "novice:3,casual:3,club:2,skilled:1"))
WEIGHTS = dict(parse_weights(_env("KASHGAR_LOAD_WEIGHTS", "suggest:6,async:1,rules:3")))
ASYNC_ITERATIONS = int(_env("KASHGAR_LOAD_ASYNC_ITERATIONS", "6000"))
ASYNC_PARALLEL = int(_env("KASHGAR_LOAD_ASYNC_PARALLEL", "2"))
ASYNC_TIMEOUT = async_timeout_s()
POLL_SECONDS = float(_env("KASHGAR_LOAD_POLL", "0.5"))
SEED = int(_env("KASHGAR_LOAD_SEED", "0"))
_user_ids = itertools.count()


class _KashgarUser(FastHttpUser):
    abstract = True
    wait_time = think_time()
    network_timeout = 120.0
    connection_timeout = 10.0

    def on_start(self) -> None:
        self.rng = random.Random(SEED * 1_000_003 + next(_user_ids))

    def entry(self) -> dict[str, Any]:
        return self.rng.choice(CORPUS)

    def post(self, path: str, body: dict[str, Any], name: str, expect: int = 200) -> dict[str, Any] | None:
        """POST, check the status and that the body is JSON; None (and a failure) otherwise."""
        with self.client.post(path, json=body, name=name, catch_response=True) as resp:
            if resp.status_code != expect:
                resp.failure(f"{resp.status_code}: {(resp.text or '')[:300]}")
                return None
            try:
                data = resp.json()
            except ValueError:
                resp.failure("not JSON")
                return None
            resp.success()
            return data  # type: ignore[no-any-return]


class SuggestUser(_KashgarUser):
    """A game client asking for the bot's move, synchronously, at a level."""

    weight = WEIGHTS.get("suggest", 0)

    @tag("suggest")
    @task
    def suggest(self) -> None:
        e = self.entry()
        names = [n for n, _ in LEVELS]
        level = self.rng.choices(names, weights=[w for _, w in LEVELS])[0]
        body = {"state": e["state"], "level": level, "seed": self.rng.randrange(1 << 31), "mode": "sync"}
        with self.client.post("/suggest", json=body, name=f"/suggest [{level}]", catch_response=True) as resp:
            if resp.status_code != 200:
                resp.failure(f"{resp.status_code}: {(resp.text or '')[:300]}")
                return
            data = resp.json()
            if not isinstance(data.get("decision_text"), str) or not data.get("alternatives"):
                resp.failure(f"no decision in {str(data)[:200]}")
                return
            if data.get("truncated"):
                resp.failure("truncated: the search hit the sync safety cap before its budget")
                return
            resp.success()


class AsyncUser(_KashgarUser):
    """A long analysis: submitted as a job, polled until it is done."""

    weight = WEIGHTS.get("async", 0)
    wait_time = think_time("KASHGAR_LOAD_ASYNC_THINK")

    @tag("async")
    @task
    def long_search(self) -> None:
        e = self.entry()
        t0 = time.perf_counter()
        body = {
            "state": e["state"],
            "iterations": ASYNC_ITERATIONS,
            "parallel": ASYNC_PARALLEL,
            "seed": self.rng.randrange(1 << 31),
            "mode": "async",
        }
        accepted = self.post("/suggest", body, "/suggest [async]", expect=202)
        if accepted is None:
            return
        url = accepted["status_url"]
        status, error = "queued", None
        deadline = time.monotonic() + ASYNC_TIMEOUT
        while time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            with self.client.get(url, name="/jobs/[id]", catch_response=True) as resp:
                if resp.status_code != 200:
                    resp.failure(f"{resp.status_code}: {(resp.text or '')[:300]}")
                    status, error = "poll_error", f"{resp.status_code}"
                    break
                job = resp.json()
                status = job["status"]
                resp.success()
                if status in TERMINAL:
                    error = job.get("error")
                    break
        else:
            error = f"not done after {ASYNC_TIMEOUT} s (status {status})"
        exc = None if status == "finished" else RuntimeError(f"job {accepted['job_id']} {status}: {error}")
        events.request.fire(
            request_type="JOB",
            name="async search [total]",
            response_time=(time.perf_counter() - t0) * 1000,
            response_length=0,
            exception=exc,
            context={},
        )


class RulesUser(_KashgarUser):
    """A game client using the rules API: new games, legal decisions, applying decisions."""

    weight = WEIGHTS.get("rules", 0)

    @tag("rules")
    @task(2)
    def legal(self) -> None:
        e = self.entry()
        with self.client.post("/legal", json={"state": e["state"]}, name="/legal", catch_response=True) as resp:
            if resp.status_code != 200:
                resp.failure(f"{resp.status_code}: {(resp.text or '')[:300]}")
                return
            data = resp.json()
            if data.get("count") != e["legal_count"]:
                resp.failure(f"{e['id']}: {data.get('count')} legal decisions, corpus says {e['legal_count']}")
                return
            resp.success()

    @tag("rules")
    @task(2)
    def apply(self) -> None:
        e = self.entry()
        self.post("/apply", {"state": e["state"], "decision": e["decision"]}, "/apply")

    @tag("rules")
    @task(1)
    def walk(self) -> None:
        """A new game, then a few decisions applied one after another (as a client would)."""
        game = self.post(
            "/games",
            {"players": self.rng.choice([2, 3, 4]), "seed": self.rng.randrange(1 << 31), "observer": 0},
            "/games",
        )
        if game is None:
            return
        state, legal = game["state"], game["legal"]
        for _ in range(self.rng.randint(1, 6)):
            if not legal:
                break
            choice = self.rng.choice(legal)
            nxt = self.post("/apply", {"state": state, "decision": choice["decision"]}, "/apply [walk]")
            if nxt is None:
                return
            state, legal = nxt["state"], nxt["legal"]


if os.environ.get("KASHGAR_LOAD_SHAPE") == "step":

    class StepLoadShape(LoadTestShape):
        """Step load: `step_users` more users every `step_seconds`, `steps` steps, then stop."""

        step_users = int(_env("KASHGAR_STEP_USERS", "2"))
        step_seconds = float(_env("KASHGAR_STEP_SECONDS", "30"))
        steps = int(_env("KASHGAR_STEP_COUNT", "5"))

        def tick(self) -> tuple[int, float] | None:
            t = self.get_run_time()
            step = int(t // self.step_seconds) + 1
            if step > self.steps:
                return None
            return step * self.step_users, float(self.step_users)
