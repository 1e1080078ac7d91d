"""POST /rating through Flask's test client: results and records rated on the server's ladder,
the prior alone without games, an operator's ladder, the document, and bad input as 422 naming
the field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from bots import rating
from service import create_app, levels
from tests.builders import random_record


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app({"TESTING": True, "log_level": "WARNING"})


@pytest.fixture()
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def post(client: FlaskClient, body: Any) -> tuple[int, dict[str, Any]]:
    resp = client.post("/rating", json=body)
    return resp.status_code, resp.get_json()


def finished(seed: int, levels: list[str | None]) -> dict[str, Any]:
    rec = random_record(seed=seed, moves=10_000, rng_seed=seed, players=len(levels))
    rec["seats"] = [{"seat": p, "level": lv} for p, lv in enumerate(levels)]
    assert rec["result"]["is_terminal"]
    return rec


def test_results_are_rated_on_the_ladder(client: FlaskClient) -> None:
    elos = rating.served_ladder()
    results = [{"levels": [None, "club"], "vp": [25, 20], "winner": 0},
               {"levels": ["skilled", None, "casual"], "vp": [26, 25, 12]},
               {"levels": [None, "novice"], "vp": [22, 25], "winner": 1},
               {"levels": [None, "beginner", "club", "advanced"], "vp": [25, 25, 18, 10], "winner": 0}]
    status, body = post(client, {"results": results})
    assert status == 200, body
    games = [rating.game_of_result(r["levels"], r["vp"], r.get("winner"), elos) for r in results]
    want = rating.rate(games, rating.ladder_middle(elos))
    assert body == {**want.to_dict(), "nearest_level": rating.nearest_level(want.elo, elos)}
    assert body["games"] == 4 and body["interval"][0] < body["elo"] < body["interval"][1]
    assert body["prior"] == {"mean": 516, "sd": 350} and body["confidence"] == 0.95


def test_records_rate_as_their_results(client: FlaskClient) -> None:
    recs = [finished(3, [None, "club"]), finished(4, ["expert", None, "novice"])]
    status, body = post(client, {"records": recs})
    assert status == 200, body
    results = [{"levels": [s["level"] for s in r["seats"]], "vp": r["result"]["vp"], "winner": r["result"]["winner"]}
               for r in recs]
    assert post(client, {"results": results}) == (200, body)
    both = post(client, {"results": results[:1], "records": recs[1:]})
    assert both == (200, body) and body["games"] == 2


def test_no_games_is_the_prior(client: FlaskClient) -> None:
    status, body = post(client, {})
    assert status == 200 and body["games"] == 0 and body["elo"] == 516 and body["interval"] == [-170, 1202]
    assert body["nearest_level"] in ("club", "skilled")


def test_an_operators_ladder(client: FlaskClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A level file of three presets: the prior's centre is its middle, its levels are those rated."""
    shipped = Path(rating.__file__).parent / "data" / "levels.toml"
    text = shipped.read_text()
    blocks = text.split("[[level]]")
    keep = [b for b in blocks[1:] if any(f'name = "{n}"' in b for n in ("novice", "club", "skilled"))]
    mine = tmp_path / "my.toml"
    mine.write_text("".join("[[level]]" + b.split("# Named presets")[0] for b in keep))
    monkeypatch.setenv("KASHGAR_LEVELS", str(mine))
    levels.levels.cache_clear()  # a process reads its level file once
    try:
        status, body = post(client, {"results": [{"levels": [None, "club"], "vp": [25, 10], "winner": 0}]})
        assert status == 200, body
        assert body["prior"]["mean"] == round(605.8 / 2) and body["nearest_level"] in ("club", "skilled")
        status, body = post(client, {"results": [{"levels": [None, "master"], "vp": [25, 10]}]})
        assert status == 422 and body["pointer"] == "/results/0/levels/1" and "master" in body["message"]
    finally:
        monkeypatch.undo()
        levels.levels.cache_clear()


@pytest.mark.parametrize("body, pointer", [
    ({"results": [{"levels": ["club", "novice"], "vp": [25, 20]}]}, "/results/0/levels"),
    ({"results": [{"levels": [None, None], "vp": [25, 20]}]}, "/results/0/levels"),
    ({"results": [{"levels": [None, "grandmaster"], "vp": [25, 20]}]}, "/results/0/levels/1"),
    ({"results": [{"levels": [None, "nobody"], "vp": [25, 20]}]}, "/results/0/levels/1"),
    ({"results": [{"levels": [None, "club"], "vp": [25, 20, 3]}]}, "/results/0/vp"),
    ({"results": [{"levels": [None, "club"], "vp": [25, 20], "winner": 2}]}, "/results/0/winner"),
    ({"results": [{"levels": [None, "club"], "vp": [25, 20], "winner": 1}]}, "/results/0/winner"),
    ({"results": [{"levels": [None], "vp": [25]}]}, "/results/0/levels"),
    ({"results": [{"levels": [None, "club"], "vp": [25, "20"]}]}, "/results/0/vp/1"),
    ({"results": [{"levels": [None, "club"]}]}, "/results/0/vp"),
    ({"results": [{"levels": [None, "club"], "vp": [25, 20], "seat": 0}]}, "/results/0/seat"),
    ({"results": [{"levels": [None, "elo:x"], "vp": [25, 20]}]}, "/results/0/levels/1"),
    ({"results": [{"levels": [None, "elo:640:p=1"], "vp": [25, 20]}]}, "/results/0/levels/1"),
    ({"results": [{"levels": [None, "elo: 640"], "vp": [25, 20]}]}, "/results/0/levels/1"),
    ({"elo": 600}, "/elo"),
    ({"records": [{"schema": "other"}]}, "/records/0/schema"),
    ({"records": [{"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": []}]}, "/records/0/seats"),
])
def test_bad_input_is_a_422_naming_the_field(client: FlaskClient, body: dict[str, Any], pointer: str) -> None:
    status, err = post(client, body)
    assert status == 422 and err["pointer"] == pointer, err


def test_a_record_not_over_or_without_a_person_is_named(client: FlaskClient) -> None:
    rec = finished(5, [None, "club"])
    unfinished = random_record(seed=5, moves=6, rng_seed=5)
    unfinished["seats"] = rec["seats"]
    status, err = post(client, {"records": [rec, unfinished]})
    assert status == 422 and err["pointer"] == "/records/1/result/is_terminal" and err["error"] == "invalid_record"
    bots_only = dict(rec, seats=[{"seat": 0, "level": "novice"}, {"seat": 1, "level": "club"}])
    status, err = post(client, {"records": [bots_only]})
    assert status == 422 and err["pointer"] == "/records/0/seats"


def test_the_document_describes_it(client: FlaskClient) -> None:
    doc = client.get("/openapi.json").get_json()
    op = doc["paths"]["/rating"]["post"]
    assert op["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/RatingRequest")
    assert op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].endswith("/RatingResponse")
    assert {"200", "422", "409"} <= set(op["responses"])
    schemas = doc["components"]["schemas"]
    assert set(schemas["RatingRequest"]["properties"]) == {"results", "records"}
    assert set(schemas["RatingResult"]["properties"]) == {"levels", "vp", "winner"}
    assert {"elo", "interval", "games", "nearest_level"} <= set(schemas["RatingResponse"]["properties"])


def test_a_table_game_rates_the_same_from_what_the_page_keeps_and_from_its_record(client: FlaskClient) -> None:
    """The page keeps a finished game's `levels`, `result.scores` and `result.winner`: rated as the
    game's record (POST /table/record) is."""
    from tests.service.test_table import play_out

    status, body = post_to(client, "/table/new", {"levels": ["novice", "beginner"], "seed": 41})
    assert status == 200, body
    end = play_out(client, body)
    kept = {"levels": end["levels"], "vp": end["result"]["scores"], "winner": end["result"]["winner"]}
    assert kept["levels"] == [None, "novice", "beginner"]
    status, rec = post_to(client, "/table/record", {"token": end["token"]})
    assert status == 200
    by_result = post(client, {"results": [kept]})
    assert by_result[0] == 200 and by_result == post(client, {"records": [rec["record"]]})


def post_to(client: FlaskClient, path: str, body: Any) -> tuple[int, dict[str, Any]]:
    resp = client.post(path, json=body)
    return resp.status_code, resp.get_json()


def test_a_bot_at_an_elo_is_rated_as_an_opponent_of_that_elo(client: FlaskClient) -> None:
    """`elo:N` (the table's bot at Elo N) as a result's level and as a record's: an opponent of Elo N."""
    elos = rating.served_ladder()
    results = [{"levels": [None, "elo:640"], "vp": [25, 20], "winner": 0},
               {"levels": ["elo:300.5", None, "club"], "vp": [26, 25, 12]}]
    status, body = post(client, {"results": results})
    assert status == 200, body
    games = [rating.Game((640.0,), (1.0,)), rating.Game((300.5, elos["club"]), (0.0, 1.0))]
    want = rating.rate(games, rating.ladder_middle(elos))
    assert body == {**want.to_dict(), "nearest_level": rating.nearest_level(want.elo, elos)}
    recs = [finished(6, [None, "elo:640"]), finished(7, ["elo:300.5", None, "club"])]
    by_record = post(client, {"records": recs})
    by_result = post(client, {"results": [{"levels": [s["level"] for s in r["seats"]], "vp": r["result"]["vp"],
                                           "winner": r["result"]["winner"]} for r in recs]})
    assert by_record[0] == 200 and by_record == by_result
    bad = finished(8, [None, "elo:much"])
    status, err = post(client, {"records": [recs[0], bad]})
    assert status == 422 and err["pointer"] == "/records/1/seats/1/level" and "elo:N" in err["message"], err


def test_a_table_game_against_a_bot_at_an_elo_rates_the_same_from_the_page_and_its_record(
        client: FlaskClient) -> None:
    from tests.service.test_table import play_out

    status, body = post_to(client, "/table/new", {"levels": [300.5, "novice"], "seed": 42})
    assert status == 200, body
    end = play_out(client, body)
    kept = {"levels": end["levels"], "vp": end["result"]["scores"], "winner": end["result"]["winner"]}
    assert kept["levels"] == [None, "elo:300.5", "novice"]
    status, rec = post_to(client, "/table/record", {"token": end["token"]})
    assert status == 200
    by_result = post(client, {"results": [kept]})
    assert by_result[0] == 200 and by_result == post(client, {"records": [rec["record"]]})
    elos = rating.served_ladder()
    scores = rating.pairwise_scores(kept["vp"], kept["winner"], 0)
    want = rating.rate([rating.Game((300.5, elos["novice"]), tuple(scores))], rating.ladder_middle(elos))
    assert by_result[1]["elo"] == want.to_dict()["elo"]
