"""Hostile input, bounded: hypothesis-generated and mutated states and decisions (valid, subtly
illegal, garbage) against /suggest, /legal and /apply on a real gunicorn: every answer a 2xx or a
clear 4xx, never a 5xx, each within the time bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtests import hostile
from loadtests.stack import start_stack

pytestmark = pytest.mark.e2e


def test_hostile_input_never_5xx(tmp_path: Path) -> None:
    with start_stack(web_workers=2, redis=False, log_dir=tmp_path) as stack:
        tally = hostile.run(stack.url, examples=150, seed=5, time_limit_s=5.0, deadline_s=60.0)
    s = tally.summary()
    assert tally.violations == [], tally.violations[:5]
    assert s["requests"] >= 100
    assert not any(k.startswith("5") for k in s["statuses"]), s
    classes = {k.split()[0] for k in s["by_class_endpoint"]}
    assert classes == {"valid", "subtle", "garbage"}
    assert s["statuses"].get("2xx", 0) > 0 and s["statuses"].get("4xx", 0) > 0
    assert tally.valid_rejected == [], tally.valid_rejected[:5]
    assert s["statuses"].get("413") == 3  # the oversized body, once per endpoint
