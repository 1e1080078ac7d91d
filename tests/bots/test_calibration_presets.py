"""A fit of win_prob holds for the search it was made with: stored presets against a level's search
now (`bots.win_prob.same_preset`), settings added and retired since included."""

from __future__ import annotations

from typing import Any

import pytest

from bots import win_prob
from bots.levels import get_level, load_levels


def test_a_fit_saved_before_a_setting_existed_holds_for_it_at_its_default() -> None:
    """A preset stored without a setting added since is the same search with that setting at its
    default; with another value, the fit does not hold."""
    master = get_level("master")
    stored = {k: v for k, v in win_prob.preset_of(master).items() if k != "eps"}
    assert win_prob.same_preset(stored, master)
    assert not win_prob.same_preset({**stored, "eps": 0.3}, master)
    assert not win_prob.same_preset({**stored, "iterations": 1}, master)
    assert not win_prob.same_preset(None, master)


@pytest.mark.parametrize(("setting", "other"), [("observe", 1), ("tree_depth", 3), ("tempo", 0.25)])
def test_a_retired_setting_at_the_value_that_searched_as_now_still_matches(setting: str, other: Any) -> None:
    """Records and fits made while the search had a setting it has no more name it: at the value
    that searched as the search does now it is the same search; at another it is not."""
    master = get_level("master")
    stored = win_prob.preset_of(master)
    assert setting not in stored
    assert win_prob.same_preset({**stored, setting: win_prob.RETIRED_SETTINGS[setting]}, master)
    assert not win_prob.same_preset({**stored, setting: other}, master)
    assert win_prob.same_preset({**stored, "compiled": True}, master)  # the build never changed an answer


def test_every_shipped_fit_holds_for_its_level_and_names_no_retired_setting() -> None:
    doc = win_prob.load_calibration()
    for lv in load_levels():
        for players in (2, 3, 4):
            entry = doc["levels"][lv.name][str(players)]
            assert not set(entry["preset"]) & set(win_prob.RETIRED_SETTINGS)
            assert entry["preset"] == win_prob.preset_of(lv)
            assert win_prob.weights_for(lv, players) == entry["weights"]


def test_runs_saved_before_a_setting_retired_merge_with_runs_saved_after() -> None:
    from lab.calibrate import Record, merge_records

    now = win_prob.preset_of(get_level("master"))
    before = {**now, **win_prob.RETIRED_SETTINGS}
    runs = [({"level": "master", "players": 2, "preset": preset, "games": 1, "seed": seed},
             [Record(seed, 0.5, 0.5, 1, 0)]) for seed, preset in ((10, before), (11, now))]
    header, records = merge_records(runs)
    assert header["games"] == 2 and len(records) == 2
    with pytest.raises(ValueError, match="another preset"):
        merge_records([runs[0], ({**runs[1][0], "preset": {**now, "iterations": 1}}, runs[1][1])])
