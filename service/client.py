"""A small Python client for the Kashgar AI HTTP API (standard library only).

from service.client import KashgarClient
api = KashgarClient("http://127.0.0.1:8000")
game = api.new_game(players=3, seed=1)
answer = api.suggest(game["state"], level="club")          # waits for async jobs
nxt = api.apply(game["state"], answer["decision_text"])
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any


class KashgarAPIError(Exception):
    """A 4xx/5xx answer: `status`, `code` (e.g. `invalid_state`), `message`, `pointer`, `body`."""

    def __init__(self, status: int, body: Any) -> None:
        self.status = status
        self.body = body
        if isinstance(body, dict):
            self.code = str(body.get("error", "error"))
            self.message = str(body.get("message", ""))
            self.pointer = str(body.get("pointer", ""))
        else:
            self.code, self.message, self.pointer = "error", str(body)[:500], ""
        super().__init__(f"{status} {self.code}: {self.message}" + (f" (at {self.pointer})" if self.pointer else ""))


class KashgarUnreachable(KashgarAPIError):
    """No answer, or none that can be read: the server is down or unreachable (connection
    refused, a bad URL), it did not answer within the timeout, or it answered something that is not
    the API's JSON. `status` is 0 (nothing was answered) or the status of the unreadable answer."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(status, {"error": "unreachable" if status == 0 else "bad_response", "message": message})
        if status == 0:
            self.args = (f"unreachable: {message}",)


class JobTimeout(TimeoutError):
    """`wait` gave up on a job that is still running; the job goes on (`job_id`: cancel it or wait again)."""

    def __init__(self, job_id: str, status: str, timeout: float | None) -> None:
        self.job_id = job_id
        super().__init__(f"job {job_id} still {status} after {timeout} s")


class JobFailed(Exception):
    def __init__(self, job: dict[str, Any]) -> None:
        self.job = job
        result = job.get("result")
        said = f": {job['error']}" if job.get("error") else ""
        if isinstance(result, dict):
            said += f" (a partial result of {result.get('iterations')} iterations: .job['result'])"
        super().__init__(f"job {job.get('job_id')} {job.get('status')}{said}")


def _settled(job: dict[str, Any]) -> bool:
    """A cancelled job whose parts have all stopped: its result (what they searched) is in."""
    progress = job.get("progress") or {}
    return job.get("result") is not None or progress.get("parts_done") == progress.get("parts_total")


class KashgarClient:
    def __init__(
        self, base_url: str = "http://127.0.0.1:8000", timeout: float = 60.0, request_id: str | None = None
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout
        self.request_id = request_id

    def request(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.request_id:
            headers["X-Request-ID"] = self.request_id
        url = self.base_url + path
        try:
            req = urllib.request.Request(url, data=data, method=method, headers=headers)
            with urllib.request.urlopen(req, timeout=self.timeout if timeout is None else timeout) as resp:
                status, raw, ctype = resp.status, resp.read(), resp.headers.get("Content-Type", "")
        except urllib.error.HTTPError as err:
            status, raw, ctype = err.code, err.read(), err.headers.get("Content-Type", "")
        except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
            reason = getattr(exc, "reason", None) or exc
            raise KashgarUnreachable(f"{method} {url}: {reason}") from exc
        try:
            payload: Any = json.loads(raw) if "json" in ctype and raw else raw.decode("utf-8", "replace")
        except ValueError as exc:
            raise KashgarUnreachable(f"{method} {url}: the answer ({status}) is not JSON: {exc}", status) from exc
        if status >= 400:
            raise KashgarAPIError(status, payload)
        if "json" not in ctype and path != "/metrics" and not path.startswith("/docs"):
            raise KashgarUnreachable(f"{method} {url}: the answer ({status}) is {ctype or 'untyped'}, not JSON", status)
        return status, payload

    # ---------------------------------------------------------------- search
    def suggest(
        self,
        state: dict[str, Any],
        *,
        level: str | None = None,
        iterations: int | None = None,
        time_ms: int | None = None,
        seed: int = 0,
        mode: str = "auto",
        parallel: int | None = None,
        wait: bool = True,
        poll_interval: float = 0.2,
        wait_timeout: float | None = 3600.0,
    ) -> dict[str, Any]:
        """The suggestion for `state`. An async answer (202) is polled until the job ends when
        `wait`, else the 202 body (with `job_id`) is returned."""
        body: dict[str, Any] = {"state": state, "seed": seed, "mode": mode}
        for key, value in (("level", level), ("iterations", iterations), ("time_ms", time_ms), ("parallel", parallel)):
            if value is not None:
                body[key] = value
        status, answer = self.request("POST", "/suggest", body)
        if status == 202 and wait:
            job = self.wait(answer["job_id"], poll_interval, wait_timeout)
            return dict(job["result"])
        return dict(answer)

    def job(self, job_id: str) -> dict[str, Any]:
        return dict(self.request("GET", "/jobs/" + urllib.parse.quote(job_id, safe=""))[1])

    def cancel(self, job_id: str) -> dict[str, Any]:
        return dict(self.request("DELETE", "/jobs/" + urllib.parse.quote(job_id, safe=""))[1])

    def wait(self, job_id: str, poll_interval: float = 0.2, timeout: float | None = 3600.0) -> dict[str, Any]:
        """The job once it finished; JobFailed once it failed, or was cancelled and its running
        parts stopped (with what they searched in `.job["result"]`, `partial`); JobTimeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            job = self.job(job_id)
            if job["status"] == "finished":
                return job
            if job["status"] == "failed" or (job["status"] == "cancelled" and _settled(job)):
                raise JobFailed(job)
            if deadline is not None and time.monotonic() > deadline:
                raise JobTimeout(job_id, job["status"], timeout)
            time.sleep(poll_interval)

    # ----------------------------------------------------------------- rules
    def new_game(
        self, players: int = 2, seed: int | None = None, variant: Any = None, observer: int | None = None
    ) -> dict[str, Any]:
        """A new game; without `seed`, a random deal."""
        body: dict[str, Any] = {"players": players, "variant": variant}
        if seed is not None:
            body["seed"] = seed
        if observer is not None:
            body["observer"] = observer
        return dict(self.request("POST", "/games", body)[1])

    def legal(self, state: dict[str, Any], observer: int | None = None) -> dict[str, Any]:
        """The legal decisions; with `observer`, also that seat's view (`state`)."""
        body: dict[str, Any] = {"state": state}
        if observer is not None:
            body["observer"] = observer
        return dict(self.request("POST", "/legal", body)[1])

    def apply(
        self, state: dict[str, Any], decision: str | dict[str, Any], observer: int | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"state": state, "decision": decision}
        if observer is not None:
            body["observer"] = observer
        return dict(self.request("POST", "/apply", body)[1])

    # ------------------------------------------------------------------ meta
    def levels(self) -> list[dict[str, Any]]:
        return list(self.request("GET", "/levels")[1]["levels"])

    def cards(self) -> dict[str, Any]:
        return dict(self.request("GET", "/cards")[1])

    def healthz(self) -> dict[str, Any]:
        return dict(self.request("GET", "/healthz")[1])

    def readyz(self) -> dict[str, Any]:
        try:
            return dict(self.request("GET", "/readyz")[1])
        except KashgarAPIError as err:
            if err.status == 503 and isinstance(err.body, dict):
                return dict(err.body)
            raise

    def openapi(self) -> dict[str, Any]:
        return dict(self.request("GET", "/openapi.json")[1])
