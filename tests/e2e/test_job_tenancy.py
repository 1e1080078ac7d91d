"""The tenancy probe on real servers: two `kashgar serve` on one machine with the default job store
(no KASHGAR_DATA_DIR nor KASHGAR_JOBS_DB: `$XDG_DATA_HOME/kashgar`), one with API keys and one
without. The keyless server does not see the keyed server's job (it shared one file with it, and
served its jobs to anyone); on the keyed one another key gets the 404 of an unknown job."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from lab.serving import Gunicorn, http_json

pytestmark = pytest.mark.e2e

KEY_A, KEY_B = "keyA1234567", "keyB1234567"


def as_key(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def test_a_server_without_keys_does_not_see_the_keyed_server_s_job(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    # KASHGAR_DATA_DIR empty: the servers take the user's default data directory, as a user's would
    base = {"KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_JOBS_DB": "", "KASHGAR_DATA_DIR": "", "XDG_DATA_HOME": str(xdg),
            "KASHGAR_REDIS_URL": "", "KASHGAR_API_KEYS_FILE": ""}
    state: dict[str, Any] = dict(engine_ext.new_game(players=2, seed=5).to_json(observer=0))
    long_job = {"state": state, "time_ms": 60_000, "parallel": 1, "mode": "async"}
    keyed = Gunicorn(env=dict(base, KASHGAR_API_KEYS=f"{KEY_A},{KEY_B}"), workers=1, log_dir=str(tmp_path))
    with keyed, Gunicorn(env=dict(base, KASHGAR_API_KEYS=""), workers=1, log_dir=str(tmp_path)) as keyless:
        status, job = http_json("POST", keyed.url + "/suggest", long_job, headers=as_key(KEY_A))
        assert status == 202, job
        path = job["status_url"]
        try:
            status, body = http_json("GET", keyless.url + path)
            assert status == 404 and body["error"] == "not_found", body
            assert http_json("DELETE", keyless.url + path)[0] == 404
            status, body = http_json("GET", keyed.url + path, headers=as_key(KEY_B))
            assert status == 404 and body["error"] == "not_found", body
            assert http_json("GET", keyed.url + path + "/events", headers=as_key(KEY_B))[0] == 404
            assert http_json("DELETE", keyed.url + path, headers=as_key(KEY_B))[0] == 404
            status, own = http_json("GET", keyed.url + path, headers=as_key(KEY_A))
            assert status == 200 and own["status"] in ("queued", "started"), own
        finally:
            status, gone = http_json("DELETE", keyed.url + path, headers=as_key(KEY_A))
        assert status == 200 and gone["status"] == "cancelled", gone
    data = xdg / "kashgar"
    stores = sorted(p.name for p in data.glob("jobs-*.sqlite"))
    assert stores == sorted(f"jobs-127.0.0.1-{web.port}.sqlite" for web in (keyed, keyless)), stores
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in data.iterdir()), list(data.iterdir())
