"""A game review on the real stack through a worker's fault and a Redis restart
(`loadtests.faults.review_faults`): `redis-server` with an append-only file in a temporary
directory, two `kashgar worker`s, gunicorn. A work horse SIGKILLed by its pid while it reviews a
part uses that part's first attempt; Redis SIGKILLed and started again while the retried part runs
uses none (the worker and its horse go on through the lost connection): with two attempts a part,
the review finished with every decision, where it failed with `result: null`."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtests.faults import review_faults, short_record

pytestmark = pytest.mark.e2e


def test_a_review_loses_nothing_to_a_killed_horse_and_a_redis_restart(tmp_path: Path) -> None:
    # master: a part (4 decisions, 2 searches each) runs long enough to be caught mid-way
    out = review_faults(str(tmp_path), short_record(20, seed=61), level="master", redis_down=3.0)
    assert out["status"] == "finished", out
    assert out["decisions_reviewed"] == out["decisions_total"] > 4 and out["missing"] == [], out
    assert out["decisions_lost"] == 0
    # the horse's death used one attempt of one part, the Redis restart none
    assert out["attempts_used"] == 1 and out["attempts_used_by_redis_restart"] == 0, out["history"]
    retried = str(out["retried_part"])
    assert out["attempts"][retried] == 2 and all(a == 1 for i, a in out["attempts"].items() if i != retried), out
    assert out["rq_workers_alive_after"] == 2, out  # the killed horse's worker, and both through the restart
