"""An operator's own ladder: a level file placed by a real `kashgar tune`, then served with
KASHGAR_LEVELS. The default in use is explicit (named by the file, marked in /levels, a file
without it refused at start), `kashgar tune` says what to run for win_prob, a step won without a
lost game is a bound, and `elo` works on the operator's ladder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine_ext
from bots.levels import Level, default_level, load_levels
from lab.serving import Gunicorn, http_json
from lab.tune import Step, _rated, markdown_table, written_default

ROOT = Path(__file__).resolve().parents[2]
PRESETS = """
[[level]]
name = "easy"
iterations = 4
depth = 0
evaluator = "vp"
temperature = 1.0
margin = 1.0

[[level]]
name = "medium"
iterations = 12
depth = 1
evaluator = "vp"
temperature = 1.0
margin = 0.5

[[level]]
name = "hard"
iterations = 60
temperature = 0.0
"""


def _kashgar(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full = {**{k: v for k, v in os.environ.items() if not k.startswith("KASHGAR_")}, **(env or {})}
    full["PYTHONPATH"] = str(ROOT) + os.pathsep + full.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-m", "kashgar_cli.main", *argv], capture_output=True, text=True,
                          env=full, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The three presets placed by `kashgar tune -n 12` (a few seconds), and what it printed."""
    tmp = tmp_path_factory.mktemp("ladder")
    src = tmp / "my.toml"
    src.write_text(PRESETS)
    out = tmp / "my-tuned.toml"
    proc = _kashgar("tune", "--levels", str(src), "--out", str(out), "--report-dir", str(tmp / "rep"),
                    "-n", "12", "-j", "1", "--max-rounds", "0", "--seed", "77")
    assert proc.returncode == 0, proc.stderr
    return out, proc.stdout


def test_tune_names_the_default_and_says_what_to_run_for_win_prob(tuned: tuple[Path, str]) -> None:
    out, printed = tuned
    assert default_level(path=out) == "hard"  # the file names it: no `expert` in it, its strongest
    assert 'default = "hard"' in out.read_text()
    assert "default level: hard" in printed
    assert "win_prob: no calibration of easy, medium, hard" in printed
    assert f"KASHGAR_LEVELS={out} kashgar calibrate --levels easy,medium,hard" in printed


def test_a_step_won_without_a_lost_game_is_stored_as_a_bound() -> None:
    base = load_levels()[0].config
    ladder = [Level(n, "", base.with_(iterations=i)) for n, i in (("a", 2), ("b", 8), ("c", 32))]
    steps = [Step("a", "b", 0, 8, 1.0, 60, 1.0, 1600.0, 476.0, 1600.0, True, swept=True),
             Step("b", "c", 0, 32, 0.0, 60, 0.7, 147.0, 60.0, 240.0, True)]
    rated = _rated(ladder, steps)
    assert rated[0].elo == 0.0
    assert rated[1].elo is None and rated[1].elo_lower_bound == 476.0  # not +1600
    assert rated[2].elo is None and rated[2].elo_lower_bound == 536.0
    table = markdown_table(rated, steps)
    assert ">= +476 (won all 60 games)" in table and "1600" not in table.split("| match")[0]
    assert written_default(None, rated) == "c"


def test_a_real_sweep_is_reported_and_stored_as_a_bound(tmp_path: Path) -> None:
    src = tmp_path / "sweep.toml"
    src.write_text('[[level]]\nname = "wild"\niterations = 1\nevaluator = "vp"\ndepth = 0\ntemperature = 1.0\n'
                   '[[level]]\nname = "steady"\niterations = 40\ntemperature = 0.0\n')
    out = tmp_path / "out.toml"
    proc = _kashgar("tune", "--levels", str(src), "--out", str(out), "--report-dir", str(tmp_path / "rep"),
                    "-n", "8", "-j", "1", "--max-rounds", "0", "--seed", "5")
    assert proc.returncode == 0, proc.stderr
    steps = json.loads((tmp_path / "rep" / "ladder.json").read_text())["steps"]
    steady = load_levels(out)[1]
    if steps[0]["swept"]:  # 8 games of a search against a random pick: a sweep (the seed gives one)
        assert "won all 8 games: at least" in proc.stderr and "won without a lost game" in proc.stdout
        assert steady.elo is None and steady.elo_lower_bound == pytest.approx(steps[0]["low"], abs=0.1)
    else:
        assert steady.elo is not None and steady.elo_lower_bound is None


def test_a_level_file_without_the_default_is_refused_at_start(tmp_path: Path) -> None:
    bare = tmp_path / "bare.toml"
    bare.write_text(PRESETS)
    with pytest.raises(ValueError, match="names no default level and has no 'expert'"):
        default_level(path=bare)
    proc = _kashgar("serve", "--dry-run", env={"KASHGAR_LEVELS": str(bare)})
    assert proc.returncode == 2 and "add `default = \"NAME\"`" in proc.stderr, proc.stderr
    proc = _kashgar("engine", env={"KASHGAR_LEVELS": str(bare)})
    assert proc.returncode == 2 and "names no default level" in proc.stderr
    named = tmp_path / "named.toml"
    named.write_text('default = "medium"\n' + PRESETS)
    assert default_level(path=named) == "medium"
    proc = _kashgar("serve", "--dry-run", env={"KASHGAR_LEVELS": str(named), "KASHGAR_DEFAULT_LEVEL": "expert"})
    assert proc.returncode == 2 and "KASHGAR_DEFAULT_LEVEL='expert' is not a level of" in proc.stderr
    wrong = tmp_path / "wrong.toml"
    wrong.write_text('default = "nobody"\n' + PRESETS)
    with pytest.raises(ValueError, match="default must name one of the file's levels"):
        load_levels(wrong)


@pytest.fixture(scope="module")
def served(tuned: tuple[Path, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    out, _ = tuned
    env = {"KASHGAR_LEVELS": str(out), "KASHGAR_LOG_LEVEL": "WARNING"}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path_factory.mktemp("logs"))) as web:
        yield web.url


@pytest.mark.e2e
def test_the_operator_s_ladder_is_served_with_its_default_and_its_elo_range(tuned: tuple[Path, str],
                                                                            served: str) -> None:
    out, _ = tuned
    levels = load_levels(out)
    status, doc = http_json("GET", served + "/levels")
    assert status == 200 and doc["default"] == "hard"
    assert [lv["name"] for lv in doc["levels"] if lv["default"]] == ["hard"]
    rated = [lv.elo for lv in levels if lv.elo is not None]
    assert doc["elo"] == ({"min": min(rated), "max": max(rated)} if len(rated) >= 2 else None)
    view = engine_ext.new_game(players=2, seed=3).to_json(observer=0)
    status, a = http_json("POST", served + "/suggest", {"state": view, "seed": 1})
    assert status == 200 and a["level"] == "hard"  # the default in use, the one /levels marks
    assert a["win_prob"] is None  # no calibration of these presets (kashgar tune said what to run)
    if doc["elo"] is not None:
        mid = (doc["elo"]["min"] + doc["elo"]["max"]) / 2
        status, a = http_json("POST", served + "/suggest", {"state": view, "elo": mid, "seed": 1})
        assert status == 200 and a["elo"] == mid and a["level"] in {lv.name for lv in levels}
    status, err = http_json("POST", served + "/suggest", {"state": view, "elo": 5000})
    assert status == 422 and err["pointer"] == "/elo"
