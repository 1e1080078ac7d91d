"""schemathesis against /openapi.json (bounded examples), with every check: no server errors,
every response conforms to the documented status codes, content types and schemas, schema-invalid
requests are rejected, and schema-valid requests are accepted (`positive_data_acceptance`). The
document says what the server checks across fields where a schema can (`service/openapi_rules.py`:
observers, level budgets, variants); a state or decision can still be valid by the document and
impossible or illegal in the game, and a table's token or record one this service did not make,
which no schema says, so for the operations that take one a valid request may get a 422 only for
the state, the decision, the token or record, the one budget rule a schema cannot say (parts
times time_ms over the synchronous limit), or an Idempotency-Key sent before with another body (the
examples draw keys again). A review's record is held to more: the document says what the server
checks of it (its shape, its variant's cards, the seats asked for), so a valid review may be
refused only where the record does not replay (a move's seat, decision or events, the result) or
its initial state is impossible, as a state may be."""

from __future__ import annotations

import os
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from service import create_app

app = create_app(
    {
        "TESTING": True,
        "sync_max_iterations": 60,
        "sync_max_ms": 100,
        "max_iterations": 500,
        "max_ms": 200,
        "part_iterations": 30,
        "max_parts": 4,
        "log_level": "ERROR",
    }
)
schema = schemathesis.openapi.from_wsgi("/openapi.json", app)
# operations that take a game (a state, a table's token or record) and where it may be refused
TAKES_A_GAME = {"/legal", "/apply", "/suggest", "/table/move", "/table/hint", "/table/record", "/table/load",
                "/reviews", "/rating"}
GAME_POINTERS = ("/state", "/decision", "/token", "/record",
                 "/results")  # a rating's results: its levels, VP and winner read together
# what a valid review may be refused for, by code: the record does not replay, or its initial state
# is impossible
REVIEW_REFUSALS = {"record_does_not_replay": ("/record/moves/", "/record/result"),
                   "invalid_record": ("/record/initial_state",)}


def only_the_game_refused(case: Any, response: Any) -> None:
    """A valid request to an operation that takes a state: accepted, or 422 for the game itself."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or response.status_code != 422:
        return
    body = response.json()
    if case.path == "/reviews":
        game = body["pointer"].startswith(REVIEW_REFUSALS.get(body["error"], ()))
    else:
        game = body["pointer"].startswith(GAME_POINTERS)
    sync_parts = body["error"] == "budget_too_large_for_sync" and body["pointer"] == "/parallel"
    key_reused = body["error"] == "idempotency_key_reused"
    assert game or sync_parts or key_reused, f"a valid request refused: {body}"


@schema.parametrize()
@settings(
    max_examples=int(os.environ.get("KASHGAR_SCHEMATHESIS_EXAMPLES", "12")),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms(case: Any) -> None:
    if case.path in TAKES_A_GAME:
        response = case.call_and_validate(excluded_checks=[checks.positive_data_acceptance])
        only_the_game_refused(case, response)
    else:
        case.call_and_validate()


@pytest.mark.parametrize("path", ["/table/load", "/reviews"])
def test_a_record_the_server_refuses_for_its_shape_is_invalid_by_the_document(path: str) -> None:
    """The document's record schema is the server's (`engine_ext.record.RECORD_SCHEMA`): a record
    missing what a record must hold fails both, and a record of the right shape passes the schema."""
    import jsonschema

    doc = app.test_client().get("/openapi.json").get_json()
    op = doc["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    name = op["$ref"].rsplit("/", 1)[1]
    record_schema = {**doc["components"]["schemas"][name]["properties"]["record"], "components": doc["components"]}
    validator = jsonschema.Draft202012Validator(record_schema)
    good = {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": []}
    refused = [({}, "/record/seed"), ({k: v for k, v in good.items() if k != "moves"}, "/record/moves"),
               ({**good, "schema": "other"}, "/record/schema"), ({**good, "variant": ["nobody"]}, "/record/variant/0"),
               ({**good, "variant": {"more": []}}, "/record/variant/more")]
    if path == "/reviews":  # a review's initial state is a State by the document (the table's: any object)
        refused.append(({**good, "seed": None, "initial_state": {"players": 9}}, "/record/initial_state"))
    for bad, where in refused:
        assert not validator.is_valid(bad), bad
        r = app.test_client().post(path, json={"record": bad})
        assert r.status_code == 422 and r.get_json()["pointer"].startswith(where), r.get_json()
    assert validator.is_valid(good) and validator.is_valid({**good, "variant": ["bettler"]})


def test_a_review_s_seats_are_as_the_document_says() -> None:
    """The seats of a review: below the record's players by the document as by the server, and a
    whole number written with a fraction is the integer, by both."""
    import jsonschema

    doc = app.test_client().get("/openapi.json").get_json()
    validator = jsonschema.Draft202012Validator({"$ref": "#/components/schemas/ReviewRequest",
                                                 "components": doc["components"]})
    record = {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": []}
    for seats, valid in (([1], True), ([0.0, 1.0], True), ([2], False), ([0, 3], False)):
        body = {"record": record, "level": "novice", "seats": seats}
        assert validator.is_valid(body) is valid, body
        r = app.test_client().post("/reviews", json=body)
        assert r.status_code == (202 if valid else 422), r.get_json()
    assert validator.is_valid({"record": {**record, "players": 3}, "level": "novice", "seats": [2]})
