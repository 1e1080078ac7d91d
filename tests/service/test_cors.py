"""CORS is opt-in (KASHGAR_CORS_ORIGINS): off, no CORS header; on, the listed origins get
`Access-Control-Allow-Origin` and their preflights an answer, other origins nothing."""

from __future__ import annotations

import os
from typing import Any

import pytest
from flask import Flask

from service import create_app
from tests.cli_helpers import refused

PAGE = "https://play.example.org"
OTHER = "https://evil.example.com"
CONFIG = {"TESTING": True, "log_level": "WARNING"}


def _app(origins: str) -> Flask:
    return create_app({**CONFIG, "cors_origins": origins})


def _preflight(app: Flask, origin: str, path: str = "/games") -> Any:
    return app.test_client().open(path, method="OPTIONS", headers={
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})


def test_off_by_default_no_cors_header() -> None:
    app = create_app(CONFIG)
    r = app.test_client().get("/levels", headers={"Origin": PAGE})
    assert r.status_code == 200 and not any(h.startswith("Access-Control-") for h in r.headers.keys())
    r = _preflight(app, PAGE)
    assert not any(h.startswith("Access-Control-") for h in r.headers.keys())


def test_an_allowed_origin_is_answered_and_its_preflight_too() -> None:
    app = _app(f"{PAGE}, http://localhost:8080")
    c = app.test_client()
    r = c.get("/levels", headers={"Origin": PAGE})
    assert r.headers["Access-Control-Allow-Origin"] == PAGE and "Origin" in r.headers["Vary"]
    assert "X-Request-ID" in r.headers["Access-Control-Expose-Headers"]
    r = c.post("/games", json={"players": 2, "seed": 1}, headers={"Origin": "http://localhost:8080"})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == "http://localhost:8080"
    r = c.post("/games", json={"players": 9}, headers={"Origin": PAGE})  # an error is readable too
    assert r.status_code == 422 and r.headers["Access-Control-Allow-Origin"] == PAGE
    r = _preflight(app, PAGE)
    assert r.status_code == 204 and r.headers["Access-Control-Allow-Origin"] == PAGE
    assert "POST" in r.headers["Access-Control-Allow-Methods"]
    assert "content-type" in r.headers["Access-Control-Allow-Headers"].lower()
    assert int(r.headers["Access-Control-Max-Age"]) > 0


def test_another_origin_gets_nothing() -> None:
    app = _app(PAGE)
    r = app.test_client().get("/levels", headers={"Origin": OTHER})
    assert r.status_code == 200 and "Access-Control-Allow-Origin" not in r.headers
    assert "Origin" in r.headers["Vary"]
    r = _preflight(app, OTHER)
    assert not any(h.startswith("Access-Control-") for h in r.headers.keys())
    r = app.test_client().get("/levels")  # no Origin: not a cross-origin request
    assert "Access-Control-Allow-Origin" not in r.headers


def test_any_origin() -> None:
    r = _app("*").test_client().get("/cards", headers={"Origin": OTHER})
    assert r.headers["Access-Control-Allow-Origin"] == "*"


@pytest.mark.parametrize("value", ["play.example.org", "https://play.example.org/", "ftp://x.org", "https://a b"])
def test_a_value_that_is_no_origin_is_refused_by_name(value: str, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match="KASHGAR_CORS_ORIGINS"):
        _app(value)
    for name in [n for n in os.environ if n.startswith("KASHGAR_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("KASHGAR_CORS_ORIGINS", value)
    assert "KASHGAR_CORS_ORIGINS" in refused(["serve", "--dry-run"], capsys)


def test_a_keyed_server_answers_a_page_s_preflight_and_its_keyed_calls() -> None:
    """With API keys on, a browser's preflight (sent without a key, by design) is answered 204 and
    allows `Authorization`; the real request then needs the key, and its 401 is readable too."""
    app = create_app({**CONFIG, "cors_origins": PAGE, "api_keys": "page-key"})
    c = app.test_client()
    r = c.open("/suggest", method="OPTIONS", headers={
        "Origin": PAGE, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type"})
    assert r.status_code == 204, r.get_data(as_text=True)
    assert r.headers["Access-Control-Allow-Origin"] == PAGE
    allowed = {h.strip().lower() for h in r.headers["Access-Control-Allow-Headers"].split(",")}
    assert {"authorization", "content-type"} <= allowed
    r = c.post("/games", json={"players": 2, "seed": 1}, headers={"Origin": PAGE})
    assert r.status_code == 401 and r.headers["Access-Control-Allow-Origin"] == PAGE
    assert "WWW-Authenticate" in r.headers["Access-Control-Expose-Headers"]
    r = c.post("/games", json={"players": 2, "seed": 1}, headers={"Origin": PAGE, "Authorization": "Bearer page-key"})
    assert r.status_code == 200 and r.headers["Access-Control-Allow-Origin"] == PAGE
    exposed = {h.strip() for h in r.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"Location", "Retry-After", "X-Request-ID"} <= exposed
    r = c.open("/suggest", method="OPTIONS", headers={"Origin": OTHER, "Access-Control-Request-Method": "POST"})
    assert not any(h.startswith("Access-Control-") for h in r.headers.keys())  # another origin: still nothing


def test_a_preflight_with_a_rate_limit_on_is_not_counted_nor_refused() -> None:
    app = create_app({**CONFIG, "cors_origins": PAGE, "api_keys": "page-key", "rate_limit": "2/minute"})
    c = app.test_client()
    for _ in range(4):
        assert _preflight(app, PAGE, "/suggest").status_code == 204
    auth = {"Origin": PAGE, "Authorization": "Bearer page-key"}
    assert [c.get("/levels", headers=auth).status_code for _ in range(3)] == [200, 200, 429]
