"""A short locust run (about 20 s) of the full traffic mix against a real stack on loopback
(redis-server, gunicorn, an RQ worker): any failed request fails the build."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtests.stack import run_locust, start_stack

pytestmark = pytest.mark.e2e


def test_locust_smoke_no_failed_request(tmp_path: Path) -> None:
    with start_stack(web_workers=2, rq_workers=1, log_dir=tmp_path / "logs") as stack:
        res = run_locust(
            stack.url,
            users=6,
            spawn_rate=6,
            run_time="20s",
            name="smoke",
            reports=tmp_path,
            env={
                "KASHGAR_LOAD_THINK": "0.2,1",
                "KASHGAR_LOAD_ASYNC_ITERATIONS": "1500",
                "KASHGAR_LOAD_LEVELS": "novice:3,casual:2,club:1",
            },
            timeout=90,
        )
    assert res.rows, res.output[-3000:]
    assert res.failures() == 0, (Path(f"{res.csv_prefix}_failures.csv").read_text(), res.output[-2000:])
    assert res.returncode == 0, res.output[-2000:]
    assert res.count() >= 30
    # every part of the mix ran: sync suggestions, async jobs polled to the end, the rules API
    for name in ("/suggest [novice]", "async search [total]", "/legal", "/apply", "/games"):
        assert res.count(name) > 0, (name, sorted(res.rows))
    assert res.html.exists() and res.html.stat().st_size > 1000


def test_probe_latency_tool_runs(tmp_path: Path) -> None:
    """`python -m loadtests.probes` (BENCHMARKS: health probes under saturation), shortened: with
    the only web worker busy, every probe of the master's health port is answered."""
    from loadtests.probes import run

    out = run(web_workers=1, clients=3, search_ms=600, seconds=6.0, log_dir=str(tmp_path / "logs"))
    assert out["searches"]["answered_200"] > 0 and out["searches"]["other"] == 0, out
    assert out["readyz_health_port"]["answered"] >= 3 and out["readyz_health_port"]["failed"] == 0, out
    assert out["readyz_api_port"]["failed"] == 0, out
