"""With a rate limit on, every limited answer says the limit, what is left of it and when it
resets (X-RateLimit-*), and the 429 past it says when to retry; health is neither limited nor
counted."""

from __future__ import annotations

import time

from service import create_app


def test_limited_answers_carry_the_rate_limit_headers() -> None:
    client = create_app({"TESTING": True, "log_level": "WARNING", "rate_limit": "3/minute"}).test_client()
    left = []
    for _ in range(3):
        r = client.get("/levels")
        assert r.status_code == 200
        assert r.headers["X-RateLimit-Limit"] == "3"
        left.append(int(r.headers["X-RateLimit-Remaining"]))
        assert 0 < float(r.headers["X-RateLimit-Reset"]) - time.time() <= 61
    assert left == [2, 1, 0]
    r = client.get("/levels")
    assert r.status_code == 429 and r.get_json()["error"] == "rate_limit"
    assert int(r.headers["Retry-After"]) >= 1 and r.headers["X-RateLimit-Remaining"] == "0"
    health = client.get("/healthz")
    assert health.status_code == 200 and "X-RateLimit-Limit" not in health.headers


def test_without_a_limit_no_headers() -> None:
    client = create_app({"TESTING": True, "log_level": "WARNING"}).test_client()
    assert "X-RateLimit-Limit" not in client.get("/levels").headers
