"""`Idempotency-Key` on the POSTs that make a job (`/suggest` answered as a job, `/reviews`): a
client that sends a request again with the same key (a retry after a lost answer) gets the job the
first one made, not a second job (as the IETF draft "The Idempotency-Key HTTP Header Field" and
Stripe's API have it).

A key is the client's own, stored under its id (`service.clients`: its API key's client, of the
whole key, or without keys its address): two clients may use the same one, and neither gets the
other's job. It is kept as long as a job's result (`KASHGAR_RESULT_TTL`, at least). The same key
with another body is a 422 `idempotency_key_reused`; while the first request with a key is still
being answered, another is a 409 `idempotency_key_in_use` (retry). A request that was refused
(4xx, 5xx) leaves its key free."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any

from flask import Response, g, jsonify, request, url_for

from .clients import Client
from .errors import APIError
from .jobs import JobManager
from .jobs.model import Record

HEADER = "Idempotency-Key"
MAX_CHARS = 255
#: The keys `key_of` takes, the one rule the check and the OpenAPI document (`service.api.common`)
#: share: 1 to MAX_CHARS printable characters of the latin-1 a header is read in (no tab, DEL or
#: other control character, no no-break space or soft hyphen), spaces inside but not first or last
#: (HTTP strips them around a header's value: they are not the key's).
_KEY_CHAR = r"\x21-\x7e\xa1-\xac\xae-\xff"
KEY_PATTERN = rf"^[{_KEY_CHAR}](?:[ {_KEY_CHAR}]*[{_KEY_CHAR}])?$"
_KEY = re.compile(KEY_PATTERN)
_PENDING = "pending"


def key_of() -> str | None:
    """The request's key (None: none given); 400 naming the header for one that is not a key by
    KEY_PATTERN or is longer than MAX_CHARS."""
    key = request.headers.get(HEADER)  # as read: HTTP strips the spaces around a value
    if key is None:
        return None
    if len(key) > MAX_CHARS or not _KEY.fullmatch(key):
        raise APIError(400, "invalid_idempotency_key", f"{HEADER} must be 1 to {MAX_CHARS} printable characters "
                       "(no control character; spaces only between others)", HEADER, location="header")
    return key


def submit_once(manager: JobManager, client: Client, key: str | None,
                submit: Callable[[], Record]) -> tuple[Record, bool]:
    """The job `submit()` makes, or, for a key seen before with the same body, the earlier job:
    (the job, whether it is an earlier request's). The key is held while `submit` runs and left
    free if it raises."""
    if key is None:
        return submit(), False
    name = f"idem:{client.id}:{key}"
    body = hashlib.sha256(g.get("body_bytes", b"")).hexdigest()
    ttl = max(manager.settings.result_ttl, manager.settings.job_ttl)
    held = manager.store.claim_key(name, f"{_PENDING}|{body}", ttl)
    if held is not None:
        what, _, first_body = held.partition("|")
        if first_body != body:
            raise APIError(422, "idempotency_key_reused", f"this {HEADER} was sent with another request body; "
                           "use a new key for a new request", HEADER, location="header")
        if what == _PENDING:
            raise APIError(409, "idempotency_key_in_use", f"a request with this {HEADER} is still being answered; "
                           "retry in a moment", HEADER, location="header", headers={"Retry-After": "1"})
        rec = manager.get(what)
        if rec is not None:
            return rec, True
        manager.store.set_key(name, f"{_PENDING}|{body}", ttl)  # its job expired: a new one
    try:
        rec = submit()
    except BaseException:
        manager.store.forget_key(name)
        raise
    manager.store.set_key(name, f"{rec['id']}|{body}", ttl)
    return rec, False


def accepted(rec: Record, backend: str, request_id: Any,
             replayed: bool = False) -> tuple[Response, int, dict[str, str]]:
    """The 202 of a job (`Location`: its status URL); for a request sent again with its key, the
    first one's job with its status now, and `Idempotent-Replayed: true`."""
    from .jobs.model import job_status

    url = url_for("jobs.get_job", job_id=rec["id"])
    body = {"job_id": rec["id"], "status": job_status(rec).value, "status_url": url, "parts": len(rec["parts"]),
            "backend": backend, "request_id": request_id, "mode": "async"}
    headers = {"Location": url}
    if replayed:
        headers["Idempotent-Replayed"] = "true"
    return jsonify(body), 202, headers
