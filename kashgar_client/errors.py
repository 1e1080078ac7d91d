"""What a call can raise: the server's error answers (with their status and body), no answer at
all, and a search job that failed or outlasted the wait."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .answers import Job


class KashgarError(Exception):
    """Anything this client raises."""


class KashgarAPIError(KashgarError):
    """A 4xx/5xx answer. `status`; `body`, the API's error body as sent (a dict); from it `code`
    (e.g. `invalid_state`), `message` and `pointer` (a JSON pointer to the wrong field, `""` for
    the whole body); `retry_after`, the seconds a 429 or 503 asked to wait (None if it did not);
    `headers`, the answer's headers."""

    def __init__(self, status: int, body: Any, headers: Mapping[str, str] | None = None,
                 retry_after: float | None = None) -> None:
        self.status = status
        self.body = body
        self.headers = dict(headers or {})
        self.retry_after = retry_after
        if isinstance(body, dict):
            self.code = str(body.get("error") or body.get("code") or body.get("title") or "error")
            self.message = str(body.get("message") or body.get("detail") or "")
            self.pointer = str(body.get("pointer", ""))
            self.request_id: str | None = body.get("request_id")
        else:
            self.code, self.message, self.pointer, self.request_id = "error", str(body)[:500], "", None
        at = f" (at {self.pointer})" if self.pointer else ""
        super().__init__(f"{status} {self.code}: {self.message}{at}")


class KashgarUnreachable(KashgarAPIError):
    """No answer, or none that can be read: the server is down or unreachable (connection refused,
    a bad URL), it did not answer within the timeout, or it answered something that is not the
    API's JSON. `status` is 0 (nothing was answered) or the status of the unreadable answer."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(status, {"error": "unreachable" if status == 0 else "bad_response", "message": message})
        if status == 0:
            self.args = (f"unreachable: {message}",)


class JobFailed(KashgarError):
    """A search job that failed, or was cancelled (its parts all stopped): `job`, with what its
    parts searched in `job.result` (`partial`) when they searched anything."""

    def __init__(self, job: Job) -> None:
        self.job = job
        said = f": {job.error}" if job.error else ""
        if job.result is not None:
            said += f" (a partial result of {job.result.iterations} iterations: .job.result)"
        super().__init__(f"job {job.job_id} {job.status}{said}")


class JobTimeout(KashgarError, TimeoutError):
    """The wait gave up on a job that is still running; the job goes on (`job_id`: cancel it or
    wait again)."""

    def __init__(self, job_id: str, status: str, timeout: float | None) -> None:
        self.job_id = job_id
        self.status = status
        super().__init__(f"job {job_id} still {status} after {timeout} s")
