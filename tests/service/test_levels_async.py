"""GET /levels says which levels mode auto answers as a job, in how many parts, at what cost;
`grandmaster`, the level that searches for seconds, is answered asynchronously in root-parallel parts."""

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
    assert [n for n, lv in levels.items() if lv["asynchronous"]] == ["grandmaster"]
    assert levels["grandmaster"]["parts"] == 4 and levels["master"]["parts"] == 1
    costs = [lv["core_seconds"] for lv in levels.values()]
    assert all(isinstance(c, float) and c > 0 for c in costs)
    assert levels["grandmaster"]["core_seconds"] >= 1.0 > levels["master"]["core_seconds"]


def test_grandmaster_is_a_job_of_root_parallel_parts(client: Any, view: dict[str, Any]) -> None:
    r = client.post("/suggest", json={"state": view, "level": "grandmaster", "mode": "sync"})
    assert r.status_code == 422 and r.get_json()["pointer"] == "/level", r.get_json()
    r = client.post("/suggest", json={"state": view, "level": "grandmaster", "seed": 2})
    assert r.status_code == 202, r.get_json()
    body = r.get_json()
    assert body["mode"] == "async" and body["parts"] == 4
    d = client.delete(body["status_url"])  # what it found so far is kept; the test needs no more
    assert d.status_code in (200, 409), d.get_json()
