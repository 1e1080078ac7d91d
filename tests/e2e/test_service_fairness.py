"""One client's pressure on the real gunicorn of `kashgar serve` (2 web workers, no proxy) leaves
another client answered at once (`loadtests/fairness.py`, the probes of RELIABILITY.md at a smaller
scale): a client's waiting synchronous searches count against it, so the excess is refused at
once instead of queueing, and one address's slow keep-alive connections hold a bounded share of
the threads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lab.serving import Gunicorn
from loadtests import fairness

pytestmark = pytest.mark.e2e

BYSTANDER = "127.0.0.3"  # another client: a loopback address of its own


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    with Gunicorn(env={"KASHGAR_LOG_LEVEL": "WARNING"}, workers=2,
                  log_dir=str(tmp_path_factory.mktemp("fairness"))) as g:
        yield g


@pytest.fixture(scope="module")
def state(web: Gunicorn) -> dict[str, Any]:
    status, _, game = fairness.request("127.0.0.1", web.port, "POST", "/games",
                                       {"players": 2, "seed": 3, "observer": 0})
    assert status == "200", game
    return dict(game["state"])


def test_a_client_s_queued_sync_searches_count_against_it(web: Gunicorn, state: dict[str, Any]) -> None:
    """16 concurrent 2 s searches from one client with its 8 search-seconds: 4 run (one after the
    other in each process), the other 12 are refused with 429 at once; another client's novice
    search and health check stay under a second throughout."""
    with fairness.Bystander("127.0.0.1", web.port, state, BYSTANDER) as other:
        out = fairness.flood("127.0.0.1", web.port, state, 16, 2000)
    by = out["by_status"]
    assert set(by) == {"200", "429"} and by["200"]["n"] == 4 and by["429"]["n"] == 12, out
    assert by["429"]["max_s"] < 1.0, out  # refused at once, not after waiting behind the others
    assert set(out["errors"]) <= {"sync_client_limit", "too_many_requests"}, out
    seen = other.report()
    assert seen["statuses"] == {"200": sum(s["n"] for s in (seen["suggest"], seen["healthz"]))}, seen
    assert seen["suggest"]["n"] >= 5 and seen["suggest"]["max_s"] < 1.0 and seen["healthz"]["max_s"] < 1.0, seen


def test_slow_keep_alive_clients_of_one_address_leave_the_others_answered(web: Gunicorn,
                                                                          state: dict[str, Any]) -> None:
    """24 keep-alive connections of one address, each sending a valid request over 3 s again and
    again: that address holds 8 of each process's threads (the rest are refused with 429), and
    another client's answers stay under a second."""
    with fairness.Bystander("127.0.0.1", web.port, state, BYSTANDER) as other:
        out = fairness.keepalive("127.0.0.1", web.port, state, 24, 3.0, 8.0)
    assert out["answers"].get("200", 0) >= 8, out  # the slow ones within the bound are served
    assert sum(n for k, n in out["answers"].items() if k != "200") > 0, out  # those past it were refused
    seen = other.report()
    assert set(seen["statuses"]) == {"200"}, seen
    assert seen["suggest"]["p99_s"] < 1.0 and seen["healthz"]["p99_s"] < 1.0, seen
