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


def _timeline(down: tuple[float, float], until: float, every: float = 0.5) -> list[tuple[float, int, str]]:
    """Probes every `every` s, not ready (503) while t is in [down[0], down[1])."""
    n = int(until / every)
    return [(k * every, 503 if down[0] <= k * every < down[1] else 200, "") for k in range(n)]


def test_the_simulated_kubelet_counts_failures_a_period_apart() -> None:
    """Not ready for 30 s: at most 3 failing probes 10 s apart, the pod stays in the Service; for
    70 s: 7 in a row at every phase, out of it (deploy/k8s/web.yaml: 10 s x 6)."""
    from loadtests.outage import kubelet

    short = kubelet(_timeline((10.0, 40.0), 60.0))
    assert short["most_failures_in_a_row"] == 3 and short["phases_out_of_service"] == 0, short
    long = kubelet(_timeline((10.0, 80.0), 100.0))
    assert long["most_failures_in_a_row"] == 7 and long["phases_out_of_service"] == long["phases"], long
    edge = kubelet(_timeline((10.0, 65.0), 90.0))  # 55 s: 6 ticks in a row at some phases, 5 at others
    assert 0 < edge["phases_out_of_service"] < edge["phases"], edge
    assert kubelet(_timeline((0.0, 0.0), 30.0))["most_failures_in_a_row"] == 0
    assert kubelet([])["most_failures_in_a_row"] == 0  # no probe at all: no crash


def test_a_redis_outage_keeps_sync_searches_and_readiness_comes_back(tmp_path: Path) -> None:
    """`python -m loadtests.outage` (RELIABILITY: a Redis outage), shortened: Redis killed for 4 s.
    Every sync search answers 200, the health port says not ready within the outage and ready
    again soon after, async submissions are refused with 503 meanwhile, and every job accepted
    (one may be running when Redis dies) finishes."""
    from loadtests.outage import run

    out = run(down=4.0, before=3.0, after=4.0, web_workers=1, recover_s=5.0, log_dir=str(tmp_path / "logs"))
    assert out["problems"] == [], out
    assert out["sync_searches"]["answered_200"] > 0 and out["jobs_accepted"] >= 2, out
    assert out["not_ready_after_s"] is not None and out["not_ready_after_s"] <= 3.0, out
