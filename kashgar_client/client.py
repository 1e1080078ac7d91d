"""`KashgarClient`: the Kashgar AI HTTP API from Python, on the standard library alone (no Flask,
nothing of the server): an API key, timeouts, retries on 429 and 503 that wait what `Retry-After`
says (bounded), a search job followed to its end through its `Location`, typed answers."""

from __future__ import annotations

import email.utils
import http.client
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .answers import Accepted, Applied, Decision, Job, Level, Position, State, Suggestion
from .errors import JobFailed, JobTimeout, KashgarAPIError, KashgarUnreachable
from .events import JobEvent, read_events

__all__ = ["KashgarClient", "Answer", "retry_after_seconds"]

USER_AGENT = "kashgar-client/0.1"
RETRIED = frozenset({429, 503})  # refused before any work began: asking again is safe, POST included

ProgressCallback = Callable[[Job], None]


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, headers, and the JSON body (text for a body that is not JSON)."""

    status: int
    headers: Mapping[str, str]
    body: Any


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """A `Retry-After` header in seconds: a number of seconds or an HTTP date; None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class KashgarClient:
    """A client of one server.

    `api_key`: sent as `Authorization: Bearer <key>` (default: the `KASHGAR_API_KEY` environment
    variable; none when unset). `timeout`: seconds for each request (connecting and reading).
    `retries`: how many times a 429 or 503 is asked again, after the `Retry-After` it gave (else
    0.5 s, doubling); one that asks to wait longer than `max_retry_wait` seconds is raised at once
    (`KashgarAPIError.retry_after` says how long). `request_id`: sent as X-Request-ID. `sleep`: how
    the client waits (between retries and looks at a job).
    """

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        retries: int = 3,
        max_retry_wait: float = 30.0,
        request_id: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key if api_key is not None else (os.environ.get("KASHGAR_API_KEY") or None)
        self.timeout = timeout
        self.retries = retries
        self.max_retry_wait = max_retry_wait
        self.request_id = request_id
        self._sleep = sleep

    # ------------------------------------------------------------------------ transport
    def url(self, path: str) -> str:
        """The absolute URL of `path` (a path on the server, or an absolute URL as a Location gives)."""
        return urllib.parse.urljoin(self.base_url + "/", path)

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None,
                idempotency_key: str | None = None) -> Answer:
        """One call, asked again on 429/503 as the client's retry settings say. With
        `idempotency_key` (sent as `Idempotency-Key`, the same on every try), also when no answer
        came (the server made the job at most once). KashgarAPIError for an error answer,
        KashgarUnreachable for none."""
        delay = 0.5
        for attempt in range(self.retries + 1):
            try:
                return self._once(method, path, body, timeout, idempotency_key)
            except KashgarUnreachable as err:
                if idempotency_key is None or err.status != 0 or attempt == self.retries:
                    raise
                self._sleep(delay)
                delay *= 2
            except KashgarAPIError as err:
                if err.status not in RETRIED or attempt == self.retries:
                    raise
                wait = err.retry_after if err.retry_after is not None else delay
                if wait > self.max_retry_wait:
                    raise
                self._sleep(wait)
                delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def _once(self, method: str, path: str, body: Any, timeout: float | None,
              idempotency_key: str | None = None) -> Answer:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        if self.request_id:
            headers["X-Request-ID"] = self.request_id
        url = self.url(path)
        try:
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            with urllib.request.urlopen(req, timeout=self.timeout if timeout is None else timeout) as resp:
                status, raw, got = resp.status, resp.read(), resp.headers
        except urllib.error.HTTPError as err:
            status, raw, got = err.code, err.read(), err.headers
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise KashgarUnreachable(f"{method} {url}: {reason}") from exc
        answer_headers = {k: v for k, v in got.items()}
        ctype = got.get("Content-Type", "")
        try:
            payload: Any = json.loads(raw) if "json" in ctype and raw else raw.decode("utf-8", "replace")
        except ValueError as exc:
            raise KashgarUnreachable(f"{method} {url}: the answer ({status}) is not JSON: {exc}", status) from exc
        if status >= 400:
            raise KashgarAPIError(status, payload, answer_headers, retry_after_seconds(got.get("Retry-After")))
        if "json" not in ctype:
            raise KashgarUnreachable(f"{method} {url}: the answer ({status}) is {ctype or 'untyped'}, not JSON", status)
        return Answer(status, answer_headers, payload)

    # --------------------------------------------------------------------------- search
    def submit(
        self,
        state: State,
        *,
        level: str | None = None,
        elo: float | None = None,
        iterations: int | None = None,
        time_ms: int | None = None,
        seed: int = 0,
        mode: str = "auto",
        parallel: int | None = None,
    ) -> Suggestion | Accepted:
        """POST /suggest: the Suggestion (a synchronous search), or Accepted (a job: follow it
        with `wait`). `elo` instead of `level`: a strength from the weakest level's Elo to the
        strongest's (`elo_range`), each decision searched by one of the two levels around it."""
        body: dict[str, Any] = {"state": state, "seed": seed, "mode": mode}
        for key, value in (("level", level), ("elo", elo), ("iterations", iterations), ("time_ms", time_ms),
                           ("parallel", parallel)):
            if value is not None:
                body[key] = value
        answer = self.request("POST", "/suggest", body, idempotency_key=uuid.uuid4().hex)
        doc = answer.body
        if answer.status == 202:
            location = answer.headers.get("Location") or doc.get("status_url") or f"/jobs/{doc['job_id']}"
            return Accepted(str(doc["job_id"]), doc.get("status", "queued"), self.url(location),
                            int(doc.get("parts", 1)), str(doc.get("backend", "")), doc.get("request_id"), doc)
        return Suggestion.from_json(doc)

    def suggest(
        self,
        state: State,
        *,
        level: str | None = None,
        elo: float | None = None,
        iterations: int | None = None,
        time_ms: int | None = None,
        seed: int = 0,
        mode: str = "auto",
        parallel: int | None = None,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 0.25,
        wait_timeout: float | None = 3600.0,
    ) -> Suggestion:
        """The decision to play in `state` (a player's view, or a full state), whichever way the
        server answers: a job (202) is followed to its end (`on_progress` gets the job at each look).
        JobFailed, JobTimeout as `wait` says."""
        first = self.submit(state, level=level, elo=elo, iterations=iterations, time_ms=time_ms, seed=seed,
                            mode=mode, parallel=parallel)
        if isinstance(first, Suggestion):
            return first
        job = self.wait(first, on_progress=on_progress, poll_interval=poll_interval, timeout=wait_timeout)
        assert job.result is not None  # a finished job has its result
        return job.result

    def review(
        self,
        record: dict[str, Any],
        *,
        level: str = "master",
        seats: list[int] | None = None,
        seed: int = 0,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 0.5,
        wait_timeout: float | None = 3600.0,
    ) -> Job:
        """POST /reviews and follow the job to its end: the finished Job, its review (JSON) in
        `.review` (`on_progress` gets the job at each look: `progress.decisions_done` of
        `decisions_total`). JobFailed, JobTimeout as `wait` says."""
        body: dict[str, Any] = {"record": record, "level": level, "seed": seed}
        if seats is not None:
            body["seats"] = seats
        doc = self.request("POST", "/reviews", body, idempotency_key=uuid.uuid4().hex)
        location = doc.headers.get("Location") or doc.body.get("status_url") or f"/jobs/{doc.body['job_id']}"
        accepted = Accepted(str(doc.body["job_id"]), doc.body.get("status", "queued"), self.url(location),
                            int(doc.body.get("parts", 1)), str(doc.body.get("backend", "")),
                            doc.body.get("request_id"), doc.body)
        return self.wait(accepted, on_progress=on_progress, poll_interval=poll_interval, timeout=wait_timeout)

    def job(self, job: str | Accepted) -> Job:
        """GET the job (by id, or at the Location a 202 gave)."""
        return Job.from_json(self.request("GET", self._job_path(job)).body)

    def cancel(self, job: str | Accepted) -> Job:
        """DELETE the job: it stops (409 KashgarAPIError once it is over)."""
        return Job.from_json(self.request("DELETE", self._job_path(job)).body)

    def wait(
        self,
        job: str | Accepted,
        *,
        on_progress: ProgressCallback | None = None,
        poll_interval: float = 0.25,
        timeout: float | None = 3600.0,
    ) -> Job:
        """The job once it finished, looked at every `poll_interval` s (`on_progress` gets each look).
        JobFailed once it failed, or was cancelled and every part stopped (what they searched is in
        `.job.result`); JobTimeout after `timeout` s (the job goes on)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            seen = self.job(job)
            if on_progress is not None:
                on_progress(seen)
            if seen.status == "finished":
                return seen
            if seen.settled:
                raise JobFailed(seen)
            if deadline is not None and time.monotonic() > deadline:
                raise JobTimeout(seen.job_id, seen.status, timeout)
            self._sleep(poll_interval)

    def events(self, job: str | Accepted, *, timeout: float | None = 3600.0) -> Iterator[JobEvent]:
        """The job as it happens, from its Server-Sent Events stream: `progress` events, a review's
        `decision` events (each decision once), and last an `end` event with the job (`event.job`),
        after which the iteration stops. A stream the server ends after its lifetime is opened again;
        JobTimeout after `timeout` s (the job goes on); KashgarAPIError for an unknown job (404)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        job_id = job.job_id if isinstance(job, Accepted) else job
        seen: set[int] = set()
        while True:
            for event in self._stream(self._job_path(job) + "/events"):
                if event.kind == "error":  # the job is gone (its result expired)
                    raise KashgarAPIError(404, event.data, {}, None)
                if event.kind == "timeout":
                    break  # the stream's lifetime passed: open it again
                move = int(event.decision.get("move", -1)) if event.decision is not None else None
                if move is not None:
                    if move in seen:
                        continue  # sent again by a stream opened again
                    seen.add(move)
                yield event
                if event.kind == "end":
                    return
                if deadline is not None and time.monotonic() > deadline:
                    raise JobTimeout(job_id, event.status or "started", timeout)

    def _stream(self, path: str) -> Iterator[JobEvent]:
        headers = {"Accept": "text/event-stream", "User-Agent": USER_AGENT}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        url = self.url(path)
        req = urllib.request.Request(url, method="GET", headers=headers)
        try:
            resp = urllib.request.urlopen(req, timeout=self.timeout)
        except urllib.error.HTTPError as err:
            raw, ctype = err.read(), err.headers.get("Content-Type", "")
            payload: Any = json.loads(raw) if "json" in ctype and raw else raw.decode("utf-8", "replace")
            raise KashgarAPIError(err.code, payload, dict(err.headers.items()),
                                  retry_after_seconds(err.headers.get("Retry-After"))) from None
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            raise KashgarUnreachable(f"GET {url}: {getattr(exc, 'reason', None) or exc}") from exc
        with resp:
            try:
                yield from read_events(resp)
            except (OSError, http.client.HTTPException) as exc:
                raise KashgarUnreachable(f"GET {url}: the stream broke: {exc}") from exc

    def _job_path(self, job: str | Accepted) -> str:
        if isinstance(job, Accepted):
            return job.location
        return "/jobs/" + urllib.parse.quote(job, safe="")

    # ---------------------------------------------------------------------------- rules
    def new_game(self, players: int = 2, seed: int | None = None, variant: Any = None,
                 observer: int | None = None) -> Position:
        """POST /games: a new game (without `seed`, a random deal); `observer`: that seat's view."""
        body: dict[str, Any] = {"players": players, "variant": variant}
        if seed is not None:
            body["seed"] = seed
        if observer is not None:
            body["observer"] = observer
        return Position.from_json(self.request("POST", "/games", body).body)

    def legal(self, state: State, observer: int | None = None) -> Position:
        """POST /legal: the legal decisions; with `observer`, also that seat's view (`state`)."""
        body: dict[str, Any] = {"state": state}
        if observer is not None:
            body["observer"] = observer
        return Position.from_json(self.request("POST", "/legal", body).body)

    def apply(self, state: State, decision: str | dict[str, Any] | Decision,
              observer: int | None = None) -> Applied:
        """POST /apply: `decision` (its text, its JSON, or a Decision) played in `state`."""
        if isinstance(decision, Decision):
            decision = decision.text
        body: dict[str, Any] = {"state": state, "decision": decision}
        if observer is not None:
            body["observer"] = observer
        return Applied.from_json(self.request("POST", "/apply", body).body)

    # ----------------------------------------------------------------------------- meta
    def levels(self) -> list[Level]:
        return [Level.from_json(lv) for lv in self.request("GET", "/levels").body["levels"]]

    def elo_range(self) -> tuple[float, float] | None:
        """(weakest, strongest) Elo a request may ask for with `elo` (GET /levels); None when the
        server's ladder has fewer than two measured levels."""
        span = self.request("GET", "/levels").body.get("elo")
        return None if not span else (float(span["min"]), float(span["max"]))

    def cards(self) -> dict[str, Any]:
        return dict(self.request("GET", "/cards").body)

    def healthz(self) -> dict[str, Any]:
        return dict(self.request("GET", "/healthz").body)

    def readyz(self) -> dict[str, Any]:
        """The readiness answer, 200 or 503 alike (a 503 is not retried here: it is the answer)."""
        try:
            return dict(self._once("GET", "/readyz", None, None).body)
        except KashgarAPIError as err:
            if err.status == 503 and isinstance(err.body, dict):
                return dict(err.body)
            raise

    def openapi(self) -> dict[str, Any]:
        return dict(self.request("GET", "/openapi.json").body)
