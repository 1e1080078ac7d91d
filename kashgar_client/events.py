"""A job's Server-Sent Events (`GET /jobs/<id>/events`) as typed values: the stream read line by
line (the `id:`, `event:` and `data:` fields of each event, comments skipped), each event's JSON
made a `JobEvent`."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .answers import Job, JobProgress

#: The events a job's stream sends: `progress` when it changes, `decision` for each decision a
#: review has reviewed, `end` with the job's view once it is over; `timeout` (the server's stream
#: lifetime passed: open it again) and `error` (the job is gone) end a stream too.
KINDS = ("progress", "decision", "end", "timeout", "error")


@dataclass(frozen=True)
class JobEvent:
    """One event of a job's stream: its `kind` (one of `KINDS`), its `id` in the stream, and what it
    carries: `progress` and `status` (a progress event), `decision` (a review's reviewed decision,
    as JSON), `job` (the end's view of the job)."""

    kind: str
    id: int
    status: str | None = None
    progress: JobProgress | None = None
    decision: dict[str, Any] | None = field(default=None, repr=False)
    job: Job | None = field(default=None, repr=False)
    data: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def from_sse(cls, kind: str, event_id: int, data: Any) -> JobEvent:
        doc = data if isinstance(data, dict) else {}
        if kind == "progress":
            return cls(kind, event_id, status=doc.get("status"), progress=JobProgress.from_json(doc), data=data)
        if kind == "decision":
            return cls(kind, event_id, decision=doc, data=data)
        if kind == "end":
            job = Job.from_json(doc)
            return cls(kind, event_id, status=job.status, progress=job.progress, job=job, data=data)
        return cls(kind, event_id, data=data)


def read_events(lines: Iterable[bytes]) -> Iterator[JobEvent]:
    """The events of an SSE stream given as its lines (bytes, as an HTTP response yields them)."""
    kind, event_id, data = "message", 0, list[str]()
    for raw in lines:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                try:
                    doc = json.loads("\n".join(data))
                except ValueError:
                    doc = "\n".join(data)
                yield JobEvent.from_sse(kind, event_id, doc)
            kind, data = "message", []
            continue
        if line.startswith(":"):
            continue  # a comment: the server's keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            kind = value
        elif name == "data":
            data.append(value)
        elif name == "id" and value.isdigit():
            event_id = int(value)
