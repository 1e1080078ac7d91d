"""Any Elo of the ladder (bots/strength.py): the two levels around it mixed per decision, drawn
from the seed and the position, in the proportion that makes the expected strength the one asked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import engine_ext
from bots.base import position_key
from bots.levels import get_level, load_levels, make_bot, parse_levels
from bots.strength import (
    EloOutOfRange,
    MixedBot,
    elo_of_spec,
    elo_range,
    elo_spec,
    ladder,
    level_for,
    mix_for,
    upper_share,
)


def test_the_range_is_the_weakest_and_the_strongest_level_s_elo() -> None:
    levels = load_levels()
    assert elo_range() == (levels[0].elo, levels[-1].elo)
    assert [lv.name for lv in ladder()] == [lv.name for lv in levels]  # the shipped ladder rises


def test_the_mix_is_of_the_two_levels_around_the_elo_with_the_interpolated_share() -> None:
    club, skilled = get_level("club"), get_level("skilled")
    mix = mix_for(530)
    assert (mix.lower.name, mix.upper.name) == ("club", "skilled")
    if not skilled.extra.get("mix"):  # no measured points: the interpolation
        assert mix.p == pytest.approx((530 - (club.elo or 0)) / ((skilled.elo or 0) - (club.elo or 0)))
    assert mix_for(club.elo or 0).p in (0.0, 1.0)  # a level's own Elo: that level alone
    assert mix_for(0).lower.name == "novice" and mix_for(0).p == 0.0
    top = load_levels()[-1]
    assert mix_for(top.elo or 0).upper.name == top.name and mix_for(top.elo or 0).p == 1.0


@pytest.mark.parametrize("elo", [-1.0, 1e6, float("nan"), float("inf")])
def test_an_elo_off_the_ladder_is_refused_with_the_range(elo: float) -> None:
    lo, hi = elo_range() or (0, 0)
    with pytest.raises(EloOutOfRange, match=f"from {lo:g} to {hi:g}"):
        mix_for(elo)


def test_measured_points_bend_the_curve_and_p_is_read_off_it() -> None:
    lower, upper = get_level("club"), get_level("skilled")
    lo, hi = lower.elo or 0.0, upper.elo or 0.0
    bent = replace(upper, extra={"mix": [(0.5, lo + 0.25 * (hi - lo))]})  # half the decisions: a quarter of the way
    assert upper_share(lo + 0.25 * (hi - lo), lower, bent) == pytest.approx(0.5)
    assert upper_share(lo + 0.125 * (hi - lo), lower, bent) == pytest.approx(0.25)
    assert upper_share(lo + 0.625 * (hi - lo), lower, bent) == pytest.approx(0.75)
    assert upper_share(hi, lower, bent) == 1.0 and upper_share(lo, lower, bent) == 0.0


def test_a_level_file_holds_measured_mix_points_and_refuses_bad_ones() -> None:
    doc = {"level": [{"name": "a", "iterations": 10, "elo": 0.0},
                     {"name": "b", "iterations": 40, "elo": 200.0, "mix": [[0.5, 80.0]]}]}
    assert parse_levels(doc)[1].extra["mix"] == [(0.5, 80.0)]
    for bad in ([[1.5, 80.0]], [[0.5]], "half", [[0.5, "x"]]):
        doc["level"][1]["mix"] = bad
        with pytest.raises(ValueError, match="mix must be a list of"):
            parse_levels(doc)


def test_the_draw_is_the_same_for_the_same_seed_and_position() -> None:
    mix = mix_for(530)
    st = engine_ext.new_game(players=2, seed=3).state
    key = position_key(st)
    draws = [mix.draw(seed, key).name for seed in range(200)]
    assert draws == [mix.draw(seed, key).name for seed in range(200)]
    assert len(set(draws)) == 2  # both levels play
    # another position with the same seed: another, independent draw
    assert [mix.draw(seed, key + 1).name for seed in range(200)] != draws
    assert level_for(530, 7, key).name == mix.draw(7, key).name


@pytest.mark.parametrize("elo", [200.0, 530.0, 950.0])
def test_the_upper_level_searches_a_share_p_of_the_decisions(elo: float) -> None:
    mix = mix_for(elo)
    n = 20_000
    upper = sum(mix.draw(seed, 12345 + seed % 7).name == mix.upper.name for seed in range(n))
    sd = (mix.p * (1 - mix.p) / n) ** 0.5
    assert abs(upper / n - mix.p) < 4 * sd + 1e-9


def test_the_bot_spec_elo_plays_the_drawn_level_s_decision() -> None:
    bot = make_bot("elo:530")
    assert isinstance(bot, MixedBot) and bot.mix.lower.name == "club" and bot.name == "elo:530"
    st = engine_ext.new_game(players=2, seed=5).state
    for seed in range(6):
        chosen = bot.mix.draw(seed, position_key(st))
        a = bot.analyse(st, seed=seed)
        assert a.code == get_level(chosen.name).bot().analyse(st, seed=seed).code
        assert a.bot == f"elo:530/{chosen.name}"
    assert make_bot("elo:530:p=1").mix.p == 1.0  # a share given: to measure the curve
    for spec, msg in (("elo:x", "takes a number"), ("elo:99999", "elo must be from"), ("elo:530:p=2", "p must be")):
        with pytest.raises(ValueError, match=msg):
            make_bot(spec)


def test_the_spec_elo_n_is_read_and_written_once() -> None:
    """`elo:N`: the Elo N of a bot spec (any finite number: the range is the ladder's to check),
    None for a level's name, ValueError for `elo:` and no finite number; written with `:g`."""
    for text, elo in (("elo:640", 640.0), ("elo:516.5", 516.5), ("elo:-20", -20.0), ("elo:1e+03", 1000.0),
                      ("elo:.5", 0.5), ("elo:99999", 99999.0)):
        assert elo_of_spec(text) == elo, text
    for text in ("novice", "640", "elo", "level:expert", "expert:iterations=5", ""):
        assert elo_of_spec(text) is None, text
    for text in ("elo:", "elo:x", "elo:inf", "elo:nan", "elo:1e999", "elo: 640", "elo:6_40", "elo:530:p=0.5"):
        with pytest.raises(ValueError, match="elo:N takes a finite number"):
            elo_of_spec(text)
    assert [elo_spec(e) for e in (640.0, 516.5, 1032.7, 640.1234567, 0.0)] == [
        "elo:640", "elo:516.5", "elo:1032.7", "elo:640.123", "elo:0"]
    assert elo_of_spec(elo_spec(452.8)) == 452.8 and make_bot(elo_spec(452.8)).name == "elo:452.8"


def test_an_operator_ladder_has_its_own_range(tmp_path: Path) -> None:
    path = tmp_path / "my.toml"
    path.write_text('default = "b"\n[[level]]\nname = "a"\niterations = 8\nelo = 0.0\n'
                    '[[level]]\nname = "b"\niterations = 64\nelo = 150.0\n'
                    '[[level]]\nname = "c"\niterations = 256\nelo_lower_bound = 400.0\n')
    assert elo_range(path=path) == (0.0, 150.0)  # c has only a bound: off the range
    assert mix_for(75, path=path).p == pytest.approx(0.5)
    with pytest.raises(EloOutOfRange, match="from 0 to 150"):
        mix_for(300, path=path)


def test_the_mix_s_elo_is_fitted_on_both_matches() -> None:
    from lab.mix import fit_elo

    e, lo, hi = fit_elo([(100.0, 200, 400), (300.0, 200, 400)])  # even against both: halfway
    assert e == pytest.approx(200.0, abs=0.5) and lo < 200 < hi and hi - lo < 80
    e1, lo1, hi1 = fit_elo([(100.0, 200, 400)])
    assert e1 == pytest.approx(100.0, abs=0.5) and (hi1 - lo1) > (hi - lo)  # one match: wider
