"""The Python client (`service.client.KashgarClient`) against the service over real HTTP."""

from __future__ import annotations

import time

import pytest

from service.client import JobFailed, KashgarClient


def test_the_client_asks_for_a_seat_s_view(service_url: str) -> None:
    api = KashgarClient(service_url)
    full = api.new_game(players=2, seed=4)["state"]
    view = api.legal(full, observer=1)["state"]
    assert view["observer"] == 1 and view == api.new_game(players=2, seed=4, observer=1)["state"]
    assert "state" not in api.legal(full)


def test_waiting_on_a_cancelled_job_gives_what_its_parts_searched(service_url: str) -> None:
    """A cancelled job is `cancelled` at once, but a running part stops only at its next check and
    its partial result comes after: `wait` raised on the first `cancelled` it saw, with no result.
    Now it waits until every part has stopped."""
    api = KashgarClient(service_url)
    state = api.new_game(players=2, seed=4)["state"]
    accepted = api.suggest(state, time_ms=20_000, mode="async", parallel=2, wait=False)
    job_id = accepted["job_id"]
    deadline = time.monotonic() + 30
    while api.job(job_id)["progress"]["iterations"] < 200:  # both parts are searching
        assert time.monotonic() < deadline, api.job(job_id)
        time.sleep(0.05)
    cancelled = api.cancel(job_id)
    assert cancelled["status"] == "cancelled"
    with pytest.raises(JobFailed) as failed:
        api.wait(job_id, poll_interval=0.05, timeout=30)
    job = failed.value.job
    assert job["status"] == "cancelled" and job["progress"]["parts_done"] == job["progress"]["parts_total"] == 2
    assert job["result"]["partial"] is True and job["result"]["iterations"] >= 200
    assert "partial result" in str(failed.value)
