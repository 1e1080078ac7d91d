"""`Idempotency-Key` on the POSTs that make a job: a request sent again with its key gets the first
one's job, not a second one; the key is the client's own; another body with it is a 422; a refused
request leaves it free; a bad key is a 400 naming the header."""

from __future__ import annotations

from typing import Any

import pytest

from service import create_app
from tests.builders import bot_record

JOB = {"iterations": 40_000, "mode": "async", "seed": 1}


@pytest.fixture(scope="module")
def app() -> Any:
    return create_app({"TESTING": True, "log_level": "WARNING", "async_client_seconds": 10})


@pytest.fixture(scope="module")
def state(app: Any) -> dict[str, Any]:
    return dict(app.test_client().post("/games", json={"players": 2, "seed": 3, "observer": 0}).get_json()["state"])


def post(app: Any, path: str, body: dict[str, Any], key: str | None, client: str = "10.5.0.1") -> Any:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return app.test_client().post(path, json=body, headers=headers, environ_base={"REMOTE_ADDR": client})


def test_a_request_sent_again_with_its_key_gets_the_first_job(app: Any, state: dict[str, Any]) -> None:
    first = post(app, "/suggest", {"state": state, **JOB}, "retry-1")
    again = post(app, "/suggest", {"state": state, **JOB}, "retry-1")
    assert first.status_code == again.status_code == 202, (first.get_json(), again.get_json())
    assert again.get_json()["job_id"] == first.get_json()["job_id"]
    assert again.headers["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first.headers
    assert again.headers["Location"] == first.headers["Location"]
    other = post(app, "/suggest", {"state": state, **JOB}, None)  # no key: a job of its own
    assert other.get_json()["job_id"] != first.get_json()["job_id"]
    for r in (first, other):
        app.test_client().delete(r.headers["Location"])


def test_a_key_is_the_client_s_own(app: Any, state: dict[str, Any]) -> None:
    a = post(app, "/suggest", {"state": state, **JOB}, "shared", client="10.5.0.2")
    b = post(app, "/suggest", {"state": state, **JOB}, "shared", client="10.5.0.3")
    assert a.status_code == b.status_code == 202 and a.get_json()["job_id"] != b.get_json()["job_id"]
    for r in (a, b):
        app.test_client().delete(r.headers["Location"], environ_base={"REMOTE_ADDR": "10.5.0.2"})


def test_the_same_key_with_another_body_is_refused(app: Any, state: dict[str, Any]) -> None:
    first = post(app, "/suggest", {"state": state, **JOB}, "body-1")
    assert first.status_code == 202
    other = post(app, "/suggest", {"state": state, **JOB, "seed": 2}, "body-1")
    err = other.get_json()
    assert other.status_code == 422 and err["error"] == "idempotency_key_reused", err
    assert err["pointer"] == "Idempotency-Key" and err["in"] == "header", err
    app.test_client().delete(first.headers["Location"])


def test_a_refused_request_leaves_its_key_free(app: Any, state: dict[str, Any]) -> None:
    too_much = post(app, "/suggest", {"state": state, "iterations": 400_000, "mode": "async"}, "free-1")
    assert too_much.status_code == 429, too_much.get_json()  # 20 search-seconds, over the client's 10
    fits = post(app, "/suggest", {"state": state, **JOB}, "free-1")
    assert fits.status_code == 202 and "Idempotent-Replayed" not in fits.headers, fits.get_json()
    app.test_client().delete(fits.headers["Location"])


def test_a_review_sent_again_with_its_key_is_one_job(app: Any) -> None:
    body = {"record": bot_record(7, moves=12), "level": "novice"}
    first = post(app, "/reviews", body, "review-1")
    again = post(app, "/reviews", body, "review-1")
    assert first.status_code == again.status_code == 202, first.get_json()
    assert again.get_json()["job_id"] == first.get_json()["job_id"] and again.headers["Idempotent-Replayed"] == "true"


@pytest.mark.parametrize("key", ["", " ", "x" * 256, "tab\there"])
def test_a_bad_key_is_a_400_naming_the_header(app: Any, state: dict[str, Any], key: str) -> None:
    r = post(app, "/suggest", {"state": state, **JOB}, key)
    err = r.get_json()
    assert r.status_code == 400 and err["error"] == "invalid_idempotency_key" and err["pointer"] == "Idempotency-Key"


KEYS = ["retry-1", "a b", "x" * 200, "x" * 255, "ÿé£", "{\"id\": 7}", "tab\there", "del\x7f", "nul\x00",
        "x" * 256, " padded", "padded ", "nbsp\xa0", "\xa0", "shy\xad", "", " "]


def test_the_document_states_the_keys_the_server_takes(app: Any, state: dict[str, Any]) -> None:
    """The Idempotency-Key parameter's schema in /openapi.json and the server's check are one rule
    (`service.idempotency.KEY_PATTERN`, `MAX_CHARS`): a key is valid by the document exactly when
    the server takes it."""
    import jsonschema

    doc = app.test_client().get("/openapi.json").get_json()
    params = [p for path in ("/suggest", "/reviews") for p in doc["paths"][path]["post"]["parameters"]
              if p["name"] == "Idempotency-Key"]
    assert len(params) == 2 and params[0] == params[1] and params[0]["in"] == "header"
    schema = jsonschema.Draft202012Validator(params[0]["schema"])
    taken = {key: schema.is_valid(key) for key in KEYS}
    assert taken["retry-1"] and taken["x" * 255] and not taken["tab\there"] and not taken["x" * 256]
    for key, valid in taken.items():
        r = post(app, "/suggest", {"state": state, **JOB}, key, client="10.5.0.9")
        assert r.status_code == (202 if valid else 400), (key, r.get_json())
        if valid:
            app.test_client().delete(r.headers["Location"], environ_base={"REMOTE_ADDR": "10.5.0.9"})
        else:
            assert r.get_json()["error"] == "invalid_idempotency_key"
