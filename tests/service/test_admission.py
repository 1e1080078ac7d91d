"""Admission on the app (Flask's test client): what a search costs in search-seconds, the sync
limit, and who the client is (a forwarded address counts only from a trusted proxy)."""

from __future__ import annotations

from typing import Any

from service import create_app, search
from service.admission import cost_seconds
from service.config import Settings


def test_cost_in_search_seconds(state: dict[str, Any]) -> None:
    s = Settings.from_env({})
    spec = search.SearchSpec(state=state, level=None, iterations=None, time_ms=600_000, seed=1, parallel=16)
    assert cost_seconds(spec, s) == 9600.0
    spec = search.SearchSpec(state=state, level=None, iterations=40_000, time_ms=None, seed=1, parallel=2)
    assert cost_seconds(spec, s) == 40_000 / s.admission_iterations_per_s


def test_a_sync_search_over_the_client_limit_is_429(state: dict[str, Any]) -> None:
    app = create_app({"sync_client_seconds": 0.2, "log_level": "WARNING"})
    c = app.test_client()
    r = c.post("/suggest", json={"state": state, "time_ms": 300, "mode": "sync"})
    assert r.status_code == 429 and r.json is not None and r.json["error"] == "sync_client_limit", r.json
    assert "over this client's sync limit" in r.json["message"] and int(r.headers["Retry-After"]) >= 1
    assert c.post("/suggest", json={"state": state, "time_ms": 100, "mode": "sync"}).status_code == 200


def test_a_forwarded_address_counts_only_from_a_trusted_proxy(state: dict[str, Any]) -> None:
    job = {"state": state, "time_ms": 400, "parallel": 1, "mode": "async"}
    for proxies, second in ((0, 429), (1, 202)):
        app = create_app({"async_client_seconds": 0.5, "trusted_proxies": proxies, "log_level": "WARNING"})
        c = app.test_client()
        assert c.post("/suggest", json=job, headers={"X-Forwarded-For": "10.0.0.1"}).status_code == 202
        r = c.post("/suggest", json=job, headers={"X-Forwarded-For": "10.0.0.2"})
        assert r.status_code == second, (proxies, r.json)  # untrusted: the same peer, over its limit


def test_a_cheap_sync_search_is_not_counted_a_costly_one_is(state: dict[str, Any]) -> None:
    """A search of at most SHARED_MAX_S search-seconds (the cheap levels) answers without a write
    to the shared store; a costlier one is admitted there and released at its end."""
    from service.admission import SHARED_MAX_S
    from service.api.common import manager

    app = create_app({"log_level": "WARNING"})
    calls: list[str] = []
    with app.app_context():
        store = manager().store
        admit, release = store.admit, store.release

        def counted_admit(*args: Any, **kw: Any) -> Any:
            calls.append("admit")
            return admit(*args, **kw)

        def counted_release(token: str) -> None:
            calls.append("release")
            release(token)

        store.admit, store.release = counted_admit, counted_release  # type: ignore[method-assign]
    c = app.test_client()
    cheap = {"state": state, "level": "novice", "mode": "sync"}
    assert cost_seconds(search.SearchSpec(state=state, level="novice", iterations=16, time_ms=None, seed=0,
                                          parallel=1), Settings()) <= SHARED_MAX_S
    assert c.post("/suggest", json=cheap).status_code == 200 and calls == []
    costly = {"state": state, "time_ms": int(SHARED_MAX_S * 1000) + 50, "mode": "sync"}
    assert c.post("/suggest", json=costly).status_code == 200 and calls == ["admit", "release"]
