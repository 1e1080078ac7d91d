"""GET /levels says which levels mode auto answers as a job, in how many parts, at what cost. Every
level on the ladder is answered at once by default; a long search is master with a larger budget,
answered as a job of root-parallel parts; `grandmaster`, a preset off the ladder, is no level."""

from __future__ import annotations

from typing import Any

import pytest

from service import create_app


@pytest.fixture(scope="module")
def client() -> Any:
    return create_app({"TESTING": True, "log_level": "ERROR"}).test_client()


@pytest.fixture(scope="module")
def view(client: Any) -> dict[str, Any]:
    r = client.post("/games", json={"players": 2, "seed": 3})
    assert r.status_code == 200
    return dict(r.get_json()["state"])


def test_levels_say_how_they_are_answered(client: Any) -> None:
    levels = {lv["name"]: lv for lv in client.get("/levels").get_json()["levels"]}
    assert not [n for n, lv in levels.items() if lv["asynchronous"]]
    assert "grandmaster" not in levels and levels["master"]["parts"] == 1
    costs = [lv["core_seconds"] for lv in levels.values()]
    assert all(isinstance(c, float) and c > 0 for c in costs)


def test_a_level_beyond_the_synchronous_limits_is_said_to_be_a_job() -> None:
    capped = create_app({"TESTING": True, "log_level": "ERROR", "SYNC_MAX_ITERATIONS": 2000}).test_client()
    levels = {lv["name"]: lv for lv in capped.get("/levels").get_json()["levels"]}
    assert [n for n, lv in levels.items() if lv["asynchronous"]] == ["master"]


def test_grandmaster_is_no_level(client: Any, view: dict[str, Any]) -> None:
    r = client.post("/suggest", json={"state": view, "level": "grandmaster"})
    body = r.get_json()
    assert r.status_code == 422 and body["pointer"] == "/level", body
    assert "master" in body["message"]


def test_a_long_search_is_a_job_of_root_parallel_parts(client: Any, view: dict[str, Any]) -> None:
    r = client.post("/suggest", json={"state": view, "level": "master", "iterations": 80000, "mode": "sync"})
    assert r.status_code == 422 and r.get_json()["pointer"] in ("/iterations", "/mode"), r.get_json()
    r = client.post("/suggest", json={"state": view, "level": "master", "iterations": 80000, "seed": 2})
    assert r.status_code == 202, r.get_json()
    body = r.get_json()
    assert body["mode"] == "async" and body["parts"] == 4
    d = client.delete(body["status_url"])  # what it found so far is kept; the test needs no more
    assert d.status_code in (200, 409), d.get_json()
