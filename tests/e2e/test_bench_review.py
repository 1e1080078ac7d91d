"""`kashgar bench review`: one review timed on the embedded queue and on RQ workers of a real stack
(gunicorn, redis-server, `kashgar worker`); every configuration reviews the whole record."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from service import review
from tests.builders import bot_record

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def test_the_review_bench_times_every_queue_on_the_whole_record(tmp_path: Path) -> None:
    record = bot_record(51, moves=24)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    out = subprocess.run([sys.executable, "-m", "kashgar_cli.main", "bench", "review", "--record", str(path),
                          "--review-level", "novice", "--review-workers", "1,2", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    decisions = len(review.plan(record, "novice", None, 0).moves)
    assert [(r["queue"], r["workers"], r["decisions"]) for r in report["rows"]] == [
        ("embedded", 1, decisions), ("redis", 1, decisions), ("redis", 2, decisions)]
    assert all(r["wall_s"] > 0 for r in report["rows"]) and report["rows"][1]["speedup_vs_1_worker"] == 1.0
