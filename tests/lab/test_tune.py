"""The tuner writes a loadable level file, the tables and the plot (on the toy game, tiny budgets)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bots.ismcts_bot import ISMCTSConfig
from bots.levels import Level, dump_levels, load_levels
from lab.tune import tune


def _toy_presets(levels: list[Level], tmp_path: Path) -> tuple[list[Level], Path]:
    """`levels` with budgets cut 40-fold for the toy game, and the level file holding them."""
    base = ISMCTSConfig(evaluator="vp")  # one search for all (the toy game has no turns to macro)
    small = [Level(lv.name, lv.description, base.with_(iterations=max(2, lv.config.iterations // 40),
                                                       temperature=lv.config.temperature))
             for lv in levels]
    src = tmp_path / "in.toml"
    src.write_text(dump_levels(small))
    return small, src


def test_tune_writes_ladder(tmp_path: Path) -> None:
    small, src = _toy_presets(load_levels()[:3], tmp_path)
    out = tmp_path / "levels.toml"
    doc = tune(levels_in=str(src), levels_out=out, out_dir=tmp_path / "rep", games=16, max_rounds=1,
               game="toy")
    tuned = load_levels(out)
    assert [lv.name for lv in tuned] == [lv.name for lv in small]
    assert tuned[0].elo == 0.0
    assert all(lv.elo is not None for lv in tuned)
    assert json.loads((tmp_path / "rep" / "ladder.json").read_text())["levels"][0]["name"] == "novice"
    assert "| level |" in (tmp_path / "rep" / "ladder.md").read_text()
    assert doc["plot"] is False or (tmp_path / "rep" / "ladder.png").stat().st_size > 1000


def test_a_preset_is_lifted_above_a_strengthened_lower_level() -> None:
    from lab.tune import above

    base = load_levels()[0]
    lower = Level("low", "", base.config.with_(iterations=200, temperature=0.4))
    weak = Level("up", "", base.config.with_(iterations=150, temperature=0.5))
    lifted = above(lower, weak, 2.0)
    assert lifted.config.iterations == 400 and lifted.config.temperature == 0.2
    strong = Level("up", "", base.config.with_(iterations=1000, temperature=0.0))
    assert above(lower, strong, 2.0) is strong


def test_top_down_tuning_keeps_the_strongest_preset_and_weakens_below(tmp_path: Path) -> None:
    small, src = _toy_presets(load_levels()[-3:], tmp_path)
    out = tmp_path / "levels.toml"
    doc = tune(levels_in=str(src), levels_out=out, out_dir=tmp_path / "rep", games=16, max_rounds=1,
               game="toy", from_top=True)
    tuned = load_levels(out)
    assert [lv.name for lv in tuned] == [lv.name for lv in small]
    assert tuned[-1].config == small[-1].config  # the anchor is played as given
    for got, given in zip(tuned[:-1], small[:-1], strict=True):
        assert got.config.iterations <= given.config.iterations
    for lower, upper in zip(tuned, tuned[1:], strict=False):
        assert upper.config.iterations > lower.config.iterations  # one shrink step at least
    assert tuned[0].elo == 0.0 and doc["from_top"] is True
    steps = json.loads((tmp_path / "rep" / "ladder.json").read_text())["steps"]
    assert {(s["lower"], s["upper"]) for s in steps} == {(a.name, b.name) for a, b in zip(tuned, tuned[1:],
                                                                                            strict=False)}


def test_a_preset_is_lowered_below_its_upper_level() -> None:
    from lab.tune import below, weaken

    base = load_levels()[0]
    upper = Level("up", "", base.config.with_(iterations=400, temperature=0.0))
    cur = Level("low", "", base.config.with_(iterations=300, temperature=0.0))
    lowered = below(upper, cur, 2.0)
    assert lowered.config.iterations == 200 and lowered.config.temperature == 0.05
    weak = Level("low", "", base.config.with_(iterations=50, temperature=0.5))
    assert below(upper, weak, 2.0) is weak
    w2 = weaken(weak, 2.0)
    assert w2.config.iterations == 25 and w2.config.temperature == 1.0
    w3 = weaken(weak, 2.0, floor=40)  # at the floor only the temperature rises
    assert w3.config.iterations == 40 and w3.config.temperature == 1.0
    assert below(upper, cur, 8.0, floor=100).config.iterations == 100
    hot = Level("low", "", base.config.with_(iterations=16, temperature=0.8))
    assert weaken(hot, 2.0, floor=16).config.temperature == 1.0  # capped at 1 by default
    top = weaken(weaken(hot, 2.0, floor=16), 2.0, floor=16)
    assert top.config.temperature == 1.0
    assert weaken(top, 2.0, floor=16) is top  # nothing left to lower


def test_presets_of_another_search_are_played_as_given() -> None:
    from lab.tune import above, below, same_search

    plain = ISMCTSConfig(iterations=1000, temperature=0.0)
    macro = Level("expert", "", plain.with_(iterations=150, temperature=0.1, macro=1, rollout="turn"))
    upper = Level("master", "", plain.with_(iterations=3000, macro=1, rollout="turn"))
    lower = Level("advanced", "", plain.with_(iterations=400, temperature=0.05))
    assert same_search(macro, upper) and not same_search(lower, macro)
    assert below(macro, lower, 2.0) is lower  # not clamped to 75 iterations by the macro search's 150
    assert above(lower, macro, 2.0) is macro
    assert below(upper, macro, 2.0) is macro  # already a shrink step below: as given
    assert below(upper, Level("x", "", upper.config.with_(iterations=2000)), 2.0).config.iterations == 1500


def test_a_finer_grow_takes_finer_steps() -> None:
    from lab.tune import above, below, weaken

    base = load_levels()[0].config
    lv = Level("x", "", base.with_(iterations=200, temperature=0.1))
    w = weaken(lv, 1.4, floor=16)
    assert w.config.iterations == 142 and w.config.temperature == 0.14
    upper = Level("up", "", base.with_(iterations=1000, temperature=0.0))
    assert below(upper, Level("e", "", base.with_(iterations=900, temperature=0.0)), 1.4).config.iterations == 714
    lifted = above(lv, Level("y", "", base.with_(iterations=100, temperature=0.5)), 1.4)
    assert lifted.config.iterations == 280 and lifted.config.temperature == 0.0714


@pytest.mark.parametrize("from_top", [True, False])
def test_the_step_below_the_strongest_level_plays_its_own_number_of_games(tmp_path: Path,
                                                                          from_top: bool) -> None:
    from lab.tune import place_levels

    small, _ = _toy_presets(load_levels()[:3], tmp_path)
    _, steps = place_levels(small, games=10, top_games=4, max_rounds=0, game="toy", from_top=from_top)
    games = {(s.lower, s.upper): s.games for s in steps}
    assert games == {("novice", "beginner"): 10, ("beginner", "casual"): 4}
    _, steps = place_levels(small, games=6, max_rounds=0, game="toy", from_top=from_top)
    assert [s.games for s in steps] == [6, 6]


def test_verify_measures_each_step_once_and_changes_no_preset(tmp_path: Path) -> None:
    small, src = _toy_presets(load_levels()[:3], tmp_path)
    # presets the calibrating modes would change: equal budgets, and the top one hotter than the middle
    given = [Level(lv.name, lv.description, lv.config.with_(iterations=4, temperature=t))
             for lv, t in zip(small, (1.0, 0.2, 0.5), strict=True)]
    src.write_text(dump_levels(given))
    out = tmp_path / "levels.toml"
    doc = tune(levels_in=str(src), levels_out=out, out_dir=tmp_path / "rep", games=8, top_games=6,
               max_rounds=3, game="toy", verify=True, seed=11)
    tuned = load_levels(out)
    assert [lv.config for lv in tuned] == [lv.config for lv in given]
    steps = json.loads((tmp_path / "rep" / "ladder.json").read_text())["steps"]
    assert [(s["lower"], s["upper"], s["round"], s["games"]) for s in steps] == [
        ("novice", "beginner", 0, 8), ("beginner", "casual", 0, 6)]
    assert doc["verify"] is True and "verified" in out.read_text()
    assert tuned[1].elo == pytest.approx(steps[0]["elo"], abs=0.05)  # the file holds one decimal
    assert tuned[2].elo == pytest.approx(steps[0]["elo"] + steps[1]["elo"], abs=0.1)
