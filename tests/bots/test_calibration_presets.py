"""A fit of win_prob holds for the search it was made with: stored presets against a level's search
now (`bots.win_prob.same_preset`), settings added since included."""

from __future__ import annotations

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


def test_a_setting_the_search_does_not_have_is_no_level_s_preset() -> None:
    """A preset naming a setting the search has no more (records made before it was removed) is
    not taken for a level's search: such records are written again with the preset as it is now."""
    master = get_level("master")
    assert not win_prob.same_preset({**win_prob.preset_of(master), "observe": 0}, master)


def test_every_shipped_fit_holds_for_its_level() -> None:
    """Every level, fitted on its own games, and the preset `grandmaster`, fitted on master's (its
    own self-play costs seconds a decision: `kashgar calibrate --played-by master`)."""
    doc = win_prob.load_calibration()
    for lv in [*load_levels(), get_level("grandmaster")]:
        for players in (2, 3, 4):
            entry = doc["levels"][lv.name][str(players)]
            assert win_prob.same_preset(entry["preset"], lv)  # a setting added since: at its default
            assert win_prob.weights_for(lv, players) == entry["weights"]
            assert entry.get("played_by") == ("master" if lv.name == "grandmaster" else None)
            assert ("--played-by master" in entry["command"]) == (lv.name == "grandmaster")
