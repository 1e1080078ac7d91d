"""Every endpoint through the Flask test client, with the real engine and bots (embedded queue)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http import HTTPStatus
from typing import Any

import jsonschema
import pytest
from flask import Flask

import engine_ext
from service import create_app
from tests.service_helpers import TEST_CONFIG, Client, FlaskClient, wait_job

VOLATILE = {"elapsed_ms", "request_id", "mode"}




@pytest.fixture(scope="module")
def app() -> Iterator[Flask]:
    yield create_app(TEST_CONFIG)


@pytest.fixture()
def client(app: Flask) -> Client:
    return Client(app)


@pytest.fixture(scope="module")
def game(app: Flask) -> dict[str, Any]:
    r = Client(app).post("/games", json={"players": 2, "seed": 7})
    assert r.status_code == 200, r.json
    return r.json  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def view(app: Flask) -> dict[str, Any]:
    r = Client(app).post("/games", json={"players": 2, "seed": 7, "observer": 0})
    assert r.status_code == 200, r.json
    return r.json["state"]  # type: ignore[no-any-return]


def stable(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in VOLATILE}


def assert_error(r: Any, status: int, pointer: str | None = None, prefix: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, (r.status_code, r.get_data(as_text=True)[:500])
    assert r.is_json, r.get_data(as_text=True)[:200]
    body = r.json
    assert {"error", "message", "pointer", "errors", "request_id"} <= set(body), body
    if pointer is not None:
        assert body["pointer"] == pointer, body
    if prefix is not None:
        assert body["pointer"].startswith(prefix), body
    return body  # type: ignore[no-any-return]


# ----------------------------------------------------------------------------- meta


def test_healthz_and_readyz(client: FlaskClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200 and r.json["status"] == "ok" and r.json["backend"] == "embedded"
    r = client.get("/readyz")
    assert r.status_code == 200 and r.json["ready"] is True, r.json


def test_levels_and_cards(client: FlaskClient) -> None:
    r = client.get("/levels")
    assert r.status_code == 200
    names = [lv["name"] for lv in r.json["levels"]]
    assert names and r.json["default"] in names
    r = client.get("/cards")
    assert r.status_code == 200 and r.json["cards"] and r.json["contracts"]
    assert r.json["count"] == len(r.json["cards"]) + len(r.json["contracts"])


def test_request_id_is_echoed(client: FlaskClient, view: dict[str, Any]) -> None:
    r = client.post("/legal", json={"state": view}, headers={"X-Request-ID": "abc-123"})
    assert r.headers["X-Request-ID"] == "abc-123" and r.json["request_id"] == "abc-123"
    r = client.post("/legal", json={"state": view}, headers={"X-Request-ID": "bad id with spaces"})
    assert r.headers["X-Request-ID"] != "bad id with spaces" and len(r.headers["X-Request-ID"]) == 32


def test_openapi_document(client: FlaskClient) -> None:
    spec = client.get("/openapi.json").json
    assert spec["openapi"].startswith("3.1")
    for path in (
        "/suggest",
        "/jobs/{job_id}",
        "/games",
        "/legal",
        "/apply",
        "/levels",
        "/cards",
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
    ):
        assert path in spec["paths"], path
    assert set(spec["paths"]["/jobs/{job_id}"]) == {"get", "delete"}
    schema = spec["components"]["schemas"]["SuggestRequest"]
    assert schema["properties"]["state"] == {"$ref": "#/components/schemas/State"}
    assert schema["additionalProperties"] is False
    assert {"400", "408", "413", "422"} <= set(spec["paths"]["/suggest"]["post"]["responses"])
    # the engine's published state schema, whole (it was a bare object: engine_ext exported none)
    state = spec["components"]["schemas"]["State"]
    assert {"seats", "display", "decks", "players"} <= set(state["properties"]) and "$ref" not in json.dumps(state)
    # the limits this server enforces (TEST_CONFIG), not the models' outer bounds
    props = spec["components"]["schemas"]["SuggestRequest"]["properties"]
    maxima = {k: [b["maximum"] for b in props[k]["anyOf"] if "maximum" in b]
              for k in ("iterations", "time_ms", "parallel")}
    assert maxima == {"iterations": [TEST_CONFIG["max_iterations"]], "time_ms": [600_000], "parallel": [16]}
    page = client.get("/docs/plain")
    assert page.status_code == 200 and b"/suggest" in page.data
    viewer = client.get("/docs/")  # Swagger UI, from its package, on this document
    assert viewer.status_code == 200 and b"/docs/swagger-ui-bundle.js" in viewer.data
    assert b"/openapi.json" in viewer.data
    assert client.get("/docs/swagger-ui-bundle.js").status_code == 200


def test_the_openapi_document_says_what_the_server_checks_across_fields(
        client: FlaskClient, game: dict[str, Any], view: dict[str, Any]) -> None:
    """Requests the document called valid were refused: an observer beyond the players, a view
    turned into another seat's, a level whose budget this server does not serve."""
    spec = client.get("/openapi.json").json

    def valid(model: str, body: dict[str, Any]) -> bool:
        schema = {"$ref": f"#/components/schemas/{model}", "components": spec["components"]}
        return jsonschema.Draft202012Validator(schema).is_valid(body)

    for model, path, body in [
        ("NewGameRequest", "/games", {"players": 2, "observer": 2}),
        ("NewGameRequest", "/games", {"observer": 3}),
        ("NewGameRequest", "/games", {"variant": ["hirte", "hirte", "hirte"]}),
        ("LegalRequest", "/legal", {"state": game["state"], "observer": 2}),
        ("LegalRequest", "/legal", {"state": view, "observer": 1}),
        ("SuggestRequest", "/suggest", {"state": view, "level": "master", "mode": "sync"}),  # over the sync limit
    ]:
        assert not valid(model, body), body
        assert client.post(path, json=body).status_code == 422, body
    for model, path, body in [
        ("NewGameRequest", "/games", {"players": 3, "observer": 2}),
        ("NewGameRequest", "/games", {"players": 3.0, "observer": 2.0}),  # JSON Schema's integers
        ("NewGameRequest", "/games", {"variant": ["hirte", "hirte"]}),
        ("LegalRequest", "/legal", {"state": game["state"], "observer": 1}),
        ("LegalRequest", "/legal", {"state": view, "observer": 0}),
        ("SuggestRequest", "/suggest", {"state": view, "level": "master", "iterations": 20, "mode": "sync"}),
    ]:
        assert valid(model, body), body
        assert client.post(path, json=body).status_code == 200, body


def test_metrics(client: FlaskClient, view: dict[str, Any]) -> None:
    client.post("/suggest", json={"state": view, "iterations": 20, "seed": 3})
    text = client.get("/metrics").get_data(as_text=True)
    for name in (
        "kashgar_http_request_duration_seconds_bucket",
        "kashgar_searches_total",
        "kashgar_search_iterations_total",
        "kashgar_queue_depth",
        "kashgar_job_outcomes_total",
        "kashgar_queue_up",
    ):
        assert name in text, name


def test_metrics_labels_come_from_fixed_sets_and_every_error_is_counted(app: Flask) -> None:
    """Any client could add series: gunicorn passes any method of 3-20 letters, and the method was
    a label (1,000 made-up methods: a 2 MB /metrics). Errors were counted only for a 503."""
    c = app.test_client()
    for method in ("FROBNICATE", "XYZZYPLUGH"):
        assert c.open("/healthz", method=method).status_code == 405
    assert c.post("/games", json={"players": 9}).status_code == 422
    assert c.get("/jobs/" + "f" * 32).status_code == 404
    text = c.get("/metrics").get_data(as_text=True)
    assert "FROBNICATE" not in text and "XYZZYPLUGH" not in text
    assert 'method="other",route="unmatched",status="405"' in text

    def errors(status: str, code: str) -> float:
        prefix = f'kashgar_request_errors_total{{error="{code}",status="{status}"}} '
        line = next((x for x in text.splitlines() if x.startswith(prefix)), prefix + "0")
        return float(line.split()[-1])

    assert errors("422", "validation_error") >= 1 and errors("404", "not_found") >= 1
    assert errors("405", "method_not_allowed") >= 2


# ---------------------------------------------------------------------------- rules


def test_new_game_full_and_view(client: FlaskClient, game: dict[str, Any], view: dict[str, Any]) -> None:
    assert game["state"]["schema"].startswith("kashgar/state@")
    assert game["legal"] and game["current_player"] == game["turn_player"]
    assert view["observer"] == 0


def test_new_game_errors(client: FlaskClient) -> None:
    assert_error(client.post("/games", json={"players": 5}), 422, "/players")
    assert_error(client.post("/games", json={"players": "2"}), 422, "/players")
    assert_error(client.post("/games", json={"players": 2, "observer": 3}), 422, "/observer")
    assert_error(
        client.post("/games", json={"players": 2, "variant": {"additional": ["no_such_card"]}}), 422, prefix="/variant"
    )
    assert_error(client.post("/games", json={"players": 2, "colour": "red"}), 422, "/colour")
    # a key with a slash is escaped in the pointer (RFC 6901), not read as two levels
    assert_error(client.post("/games", json={"players": 2, "variant": {"a/b": 1}}), 422, "/variant/a~1b")


def test_legal(client: FlaskClient, view: dict[str, Any]) -> None:
    r = client.post("/legal", json={"state": view})
    assert r.status_code == 200 and r.json["count"] == len(r.json["legal"]) > 0
    first = r.json["legal"][0]
    assert isinstance(first["text"], str) and isinstance(first["decision"], dict)


def test_apply_text_and_json(client: FlaskClient, game: dict[str, Any]) -> None:
    d = game["legal"][0]
    r1 = client.post("/apply", json={"state": game["state"], "decision": d["text"]})
    assert r1.status_code == 200, r1.json
    r2 = client.post("/apply", json={"state": game["state"], "decision": d["decision"]})
    assert r2.status_code == 200 and r2.json["state"] == r1.json["state"]
    assert r1.json["decision"]["text"] == d["text"] and isinstance(r1.json["events"], list)
    assert r1.json["state"] != game["state"]


def test_apply_on_a_view_marks_a_draw_from_its_made_up_deck_order(client: FlaskClient) -> None:
    """A view does not know the decks' order: a card it draws is one possible draw (`sampled`),
    which a client must not take for the real one; on the full state the draw is real."""
    full = client.post("/games", json={"players": 2, "seed": 3}).json["state"]
    for _ in range(60):
        legal = client.post("/legal", json={"state": full}).json["legal"]
        draws = [d for d in legal if d["text"].startswith("c") and d["text"].endswith(":a")]
        real = client.post("/apply", json={"state": full, "decision": (draws or legal)[0]["text"]}).json
        if any(e["event"] == "card" and e["from"] == "standard deck" for e in real["events"]):
            break
        full = real["state"]
    else:
        raise AssertionError("no draw from the standard deck in 60 decisions")
    assert real["sampled"] is False and not any(e.get("sampled") for e in real["events"])
    seat = engine_ext.from_json(full).current_player
    view = engine_ext.from_json(full).to_json(observer=seat)
    out = client.post("/apply", json={"state": view, "decision": real["decision"]["text"]}).json
    drawn = [e for e in out["events"] if e["event"] == "card" and e["from"] == "standard deck"]
    assert drawn and all(e["sampled"] is True for e in drawn) and out["sampled"] is True


def test_apply_on_a_view_marks_a_made_up_refill_of_the_display(client: FlaskClient) -> None:
    """A fulfil refills the display from the contract deck, whose order a view makes up: no card
    event shows it, but the answer is `sampled` (it was not)."""
    import random

    g = engine_ext.new_game(players=2, seed=0)
    rnd = random.Random(0)
    while not g.is_terminal:
        d = rnd.choice(g.legal())
        view = g.to_json(observer=g.current_player)
        full = g.to_json()
        g.apply(d)
        if str(d).startswith("fulfil") and g.to_json()["display"] != full["display"] and not engine_ext.from_json(
                view).hidden_from(view["observer"]):
            out = client.post("/apply", json={"state": view, "decision": str(d)}).json
            assert out["sampled"] is True, out
            real = client.post("/apply", json={"state": full, "decision": str(d)}).json
            assert real["sampled"] is False and real["state"]["display"] == g.to_json()["display"]
            return
    raise AssertionError("no fulfil that refills the display in game 0")


def test_apply_on_a_full_state_without_deck_order_marks_the_draw_made_up(client: FlaskClient) -> None:
    """A full state (no `observer`) that leaves out the decks gets them made up when it loads: what
    it draws is one possible draw, not the real game's (`sampled` was false)."""
    full = client.post("/games", json={"players": 2, "seed": 5}).json["state"]
    draw = next(d["text"] for d in client.post("/legal", json={"state": full}).json["legal"] if d["text"] == "c0:a")
    real = client.post("/apply", json={"state": full, "decision": draw}).json
    assert any(e["event"] == "card" and e["from"] == "standard deck" for e in real["events"])
    assert real["sampled"] is False
    no_decks = {k: v for k, v in full.items() if k != "decks"}
    out = client.post("/apply", json={"state": no_decks, "decision": draw}).json
    assert out["sampled"] is True
    # the seed of its reshuffles only: a draw from the deck it gives is real
    no_rng = {k: v for k, v in full.items() if k != "rng"}
    out = client.post("/apply", json={"state": no_rng, "decision": draw}).json
    assert out["sampled"] is False and out["events"] == real["events"]


def test_a_view_becomes_its_own_seat_s_view_only(client: FlaskClient) -> None:
    """Seat 0's view cannot answer with seat 1's: seat 1 knows what seat 0 does not (a card it put
    under a deck), and it would be lost without a word."""
    view = client.post("/games", json={"players": 2, "seed": 5, "observer": 0}).json["state"]
    legal = client.post("/legal", json={"state": view}).json["legal"]
    r = client.post("/apply", json={"state": view, "decision": legal[0]["text"], "observer": 1})
    assert_error(r, 422, "/observer")
    assert r.json["error"] == "invalid_observer"
    ok = client.post("/apply", json={"state": view, "decision": legal[0]["text"], "observer": 0})
    assert ok.status_code == 200 and ok.json["state"]["observer"] == 0


def test_legal_makes_a_seat_s_view_of_a_full_state(client: FlaskClient) -> None:
    """A client holding the full state had no call that gives a seat its view."""
    full = client.post("/games", json={"players": 3, "seed": 8}).json["state"]
    for seat in range(3):
        out = client.post("/legal", json={"state": full, "observer": seat}).json
        assert out["state"] == engine_ext.from_json(full).to_json(observer=seat)
        assert out["legal"] == client.post("/legal", json={"state": out["state"]}).json["legal"]
    assert "state" not in client.post("/legal", json={"state": full}).json
    view = client.post("/legal", json={"state": full, "observer": 1}).json["state"]
    assert client.post("/legal", json={"state": view, "observer": 1}).json["state"] == view
    r = client.post("/legal", json={"state": view, "observer": 2})
    assert assert_error(r, 422, "/observer")["error"] == "invalid_observer"
    assert_error(client.post("/legal", json={"state": full, "observer": 3}), 422, "/observer")


@pytest.mark.parametrize(("variant", "added"), [("base", []), ("off", []), (None, []), (["bettler", "hirte"],
                                                  ["bettler", "hirte"]), ({"additional": ["bettler"]}, ["bettler"])])
def test_a_new_game_takes_every_form_of_variant_a_state_takes(client: FlaskClient, variant: Any,
                                                               added: list[str]) -> None:
    """/games refused "base", "off" and a list, which a state's `variant` takes."""
    r = client.post("/games", json={"players": 2, "seed": 4, "variant": variant})
    assert r.status_code == 200, r.json
    assert r.json["state"]["variant"] == {"additional": added}


@pytest.mark.parametrize(("variant", "pointer"), [(["nope"], "/variant/0"), ({"additional": ["hirte", "x"]},
                                                  "/variant/additional/1"), (["hirte"] * 3, "/variant/2")])
def test_a_new_game_s_wrong_variant_is_named(client: FlaskClient, variant: Any, pointer: str) -> None:
    body = assert_error(client.post("/games", json={"players": 2, "variant": variant}), 422, pointer)
    assert body["error"] == "invalid_variant"


def test_apply_errors(client: FlaskClient, game: dict[str, Any]) -> None:
    legal_texts = {d["text"] for d in game["legal"]}
    illegal = next(t for t in ("c3:a", "c2:b", "skip", "pay 9", "c0:part", "c1:part") if t not in legal_texts)
    assert_error(client.post("/apply", json={"state": game["state"], "decision": illegal}), 422, "/decision")
    assert_error(
        client.post("/apply", json={"state": game["state"], "decision": "dance a jig"}), 422, prefix="/decision"
    )
    assert_error(client.post("/apply", json={"state": game["state"], "decision": 5}), 422, prefix="/decision")
    assert_error(client.post("/apply", json={"state": game["state"]}), 422, "/decision")


@pytest.mark.parametrize(("decision", "pointer", "said"), [
    ([1], "/decision", "a decision is its text (e.g. `c0:a`) or its JSON object"),
    (None, "/decision", "a decision is its text (e.g. `c0:a`) or its JSON object"),
    ({"foo": 1}, "/decision/kind", "not a decision: a decision object names its kind (`kind`: one of choose, "),
    ("C0:A", "/decision", "not a decision: 'C0:A'"),
])
def test_a_malformed_decision_is_told_what_a_decision_is(client: FlaskClient, game: dict[str, Any], decision: Any,
                                                         pointer: str, said: str) -> None:
    """A list or null was told only "Input should be a valid string" (the field takes an object too),
    an object without `kind` "unknown decision kind None", and a bad text "not a decision: not a
    decision: ..."."""
    body = assert_error(client.post("/apply", json={"state": game["state"], "decision": decision}), 422, pointer)
    assert body["message"].startswith(said), body


def test_an_item_of_legal_sent_whole_as_the_decision_is_told_which_part_to_send(
        client: FlaskClient, game: dict[str, Any]) -> None:
    body = assert_error(client.post("/apply", json={"state": game["state"], "decision": game["legal"][0]}), 422,
                        "/decision/kind")
    assert "give its `decision` (or its `text`), not the whole item" in body["message"]


def test_bad_states(client: FlaskClient, game: dict[str, Any]) -> None:
    bad_schema = dict(game["state"], schema="kashgar/state@99")
    assert_error(client.post("/legal", json={"state": bad_schema}), 422, prefix="/state")
    bad_players = dict(game["state"], players=9)
    assert_error(client.post("/legal", json={"state": bad_players}), 422, prefix="/state")
    seats = json.loads(json.dumps(game["state"]["seats"]))
    seats[0]["caravans"][0][0] = "no_such_card"
    assert_error(client.post("/legal", json={"state": dict(game["state"], seats=seats)}), 422, prefix="/state")
    seats = json.loads(json.dumps(game["state"]["seats"]))
    seats[0]["resources"]["ginger"] = -4
    assert_error(client.post("/legal", json={"state": dict(game["state"], seats=seats)}), 422, prefix="/state")
    assert_error(client.post("/legal", json={"state": []}), 422, "/state")
    assert_error(client.post("/legal", json={"state": "x"}), 422, "/state")


@pytest.mark.parametrize("seen_by", ["full", "view"])
def test_a_state_with_a_caravan_emptied_is_refused_everywhere(client: FlaskClient, game: dict[str, Any],
                                                              view: dict[str, Any], seen_by: str) -> None:
    """Seat 0's first caravan emptied: its Patriarch and Start card are nowhere (it was 200)."""
    state = json.loads(json.dumps(game["state"] if seen_by == "full" else view))
    state["seats"][0]["caravans"][0] = []
    decision = game["legal"][0]["text"]
    for path, body in (("/suggest", {"state": state, "iterations": 20, "mode": "sync"}), ("/legal", {"state": state}),
                       ("/apply", {"state": state, "decision": decision})):
        err = assert_error(client.post(path, json=body), 422, "/state/seats/0/caravans/0")
        assert "Start card is missing" in err["message"], (path, err)


# ------------------------------------------------------------------------- transport errors


def test_malformed_bodies(client: FlaskClient) -> None:
    assert_error(client.post("/suggest", data="{not json", content_type="application/json"), 400, "")
    assert_error(client.post("/suggest", data="", content_type="application/json"), 400, "")
    assert_error(client.post("/suggest", data=b"\xff\xfe", content_type="application/json"), 400, "")
    assert_error(client.post("/suggest", data='{"state": NaN}', content_type="application/json"), 400, "")
    assert_error(client.post("/suggest", data="[" * 100_000, content_type="application/json"), 400, "")
    assert_error(client.post("/suggest", json=[1, 2]), 422, "")
    assert_error(client.post("/suggest", json={}), 422, "/state")


def test_oversized_body(client: FlaskClient) -> None:
    r = client.post("/suggest", data=b'{"state": "' + b"x" * 300_000 + b'"}', content_type="application/json")
    assert_error(r, 413)


def test_unknown_route_and_method(client: FlaskClient) -> None:
    """Both are the request's path, not its body (`in`)."""
    assert assert_error(client.get("/nope"), 404)["in"] == "path"
    r = client.put("/suggest", json={})
    assert assert_error(r, 405)["in"] == "path"
    assert "POST" in r.headers["Allow"]


# --------------------------------------------------------------------------- suggest


def test_suggest_sync(client: FlaskClient, view: dict[str, Any]) -> None:
    r = client.post("/suggest", json={"state": view, "iterations": 60, "seed": 11, "mode": "sync"})
    assert r.status_code == 200, r.json
    a = r.json
    legal = {d["text"] for d in client.post("/legal", json={"state": view}).json["legal"]}
    assert a["decision_text"] in legal
    assert a["iterations"] == 60 and a["seed"] == 11 and isinstance(a["compiled"], bool)
    assert a["alternatives"] and all(alt["decision_text"] in legal for alt in a["alternatives"])
    assert isinstance(a["line"], list) and a["request_id"] and a["mode"] == "sync"
    again = client.post("/suggest", json={"state": view, "iterations": 60, "seed": 11, "mode": "sync"}).json
    assert stable(again) == stable(a)


def test_sync_suggest_parses_the_state_once_for_all_its_parts(
    client: FlaskClient, view: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checks, three parts and their merge all use the one loaded game (a view costs about 0.6 ms to
    load; before, a sync search loaded it once for the checks, once a part and once for the merge)."""
    import engine_ext

    calls = []
    real = engine_ext.from_json

    def counting(doc: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(doc, *args, **kwargs)

    body = {"state": view, "iterations": 90, "parallel": 3, "seed": 4, "mode": "sync"}
    before = client.post("/suggest", json=body).json
    monkeypatch.setattr(engine_ext, "from_json", counting)
    r = client.post("/suggest", json=body)
    assert r.status_code == 200, r.json
    assert len(calls) == 1
    assert r.json["parts"] == 3 and r.json["iterations"] == 90
    assert stable(r.json) == stable(before)


def test_suggest_by_level(client: FlaskClient, view: dict[str, Any]) -> None:
    levels = client.get("/levels").json["levels"]
    weakest = levels[0]["name"]
    r = client.post("/suggest", json={"state": view, "level": weakest, "iterations": 30, "seed": 1})
    assert r.status_code == 200, r.json
    assert r.json["level"] == weakest


def test_suggest_mid_turn(client: FlaskClient, game: dict[str, Any]) -> None:
    """Walk the game until a decision inside a turn (pending step) and ask there."""
    state = game["state"]
    for _ in range(40):
        legal = client.post("/legal", json={"state": state}).json["legal"]
        if state.get("pending") is not None:
            break
        pick = next((d for d in legal if d["text"].endswith(":a")), legal[0])
        state = client.post("/apply", json={"state": state, "decision": pick["text"]}).json["state"]
    assert state.get("pending") is not None, "no mid-turn state reached"
    legal_texts = {d["text"] for d in client.post("/legal", json={"state": state}).json["legal"]}
    r = client.post("/suggest", json={"state": state, "iterations": 40, "seed": 2})
    assert r.status_code == 200, r.json
    assert r.json["decision_text"] in legal_texts


def test_suggest_validation(client: FlaskClient, view: dict[str, Any]) -> None:
    assert_error(client.post("/suggest", json={"state": view, "iterations": "5"}), 422, "/iterations")
    assert_error(client.post("/suggest", json={"state": view, "iterations": 0}), 422, "/iterations")
    assert_error(client.post("/suggest", json={"state": view, "iterations": 2_000_000}), 422, "/iterations")
    assert_error(client.post("/suggest", json={"state": view, "time_ms": -1}), 422, "/time_ms")
    assert_error(client.post("/suggest", json={"state": view, "seed": -1}), 422, "/seed")
    assert_error(client.post("/suggest", json={"state": view, "mode": "later"}), 422, "/mode")
    assert_error(client.post("/suggest", json={"state": view, "level": "grandmaster-9000"}), 422, "/level")
    assert_error(client.post("/suggest", json={"state": view, "level": 3}), 422, "/level")
    assert_error(client.post("/suggest", json={"state": view, "depth": 3}), 422, "/depth")
    assert_error(client.post("/suggest", json={"state": view, "iterations": 5000, "mode": "sync"}), 422, "/iterations")
    assert_error(client.post("/suggest", json={"state": view, "time_ms": 5000, "mode": "sync"}), 422, "/time_ms")
    assert_error(client.post("/suggest", json={"state": view, "parallel": 65}), 422, "/parallel")


@pytest.mark.parametrize(("field", "value"), [("iterations", 10**8 + 1), ("time_ms", 10**9), ("parallel", 65),
                                              ("iterations", 10**7 + 1), ("time_ms", 600_001), ("parallel", 17)])
def test_a_budget_too_large_is_told_this_server_s_limit(client: FlaskClient, view: dict[str, Any], field: str,
                                                        value: int) -> None:
    """Above the request model's outer bound the 422 named that bound (100,000,000 iterations,
    86,400,000 ms, 64 parts), not the server's limit that /openapi.json states: a client that
    retried with it got a second 422."""
    limit = client.get("/openapi.json").json["components"]["schemas"]["SuggestRequest"]["properties"][field]
    maximum = next(b["maximum"] for b in limit["anyOf"] if "maximum" in b)
    body = assert_error(client.post("/suggest", json={"state": view, field: value}), 422, f"/{field}")
    assert body["error"] == "budget_out_of_range" and body["message"] == f"{field} must be at most {maximum}"


def test_a_server_configured_above_the_model_s_bound_names_the_bound() -> None:
    from service import create_app

    c = create_app({"TESTING": True, "log_level": "ERROR", "max_iterations": 200_000_000}).test_client()
    view = c.post("/games", json={"players": 2, "seed": 1, "observer": 0}).json["state"]
    body = assert_error(c.post("/suggest", json={"state": view, "iterations": 100_000_001}), 422, "/iterations")
    assert body["message"] == "iterations must be at most 100000000"


def test_sync_parts_run_one_after_another_so_their_time_counts_against_the_sync_limit(
    client: FlaskClient, view: dict[str, Any]
) -> None:
    """A synchronous search runs its parts in sequence, each for the whole time_ms: 3 parts of
    200 ms are 600 ms of wall time, over the 500 ms synchronous limit (it took 3 x time_ms)."""
    body = {"state": view, "time_ms": 200, "parallel": 3, "seed": 1}
    err = assert_error(client.post("/suggest", json=dict(body, mode="sync")), 422, "/parallel")
    assert "600 ms" in err["message"]
    r = client.post("/suggest", json=body)  # auto: too long for sync, so a job
    assert r.status_code == 202, r.json
    assert wait_job(client, r.json["status_url"])["status"] == "finished"
    r = client.post("/suggest", json=dict(body, time_ms=100, mode="sync"))  # 300 ms in all: fits
    assert r.status_code == 200 and r.json["parts"] == 3, r.json


def test_async_equals_sync(client: FlaskClient, view: dict[str, Any]) -> None:
    body = {"state": view, "iterations": 300, "seed": 5, "parallel": 3}
    sync = client.post("/suggest", json=dict(body, mode="sync"))
    assert sync.status_code == 200, sync.json
    assert sync.json["parts"] == 3 and sync.json["iterations"] == 300
    r = client.post("/suggest", json=dict(body, mode="async"))
    assert r.status_code == 202, r.json
    assert r.headers["Location"] == r.json["status_url"] and r.json["parts"] == 3
    job = wait_job(client, r.json["status_url"])
    assert job["status"] == "finished", job
    assert job["progress"]["iterations"] == 300 and job["progress"]["parts_done"] == 3
    assert stable(job["result"]) == stable(sync.json)


def test_auto_mode_goes_async_above_the_sync_limit(client: FlaskClient, view: dict[str, Any]) -> None:
    r = client.post("/suggest", json={"state": view, "iterations": 500, "seed": 1})
    assert r.status_code == 202, r.json
    job = wait_job(client, r.json["status_url"])
    assert job["status"] == "finished" and job["result"]["iterations"] == 500


def test_cancel(client: FlaskClient, view: dict[str, Any]) -> None:
    r = client.post("/suggest", json={"state": view, "iterations": 900_000, "seed": 1, "parallel": 1})
    assert r.status_code == 202
    url = r.json["status_url"]
    deadline = time.monotonic() + 30
    while client.get(url).json["status"] == "queued" and time.monotonic() < deadline:
        time.sleep(0.02)
    d = client.delete(url)
    assert d.status_code == 200 and d.json["status"] == "cancelled", d.json
    job = wait_job(client, url)
    assert job["status"] == "cancelled"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # the running part stops at its next check
        job = client.get(url).json
        if job["parts"][0]["status"] == "cancelled":
            break
        time.sleep(0.05)
    assert job["parts"][0]["status"] == "cancelled", job
    assert job["progress"]["iterations"] < 900_000
    assert_error(client.delete(url), 409, "/job_id")


def test_unknown_jobs(client: FlaskClient) -> None:
    assert_error(client.get("/jobs/nope"), 404, "/job_id")
    assert_error(client.get("/jobs/" + "0" * 32), 404, "/job_id")
    assert_error(client.delete("/jobs/" + "0" * 32), 404, "/job_id")


@pytest.mark.parametrize("ctype", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", ""])
def test_a_body_not_sent_as_json_is_415(client: FlaskClient, view: dict[str, Any], ctype: str) -> None:
    """A browser posts text/plain or a form to any site without asking first (a CORS simple
    request): a body of another type than application/json is refused, whatever it holds."""
    body = json.dumps({"state": view, "iterations": 10, "seed": 1})
    for path in ("/suggest", "/legal", "/games"):
        err = assert_error(client.post(path, data=body, content_type=ctype or None), 415, "/Content-Type")
        assert err["error"] == "unsupported_media_type" and err["in"] == "header"
    ok = client.post("/legal", data=json.dumps({"state": view}), content_type="application/json; charset=utf-8")
    assert ok.status_code == 200, ok.json


@pytest.mark.parametrize(("body", "pointer"), [
    ('{"mode": "async", "iterations": 5, "mode": "sync"}', "/mode"),
    ('{"players": 2, "seed": 1, "seed": 2}', "/seed"),
    ('{"players": 2, "variant": {"a": 1, "a": 2}}', "/variant/a"),
    ('{"players": 2, "variant": [{}, {"x/y": 1, "x/y": 2}]}', "/variant/1/x~1y"),
])
def test_a_key_twice_in_one_object_is_400_naming_the_second(client: FlaskClient, body: str, pointer: str) -> None:
    """Readers disagree on which of two equal keys wins (a proxy may read the first, we the last):
    such a body is refused, the pointer naming the repeated key."""
    err = assert_error(client.post("/games", data=body, content_type="application/json"), 400, pointer)
    assert err["error"] == "duplicate_key"


def test_the_openapi_document_names_the_levels_this_server_answers(client: FlaskClient) -> None:
    """A level that matches the name pattern but is no level was valid by the document and a 422
    from the server: the document's `level` is the enum of /levels' names."""
    names = [lv["name"] for lv in client.get("/levels").json["levels"]]
    level = client.get("/openapi.json").json["components"]["schemas"]["SuggestRequest"]["properties"]["level"]
    assert [b["enum"] for b in level["anyOf"] if b.get("type") == "string"] == [names]


def test_errors_are_problem_details(client: Any) -> None:
    """Every error is an RFC 9457 problem (`application/problem+json`: type, title, status, detail)
    with the service's own members (error, message, pointer, in, errors, request_id)."""
    for resp, status in ((client.post("/games", json={"players": 9}), 422), (client.get("/nowhere"), 404),
                         (client.post("/games", data="{", content_type="application/json"), 400),
                         (client.delete("/games"), 405)):
        body = resp.json
        assert resp.status_code == status and resp.raw.mimetype == "application/problem+json", (resp, body)
        assert body["type"] == "about:blank" and body["status"] == status and body["detail"] == body["message"]
        assert body["title"] == HTTPStatus(status).phrase
        assert {"error", "pointer", "in", "errors", "request_id"} <= set(body)
