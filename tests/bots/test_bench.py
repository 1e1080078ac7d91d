"""`kashgar bench search`: measures our search (default settings or a given level/spec) on the six
fixed positions and the tree run."""

from __future__ import annotations

import argparse
import json

import pytest

from kashgar_cli import bench_search


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", action="store_true")
    bench_search.add_arguments(parser)
    return parser.parse_args(list(argv))


@pytest.mark.parametrize("bot", ["", "ismcts:macro=1,rollout=turn", "novice"])
def test_bench_search_measures_the_given_settings(capsys: pytest.CaptureFixture[str], bot: str) -> None:
    args = _args("--json", "--no-openspiel", "--search-iterations", "120", "--tree-iterations", "300",
                 *(["--bot", bot] if bot else []))
    assert bench_search.run(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bot"] == (bot or "ismcts")
    assert [(r["players"], r["position"]) for r in out["positions"]] == [
        (n, pos) for n in (2, 3, 4) for pos in ("opening", "midgame")]
    assert all(r["iterations"] == 120 and r["ours_it_per_s"] > 0 and r["tree_nodes"] > 1
               for r in out["positions"])
    assert out["tree"]["iterations"] == 300


def test_bench_search_refuses_a_bot_that_is_not_a_search() -> None:
    with pytest.raises(SystemExit, match="want a level or an ismcts"):
        bench_search.run(_args("--no-openspiel", "--bot", "greedy"))
