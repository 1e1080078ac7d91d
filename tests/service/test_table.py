"""The web table's endpoints through Flask's test client: the page, a whole game by tokens, the
token sealed (tampered, foreign, rotated keys), records, hints, and bad input as 4xx naming the field."""

from __future__ import annotations

import json
import random
import time
import zlib
from typing import Any

import pytest
from cryptography.fernet import Fernet
from flask import Flask
from flask.testing import FlaskClient

from service import create_app
from service.table import play
from service.table import token as table_token
from tests.service_helpers import REFUSED_RECORDS, moved

KEY = Fernet.generate_key().decode("ascii")


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app({"TESTING": True, "log_level": "WARNING", "table_key": KEY, "table_pause_ms": 0})


@pytest.fixture()
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def post(client: FlaskClient, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    resp = client.post(path, json=body)
    return resp.status_code, resp.get_json()


def opened(sealed: str, key: str = KEY) -> dict[str, Any]:
    return dict(json.loads(zlib.decompress(Fernet(key.encode()).decrypt(sealed.encode()))))


def play_out(client: FlaskClient, body: dict[str, Any], pick: int = 0) -> dict[str, Any]:
    """Play the person's decisions (the `pick`-th legal one, cycling) to game over."""
    moves = 0
    while not body["is_terminal"]:
        choice = body["legal"][(pick + moves) % len(body["legal"])]
        status, body = post(client, "/table/move", {"token": body["token"], "decision": choice["text"]})
        assert status == 200, body
        moves += 1
        assert moves < 1000
    return body


def tampered(sealed: str) -> str:
    i = len(sealed) // 2
    return sealed[:i] + ("A" if sealed[i] != "A" else "B") + sealed[i + 1:]


def test_page_and_its_files_are_served(client: FlaskClient) -> None:
    for path in ("/", "/play"):
        resp = client.get(path)
        assert resp.status_code == 200 and resp.mimetype == "text/html"
        page = resp.get_data(as_text=True)
        assert 'data-pause-ms="0"' in page and "/table/static/table.js" in page
    assert client.get("/table/static/table.js").status_code == 200
    assert client.get("/table/static/table.css").status_code == 200


def test_a_new_game_shows_the_persons_view_in_words(client: FlaskClient) -> None:
    status, body = post(client, "/table/new", {"levels": ["novice"], "seed": 11})
    assert status == 200, body
    assert body["seat"] == 0 and body["players"] == 2 and body["names"] == ["you", "novice (seat 2)"]
    assert body["view"]["observer"] == 0 and "rng" not in body["view"]
    assert body["current_player"] == 0 and body["legal"] and body["ask"]
    for item in body["legal"]:
        assert item["description"] and item["text"]
    # every card in sight has its name and actions, every contract its cost, mules and VP
    for caravan in body["view"]["seats"][0]["caravans"]:
        for slug in caravan:
            assert body["cards"][slug]["name"] and body["cards"][slug]["actions"]
    for number in body["view"]["display"]:
        c = body["contracts"][str(number)]
        assert c["vp"] >= 1 and c["cost"] and "mules" in c
    # the whole game is in the token, sealed: the deck order and the seed travel only there
    inside = opened(body["token"])
    assert inside["state"]["rng"] and inside["seed"] == 11 and inside["levels"] == [None, "novice"]


def test_a_whole_game_by_tokens_then_its_record_replays(client: FlaskClient) -> None:
    status, body = post(client, "/table/new", {"levels": ["novice"], "seed": 5})
    assert status == 200
    first = body["token"]
    end = play_out(client, body)
    assert end["legal"] == [] and end["result"]["seed"] == 5
    assert end["result"]["scores"] == end["vp"] and end["result"]["winner"] == end["winner"]
    # the first token still holds the start: the service kept nothing
    status, again = post(client, "/table/move", {"token": first, "decision": body["legal"][0]["text"]})
    assert status == 200 and again["decisions"] >= 1
    status, rec = post(client, "/table/record", {"token": end["token"]})
    assert status == 200
    record = rec["record"]
    assert record["schema"] == "kashgar/record@1" and record["seed"] == 5 and record["players"] == 2
    assert record["seats"] == [{"seat": 0, "level": None}, {"seat": 1, "level": "novice"}]
    assert len(record["moves"]) == end["decisions"] and record["result"]["vp"] == end["vp"]
    assert all(m["description"] for m in record["moves"]) and "path" not in record["cards"]
    status, loaded = post(client, "/table/load", {"record": record})
    assert status == 200 and loaded["result"] == end["result"] and loaded["view"] == end["view"]


def test_a_token_sent_again_draws_other_cards(client: FlaskClient) -> None:
    """The deck's order is shuffled afresh before each of the person's decisions: the same token and
    decision sent again (or with another decision) shows other draws, so a replay learns nothing of
    what is to come; each branch's record still replays (its shuffles are in it)."""
    status, body = post(client, "/table/new", {"levels": ["novice"], "seed": 11})
    assert status == 200 and "c0:a" in [d["text"] for d in body["legal"]]  # the Patriarch draws 2 Standard cards
    draws = set()
    for _ in range(6):
        status, moved = post(client, "/table/move", {"token": body["token"], "decision": "c0:a"})
        assert status == 200, moved
        draws.add(tuple(moved["steps"][0]["events"][:2]))  # two of one kind leave no choice: no pending
    assert len(draws) >= 3, draws
    end = play_out(client, moved)
    status, rec = post(client, "/table/record", {"token": end["token"]})
    assert status == 200 and all("shuffle" in m for m in rec["record"]["moves"] if m["seat"] == 0)
    status, loaded = post(client, "/table/load", {"record": rec["record"]})
    assert status == 200 and loaded["view"] == end["view"]


def test_bot_moves_come_in_words_one_step_each(client: FlaskClient) -> None:
    status, body = post(client, "/table/new", {"levels": ["novice", "beginner", "casual"], "seed": 3})
    assert status == 200 and body["players"] == 4
    seats: list[int] = []
    while not {1, 2, 3} <= set(seats):  # the person's decisions of a turn, then the three bots' turns
        status, body = post(client, "/table/move", {"token": body["token"], "decision": body["legal"][0]["decision"]})
        assert status == 200
        assert body["steps"][0]["seat"] == 0 and body["current_player"] == 0
        for step in body["steps"]:
            assert step["description"] and step["who"] == body["names"][step["seat"]]
        seats += [s["seat"] for s in body["steps"]]


def _elo_game(client: FlaskClient, monkeypatch: pytest.MonkeyPatch, levels: list[Any],
              seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A game at `levels` played to its end (the person's first legal decision each time), the
    shuffles before the person's decisions drawn from a fixed seed; its last answer and its record."""
    shuffles = random.Random(seed)
    monkeypatch.setattr(play.secrets, "randbits", lambda bits: shuffles.getrandbits(bits))
    status, body = post(client, "/table/new", {"levels": levels, "seed": seed})
    assert status == 200, body
    end = play_out(client, body)
    status, rec = post(client, "/table/record", {"token": end["token"]})
    assert status == 200, rec
    return end, rec["record"]


def _reviewed(client: FlaskClient, record: dict[str, Any]) -> dict[str, Any]:
    resp = client.post("/reviews", json={"record": record, "level": "novice"})
    assert resp.status_code == 202, resp.get_json()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = client.get(resp.headers["Location"]).get_json()
        if job["status"] in ("finished", "failed", "cancelled") and (job["result"] or job["status"] != "finished"):
            return dict(job)
        time.sleep(0.05)
    raise AssertionError(f"the review did not finish: {job}")


def test_a_bot_at_an_elo_plays_as_suggest_draws_and_its_seed_replays_the_game(
        client: FlaskClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """`levels: [640]`: a bot at Elo 640, seated `elo:640` and named `Elo 640`. Each of its
    decisions is POST /suggest's at `elo` 640 with the table's seed of that decision (a level of
    the mix around 640 drawn from the seed and the position: both are drawn), so the same seed and
    decisions give the same record; the record loads back and is reviewed."""
    import engine_ext
    from engine_ext import record as records

    end, record = _elo_game(client, monkeypatch, [640], 21)
    assert end["levels"] == [None, "elo:640"] and end["names"] == ["you", "Elo 640 (seat 2)"]
    assert opened(end["token"])["levels"] == [None, "elo:640"]
    assert record["seats"] == [{"seat": 0, "level": None}, {"seat": 1, "level": "elo:640"}]
    again_end, again = _elo_game(client, monkeypatch, [640.0], 21)
    assert again == record and again_end["result"] == end["result"] and again_end["view"] == end["view"]
    drawn = set()
    for step in records.Replay(record):
        if step.move["seat"] != 1:
            continue
        seed = (21 * 7919 + step.number - 1) % engine_ext.SEEDS  # as the table seeds a bot's decision
        status, said = post(client, "/suggest", {"state": step.view(), "elo": 640, "seed": seed, "mode": "sync"})
        assert status == 200 and said["decision_text"] == step.move["decision"], (step.number, said)
        drawn.add(said["level"])
    assert drawn == {"skilled", "advanced"}  # 640 lies between them
    status, loaded = post(client, "/table/load", {"record": record})
    assert status == 200, loaded
    assert loaded["levels"] == [None, "elo:640"] and loaded["names"] == end["names"]
    assert loaded["result"] == end["result"] and loaded["view"] == end["view"]
    status, halfway = post(client, "/table/load", {"record": record, "moves": 11})
    assert status == 200 and halfway["levels"] == [None, "elo:640"] and halfway["current_player"] == 0
    review = _reviewed(client, record)
    assert review["status"] == "finished" and review["result"]["reviewed"] > 0, review
    assert {s["seat"] for s in review["result"]["seats"]} == {0, 1}


def test_an_elo_out_of_the_ladder_or_a_number_as_text_is_refused(client: FlaskClient) -> None:
    """An Elo outside GET /levels' range: 422 at /levels/<i> in /suggest's words (the range in
    them); "640", a string, is a level name (none such); `elo:N` of a record as its level is."""
    view = post(client, "/table/new", {"levels": ["novice"], "seed": 3})[1]["view"]
    elo = client.get("/levels").get_json()["elo"]
    for i, bad in ((0, elo["max"] + 1), (1, elo["min"] - 0.5), (1, 1e300)):
        levels: list[Any] = ["novice", "club"]
        levels[i] = bad
        status, err = post(client, "/table/new", {"levels": levels})
        assert status == 422 and err["error"] == "elo_out_of_range" and err["pointer"] == f"/levels/{i}", err
        _, said = post(client, "/suggest", {"state": view, "elo": bad})
        assert err["message"] == said["message"] and f"from {elo['min']:g} to {elo['max']:g}" in err["message"]
    status, err = post(client, "/table/new", {"levels": ["640"]})
    assert status == 422 and err["error"] == "unknown_level" and err["pointer"] == "/levels/0", err
    for bad in (True, None, [640], {"elo": 640}):
        status, err = post(client, "/table/new", {"levels": [bad]})
        assert status == 422 and err["pointer"] == "/levels/0", err
    status, err = post(client, "/table/new", {"levels": ["elo:640"]})  # the seat's name, not a level's
    assert status == 422 and err["pointer"] == "/levels/0", err


def test_a_ladder_with_no_range_seats_no_elo(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A level file with one measured level: no `elo` range (GET /levels' `elo` null), so a number
    in `levels` is refused as /suggest refuses an `elo`, and the document offers none."""
    from service import levels as served_levels

    path = tmp_path / "one.toml"
    path.write_text('default = "a"\n[[level]]\nname = "a"\niterations = 8\nelo = 0.0\n'
                    '[[level]]\nname = "b"\niterations = 9\n')
    monkeypatch.setenv("KASHGAR_LEVELS", str(path))
    served_levels.levels.cache_clear()  # a process reads its level file once
    try:
        small = create_app({"TESTING": True, "log_level": "WARNING", "table_key": KEY}).test_client()
        assert small.get("/levels").get_json()["elo"] is None
        status, err = post(small, "/table/new", {"levels": [0]})
        assert status == 422 and err["error"] == "elo_out_of_range" and err["pointer"] == "/levels/0", err
        assert "fewer than two levels" in err["message"]
        items = small.get("/openapi.json").get_json()["components"]["schemas"]["TableNewRequest"]["properties"][
            "levels"]["items"]
        assert [b["type"] for b in items["anyOf"]] == ["string"] and items["anyOf"][0]["enum"] == ["a", "b"]
        assert post(small, "/table/new", {"levels": ["b"], "seed": 1})[0] == 200
    finally:
        monkeypatch.undo()
        served_levels.levels.cache_clear()


def test_a_hint_gives_the_levels_choice_and_alternatives(client: FlaskClient) -> None:
    _, body = post(client, "/table/new", {"levels": ["novice"], "seed": 2})
    status, hint = post(client, "/table/hint", {"token": body["token"], "level": "skilled"})
    assert status == 200, hint
    assert hint["text"] in {d["text"] for d in body["legal"]} and hint["description"]
    assert 0.0 <= hint["win_prob"] <= 1.0 and 1 <= len(hint["alternatives"]) <= 3
    assert all(a["text"] != hint["text"] and a["description"] for a in hint["alternatives"])
    # why, in one sentence: the suggestion in words, then its figures against the next best's
    assert hint["reason"].lower().startswith(hint["description"].lower()) and hint["reason"].endswith(".")
    assert f"{100 * hint['win_prob']:.0f}% to win against" in hint["reason"]


def test_a_tampered_or_foreign_token_is_refused(client: FlaskClient) -> None:
    _, body = post(client, "/table/new", {"levels": ["novice"], "seed": 4})
    foreign = table_token.seal(table_token.cipher(Fernet.generate_key().decode()), opened(body["token"]))
    for bad in (tampered(body["token"]), foreign, "not a token", body["token"][:-10]):
        for path, extra in (("/table/move", {"decision": "c0:a"}), ("/table/hint", {"level": "novice"}),
                            ("/table/record", {})):
            status, err = post(client, path, {"token": bad, **extra})
            assert status == 422 and err["error"] == "invalid_token" and err["pointer"] == "/token", err


def test_keys_rotate_and_processes_with_the_key_share_tables() -> None:
    old, new = KEY, Fernet.generate_key().decode()
    one = create_app({"TESTING": True, "log_level": "WARNING", "table_key": old}).test_client()
    other = create_app({"TESTING": True, "log_level": "WARNING", "table_key": f"{new},{old}"}).test_client()
    _, body = post(one, "/table/new", {"levels": ["novice"], "seed": 9})
    status, moved = post(other, "/table/move", {"token": body["token"], "decision": body["legal"][0]["text"]})
    assert status == 200
    opened(moved["token"], new)  # sealed with the first key
    with pytest.raises(ValueError, match="KASHGAR_TABLE_KEY"):
        create_app({"TESTING": True, "table_key": "not-a-fernet-key"})


@pytest.mark.parametrize(("path", "body", "status", "pointer"), [
    ("/table/new", {"levels": []}, 422, "/levels"),
    ("/table/new", {"levels": ["novice"] * 4}, 422, "/levels"),
    ("/table/new", {"levels": ["nobody"]}, 422, "/levels/0"),
    ("/table/new", {"levels": ["novice"], "seed": -1}, 422, "/seed"),
    ("/table/new", {"levels": ["novice"], "variant": {"additional": ["nobody"]}}, 422, "/variant/additional/0"),
    ("/table/new", {"levels": ["novice"], "variant": {"more": []}}, 422, "/variant/more"),
    ("/table/new", {"levels": ["novice"], "variant": 5}, 422, "/variant"),
    ("/table/new", {"levels": ["novice"], "extra": 1}, 422, "/extra"),
    ("/table/move", {"decision": "c0:a"}, 422, "/token"),
    ("/table/hint", {"token": "x"}, 422, "/level"),
    ("/table/hint", {"token": "x", "level": "nobody"}, 422, "/token"),
    ("/table/load", {"record": {"schema": "other", "players": 2, "seed": 1, "moves": []}}, 422, "/record/schema"),
    ("/table/load", {"record": {"schema": "kashgar/record@1", "seed": 1, "moves": []}}, 422, "/record/players"),
    ("/table/load", {"record": {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
                                "seats": [{"seat": 0, "level": None}, {"seat": 1, "level": "cat"}]}},
     422, "/record/seats/1/level"),
    ("/table/load", {"record": {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
                                "seats": [{"seat": 0, "level": None}, {"seat": 1, "level": None}]}},
     422, "/record/seats"),
    ("/table/load", {"record": {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
                                "seats": [{"seat": 0, "level": None}, {"seat": 1, "level": "elo:5000"}]}},
     422, "/record/seats/1/level"),
    ("/table/load", {"record": {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
                                "seats": [{"seat": 0, "level": "elo:x"}, {"seat": 1, "level": None}]}},
     422, "/record/seats/0/level"),
    ("/table/new", {"levels": [5000]}, 422, "/levels/0"),
    ("/table/new", {"levels": ["novice", "640"]}, 422, "/levels/1"),
    ("/table/load", {"record": {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
                                "variant": {"x": 1}}}, 422, "/record/variant/x"),
])
def test_bad_input_is_a_4xx_naming_the_field(client: FlaskClient, path: str, body: Any, status: int,
                                             pointer: str) -> None:
    got, err = post(client, path, body)
    assert got == status and err["pointer"].startswith(pointer), err


def test_decisions_that_are_not_the_persons_are_refused(client: FlaskClient) -> None:
    _, body = post(client, "/table/new", {"levels": ["novice"], "seed": 6})
    status, err = post(client, "/table/move", {"token": body["token"], "decision": "c9:a"})
    assert status == 422 and err["pointer"] == "/decision"
    status, err = post(client, "/table/record", {"token": body["token"]})
    assert status == 409 and err["error"] == "game_not_over"
    end = play_out(client, body)
    status, err = post(client, "/table/move", {"token": end["token"], "decision": "c0:a"})
    assert status == 409 and err["error"] == "not_your_turn"
    status, err = post(client, "/table/hint", {"token": end["token"], "level": "novice"})
    assert status == 409
    resp = client.post("/table/new", data="levels=novice", content_type="application/x-www-form-urlencoded")
    assert resp.status_code == 415


def test_a_record_that_does_not_replay_names_the_decision(client: FlaskClient) -> None:
    _, body = post(client, "/table/new", {"levels": ["novice"], "seed": 8})
    end = play_out(client, body)
    _, rec = post(client, "/table/record", {"token": end["token"]})
    record = rec["record"]
    record["moves"][3]["decision"] = "c9:a"
    status, err = post(client, "/table/load", {"record": record})
    assert status == 422 and err["error"] == "record_does_not_replay"
    assert err["pointer"] == "/record/moves/3/decision" and "move 4" in err["message"], err


@pytest.fixture(scope="module")
def table_record() -> dict[str, Any]:
    """A table's record (the person at seat 0, novice at seat 1): 24 decisions chosen at random."""
    import random

    import engine_ext
    from engine_ext import record as records

    game, rng, played = engine_ext.new_game(players=2, seed=8), random.Random(8), []
    for _ in range(24):
        played.append(str(rng.choice(game.legal())))
        game.apply(played[-1])
    return records.record_from_moves(played, players=2, seed=8, levels=[None, "novice"])


@pytest.mark.parametrize(("mutate", "error", "pointer"), [
    *REFUSED_RECORDS,
    (lambda r: {k: v for k, v in r.items() if k != "moves"}, "invalid_record", "/record/moves"),
    (lambda r: {**r, "variant": {"more": []}}, "invalid_record", "/record/variant/more"),
    (lambda r: {**r, "variant": ["nobody"]}, "invalid_record", "/record/variant/0"),
    (lambda r: moved(r, 2, {**r["moves"][2], "events": []}), "record_does_not_replay", "/record/moves/2/events"),
])
def test_a_refused_record_is_named_as_everywhere_else(client: FlaskClient, table_record: dict[str, Any],
                                                       mutate: Any, error: str, pointer: str) -> None:
    """/table/load refuses a record with the record's own codes and pointers
    (`engine_ext.record.RecordError`), as POST /reviews does: `invalid_record` at the field,
    `record_does_not_replay` at the move's field or the result."""
    status, loaded = post(client, "/table/load", {"record": table_record})
    assert status == 200, loaded
    bad = mutate(table_record)
    status, err = post(client, "/table/load", {"record": bad})
    assert status == 422 and err["error"] == error, err
    assert err["pointer"] == pointer or err["pointer"].startswith(pointer + "/"), err
    status, review = post(client, "/reviews", {"record": bad, "level": "novice"})
    assert status == 422 and (review["error"], review["pointer"]) == (err["error"], err["pointer"]), review


def test_levels_beyond_the_synchronous_limits_are_refused_by_name() -> None:
    small = create_app({"TESTING": True, "log_level": "WARNING", "sync_max_iterations": 100}).test_client()
    status, err = post(small, "/table/new", {"levels": ["novice", "master"]})
    assert status == 422 and err["pointer"] == "/levels/1" and err["error"] == "budget_too_large_for_sync"
    # an Elo: both levels of its mix within the limits (skilled's 80 iterations are, advanced's 130 not)
    status, err = post(small, "/table/new", {"levels": ["novice", 640]})
    assert status == 422 and err["pointer"] == "/levels/1" and err["error"] == "budget_too_large_for_sync", err
    assert "advanced" in err["message"] and "Elo 640" in err["message"]
    assert post(small, "/table/new", {"levels": [605.8], "seed": 1})[0] == 200
    _, body = post(small, "/table/new", {"levels": ["novice"], "seed": 1})
    for level, pointer in (("master", "/level"), ("nobody", "/level")):
        status, err = post(small, "/table/hint", {"token": body["token"], "level": level})
        assert status == 422 and err["pointer"] == pointer, err


def test_the_document_says_which_elo_the_table_plays() -> None:
    """/table/new's `levels` in the OpenAPI document: a level name, or a number within the spans of
    the ladder whose mix this server plays synchronously; the server agrees, both sides of each bound."""
    import jsonschema

    for config, top in (({}, 1032.7), ({"sync_max_iterations": 100}, 605.8)):
        small = create_app({"TESTING": True, "log_level": "WARNING", "table_key": KEY, **config}).test_client()
        doc = small.get("/openapi.json").get_json()
        field = doc["components"]["schemas"]["TableNewRequest"]["properties"]["levels"]
        assert "Elo" in field["description"] and "range" in field["description"]
        validator = jsonschema.Draft202012Validator({"$ref": "#/components/schemas/TableNewRequest",
                                                     "components": doc["components"]})
        for elo, ok in ((0, True), (top, True), (300.25, True), (-0.1, False), (top + 0.1, False)):
            body = {"levels": [elo], "seed": 2}
            assert validator.is_valid(body) is ok, (config, elo)
            assert post(small, "/table/new", body)[0] == (200 if ok else 422), (config, elo)
        assert validator.is_valid({"levels": ["novice"]}) and not validator.is_valid({"levels": ["640"]})


def test_gunicorns_master_makes_one_key_for_its_web_processes(tmp_path: Any) -> None:
    """Before it forks: every web process, and a USR2 successor, seal and open with the same key."""
    import os
    from types import SimpleNamespace
    from unittest import mock

    env = {"KASHGAR_JOBS_DB": str(tmp_path / "jobs.sqlite"), "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")}
    with mock.patch.dict(os.environ, env):
        os.environ.pop("KASHGAR_TABLE_KEY", None)
        os.environ.pop("KASHGAR_SERVER_TEMP_DIRS", None)
        from service import gunicorn_conf

        gunicorn_conf.prepare_environment()
        made = os.environ["KASHGAR_TABLE_KEY"]
        table_token.cipher(made)  # a Fernet key
        server = SimpleNamespace(cfg=SimpleNamespace(env_orig={}))
        gunicorn_conf.pre_exec(server)
        assert server.cfg.env_orig["KASHGAR_TABLE_KEY"] == made
        os.environ["KASHGAR_TABLE_KEY"] = KEY  # an operator's key is kept
        gunicorn_conf.prepare_environment()
        assert os.environ["KASHGAR_TABLE_KEY"] == KEY


def test_with_api_keys_the_page_is_open_and_its_calls_need_a_key() -> None:
    app = create_app({"TESTING": True, "log_level": "WARNING", "table_key": KEY, "table_pause_ms": 0,
                      "api_keys": "k-table"})
    client = app.test_client()
    assert client.get("/").status_code == 200
    assert client.get("/table/static/table.js").status_code == 200
    assert client.get("/levels").status_code == 401
    assert client.post("/table/new", json={"levels": ["novice"], "seed": 3}).status_code == 401
    wrong = client.post("/table/new", json={"levels": ["novice"], "seed": 3}, headers={"Authorization": "Bearer no"})
    assert wrong.status_code == 403
    ok = client.post("/table/new", json={"levels": ["novice"], "seed": 3}, headers={"Authorization": "Bearer k-table"})
    assert ok.status_code == 200 and ok.get_json()["token"]


def test_the_tables_searches_count_against_the_clients_sync_limit() -> None:
    app = create_app({"TESTING": True, "log_level": "WARNING", "table_key": KEY, "table_pause_ms": 0,
                      "sync_client_seconds": 0.01})
    client = app.test_client()
    status, body = post(client, "/table/new", {"levels": ["novice"], "seed": 5})
    assert status == 200, body
    resp = client.post("/table/hint", json={"token": body["token"], "level": "master"})
    assert resp.status_code == 429 and resp.get_json()["error"] == "sync_client_limit"
    assert resp.headers["Retry-After"]
