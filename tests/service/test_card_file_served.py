"""A server started with another card file (`kashgar serve --cards`, KASHGAR_CARDS) plays it, says
which file it is, and its RQ workers must play the same one: a worker with other card data refuses
the search, visibly, instead of answering for other cards."""

from __future__ import annotations

import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from engine_ext.carddata import load_text
from lab.serving import Gunicorn, RedisServer, Worker, http_json

pytestmark = pytest.mark.e2e

TEXT = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
ENV = {"KASHGAR_HEARTBEAT_INTERVAL": "0.2", "KASHGAR_HEARTBEAT_TIMEOUT": "2.0", "KASHGAR_MAX_ATTEMPTS": "1",
       "KASHGAR_LOG_LEVEL": "WARNING"}


def _corrected(tmp_path: Path) -> Path:
    """The Patriarch draws 3 Standard cards; the Nobles are called Noblemen."""
    path = tmp_path / "cards.toml"
    path.write_text(TEXT.replace('english = "Nobles"', 'english = "Noblemen"').replace(
        'caravan = [["draw standard 2"], ["turn_self"]]', 'caravan = [["draw standard 3"], ["turn_self"]]'))
    return path


def _wait_job(url: str, timeout: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status, job = http_json("GET", url)
        assert status == 200, job
        if job["status"] in ("finished", "failed", "cancelled"):
            return job  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"job {url} did not end")


def test_the_server_plays_the_card_file_it_was_given(tmp_path: Path) -> None:
    path = _corrected(tmp_path)
    sha = load_text(path.read_text()).sha256
    with Gunicorn(env=ENV, workers=1, log_dir=str(tmp_path), extra_args=["--cards", str(path)]) as web:
        status, health = http_json("GET", web.url + "/healthz")
        assert status == 200 and health["cards"] == {"name": "cards.toml", "sha256": sha}  # never its path
        assert str(tmp_path) not in json.dumps(health)
        status, cards = http_json("GET", web.url + "/cards")
        assert cards["file"] == health["cards"]
        assert next(c for c in cards["cards"] if c["slug"] == "adelige")["english"] == "Noblemen"
        status, game = http_json("POST", web.url + "/games", {"players": 2, "seed": 3})
        assert game["legal"][0]["description"] == "Patriarch, caravan 1: draw 3 Standard cards and keep one"
        status, after = http_json("POST", web.url + "/apply", {"state": game["state"], "decision": "c0:a"})
        assert status == 200, after
        assert sum(1 for e in after["events"] if e["event"] == "card" and e["to"] == "drawn") == 3
    with Gunicorn(env=ENV, workers=1, log_dir=str(tmp_path)) as web:  # the package's file
        status, health = http_json("GET", web.url + "/healthz")
        assert health["cards"]["sha256"] == engine_ext.get_engine().data.sha256 != sha


def test_workers_must_play_the_same_card_file(tmp_path: Path) -> None:
    path = _corrected(tmp_path)
    state = engine_ext.new_game(players=2, seed=5).to_json(observer=0)
    ask = {"state": state, "iterations": 200, "seed": 1, "mode": "async", "parallel": 1}
    with RedisServer(log_dir=str(tmp_path)) as redis:
        env = dict(ENV, KASHGAR_REDIS_URL=redis.url)
        with Gunicorn(env=dict(env, KASHGAR_CARDS=str(path)), workers=1, log_dir=str(tmp_path)) as web:
            with Worker(redis.url, env=env, log_dir=str(tmp_path), extra_args=["--cards", str(path)]):
                status, accepted = http_json("POST", web.url + "/suggest", ask)
                assert status == 202, accepted
                job = _wait_job(web.url + accepted["status_url"])
                assert job["status"] == "finished", job
                assert job["result"]["description"]
            with Worker(redis.url, env=env, log_dir=str(tmp_path)):  # the package's cards
                status, accepted = http_json("POST", web.url + "/suggest", dict(ask, seed=2))
                job = _wait_job(web.url + accepted["status_url"])
                assert job["status"] == "failed", job
                said = job["error"] + " ".join(str(a.get("error")) for p in job["parts"] for a in p["history"])
                assert "other card data" in said and "KASHGAR_CARDS" in said, job
