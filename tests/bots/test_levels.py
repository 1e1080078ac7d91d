"""The level file's validation and bot specs: a bad level or setting is refused, naming it; the
file is parsed once, and again when it changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bots.ismcts_bot import ISMCTSConfig
from bots.levels import levels_path, load_levels, parse_levels
from lab.bots import make_bot


def test_greedy_refuses_a_sample_count_of_zero() -> None:
    with pytest.raises(ValueError, match="samples"):
        make_bot("greedy:samples=0")
    with pytest.raises(ValueError, match="worlds"):
        make_bot("det:worlds=1.5")


@pytest.mark.parametrize(("row", "field"), [
    ({"elo": "high"}, "elo"),
    ({"elo_ci": True}, "elo_ci"),
    ({"temperature": 5.0}, "temperature"),
    ({"evaluator": "nope"}, "evaluator"),
    ({"description": 3}, "description"),
])
def test_a_bad_level_is_refused_naming_the_level_and_the_field(row: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"level 'x': {field} must be"):
        parse_levels({"level": [{"name": "x", "iterations": 10, **row}]})


def test_a_repeated_level_name_is_refused() -> None:
    with pytest.raises(ValueError, match="level 'x': name repeated"):
        parse_levels({"level": [{"name": "x", "iterations": 10}, {"name": "x", "iterations": 300}]})


def test_an_unknown_evaluator_is_refused_in_the_spec() -> None:
    with pytest.raises(ValueError, match="evaluator must be one of"):
        make_bot("ismcts:evaluator=nope")


def test_level_to_dict_has_every_setting() -> None:
    d = parse_levels({"level": [{"name": "x", "eps": 0.2, "macro": 1, "weights": "w.json"}]})[0].to_dict()
    assert (d["eps"], d["macro"], d["weights"]) == (0.2, 1, "w.json")
    assert set(ISMCTSConfig().to_dict()) <= set(d)


@pytest.mark.parametrize("setting", ["observe=1", "tree_depth=2", "tempo=0.5", "compiled=true", "rollout=greedy",
                                     "rollout=playout"])
def test_settings_the_search_no_longer_has_are_refused(setting: str) -> None:
    with pytest.raises(ValueError, match=setting.split("=")[0]):
        make_bot(f"ismcts:{setting}")
    if not setting.startswith("rollout"):
        with pytest.raises(ValueError, match="unknown fields"):
            parse_levels({"level": [{"name": "x", setting.split("=")[0]: 1}]})


def test_a_level_file_changed_in_place_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "levels.toml"
    path.write_text(levels_path().read_text())
    first = load_levels(path)
    assert load_levels(path) == first  # parsed once, read from memory
    text = path.read_text().replace(f'name = "{first[0].name}"', 'name = "renamed"', 1)
    path.write_text(text)
    assert load_levels(path)[0].name == "renamed"
