"""Fixtures of the job tests: a real `redis-server` on a free port, the jobs' environment, Settings
on that Redis, a seat's view to search."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

import engine_ext
from lab.serving import RedisServer
from service.config import Settings
from tests.service.jobs_helpers import ENV


@pytest.fixture(scope="module")
def redis_server() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture()
def env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    return ENV


@pytest.fixture()
def settings(env: dict[str, str], redis_server: RedisServer) -> Settings:
    conn = redis.Redis.from_url(redis_server.url)
    conn.flushall()
    return Settings.from_env(overrides={"redis_url": redis_server.url, "max_attempts": 2})


@pytest.fixture(scope="module")
def state() -> dict[str, Any]:
    return dict(engine_ext.new_game(players=2, seed=3).to_json(observer=0))
