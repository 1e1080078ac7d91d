"""The tuner writes a loadable level file, the tables and the plot (on the toy game, tiny budgets)."""

from __future__ import annotations

import json
from pathlib import Path

from bots.levels import Level, dump_levels, load_levels
from bots.tune import tune


def test_tune_writes_ladder(tmp_path: Path) -> None:
    small = [Level(lv.name, lv.description, lv.config.with_(iterations=max(2, lv.config.iterations // 40),
                                                            evaluator="vp"))
             for lv in load_levels()[:3]]
    src = tmp_path / "in.toml"
    src.write_text(dump_levels(small))
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
    from bots.tune import above

    base = load_levels()[0]
    lower = Level("low", "", base.config.with_(iterations=200, temperature=0.4))
    weak = Level("up", "", base.config.with_(iterations=150, temperature=0.5))
    lifted = above(lower, weak, 2.0)
    assert lifted.config.iterations == 400 and lifted.config.temperature == 0.2
    strong = Level("up", "", base.config.with_(iterations=1000, temperature=0.0))
    assert above(lower, strong, 2.0) is strong
