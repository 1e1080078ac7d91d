"""win_prob as a calibrated chance of winning (bots/calibrate.py, `kashgar calibrate`)."""

from __future__ import annotations

import json
import math
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine_ext
from bots import calibrate, suggest
from bots.calibrate import Record
from bots.levels import get_level
from kashgar_cli.main import main


def synthetic(weights: list[float], games: int, per_game: int, seed: int) -> list[Record]:
    """Records whose outcomes follow the logistic model with `weights` (one outcome per decision)."""
    rnd = random.Random(seed)
    out = []
    for g in range(games):
        for _ in range(per_game):
            r, t = rnd.uniform(0.02, 0.98), rnd.random()
            out.append(Record(g, t, r, int(rnd.random() < calibrate.predict(weights, r, t))))
    return out


@pytest.fixture
def shipped() -> Iterator[None]:
    calibrate.load_calibration.cache_clear()
    yield
    calibrate.load_calibration.cache_clear()


def test_the_fit_recovers_the_weights_of_a_known_model() -> None:
    truth = [0.3, 0.4, -0.5, 1.5]
    fitted = calibrate.fit(synthetic(truth, 400, 50, seed=1))
    for got, want in zip(fitted, truth, strict=True):
        assert abs(got - want) < 0.15, (fitted, truth)


def test_held_out_games_measure_the_fit_against_the_raw_score() -> None:
    """A score that overstates (the raw reward is far from the chance) is corrected on games the
    fit never saw: lower Brier score and log-loss, and a reliability table close to the diagonal."""
    records = synthetic([0.0, 0.3, 0.0, 0.0], 300, 40, seed=2)  # the real chance is much flatter than r
    doc = calibrate.calibrate(records, held_out=0.3, seed=5)
    h = doc["held_out"]
    assert h["games"] == 90 and doc["games"] == 300
    assert h["calibrated"]["brier"] < h["raw"]["brier"] - 0.02
    assert h["calibrated"]["log_loss"] < h["raw"]["log_loss"]
    for row in h["reliability_calibrated"]:
        if row["n"] >= 300:
            assert abs(row["predicted"] - row["observed"]) < 0.06, row
    train, test = calibrate.split(records, 0.3, seed=5)
    assert not {r.game for r in train} & {r.game for r in test}


def test_self_play_records_label_every_searched_decision_with_its_player_s_result() -> None:
    recs = calibrate.play_game(("casual", 3, 11))
    assert recs and {r.game for r in recs} == {11}
    assert all(0.0 <= r.reward <= 1.0 and 0.0 <= r.progress <= 1.0 for r in recs)
    assert 0 < sum(r.won for r in recs) < len(recs)  # one seat of three won: some yes, most no
    assert recs[-1].progress >= recs[0].progress


def test_every_shipped_level_is_calibrated_for_2_to_4_players(shipped: None) -> None:
    from bots.levels import load_levels

    doc = calibrate.load_calibration()
    for lv in load_levels():
        for players in (2, 3, 4):
            entry = doc["levels"][lv.name][str(players)]
            assert calibrate.weights_for(lv, players) == entry["weights"], (lv.name, players)
            h = entry["held_out"]
            assert h["calibrated"]["brier"] <= h["raw"]["brier"], (lv.name, players)
            assert h["calibrated"]["log_loss"] <= h["raw"]["log_loss"], (lv.name, players)


def test_win_prob_is_the_calibrated_chance_of_the_mean_reward(shipped: None) -> None:
    g = engine_ext.new_game(players=2, seed=8)
    for _ in range(30):
        g.apply(g.legal()[0])
    out = suggest.analyse_state(g.to_json(observer=g.current_player), level="club", iterations=200, seed=3)
    weights = calibrate.weights_for(get_level("club"), 2)
    t = calibrate.progress_of(g.state)
    for alt in out["alternatives"]:
        if alt["mean_reward"] is not None:
            assert alt["win_prob"] == pytest.approx(calibrate.predict(weights, alt["mean_reward"], t), abs=1e-6)
    chosen = next(a for a in out["alternatives"] if a["decision_text"] == out["decision_text"])
    assert out["win_prob"] == chosen["win_prob"]


def test_a_level_whose_preset_changed_since_its_fit_has_no_win_prob(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    doc = json.loads(calibrate.CALIBRATION_FILE.read_text())
    doc["levels"]["club"]["2"]["preset"]["iterations"] += 1
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(calibrate, "CALIBRATION_FILE", path)
    calibrate.load_calibration.cache_clear()
    assert calibrate.weights_for(get_level("club"), 2) is None
    assert calibrate.weights_for(get_level("club"), 3) is not None
    out = suggest.analyse_state(engine_ext.new_game(players=2, seed=8).to_json(), level="club", iterations=60)
    assert out["win_prob"] is None
    assert all(a["win_prob"] is None for a in out["alternatives"])
    assert any(a["mean_reward"] is not None for a in out["alternatives"])


def test_merging_parts_without_win_prob_gives_none_not_zero() -> None:
    def part(seed: int) -> dict[str, object]:
        return {"decision": {"x": 1}, "decision_text": "a", "seed": seed, "level": "club", "iterations": 10,
                "alternatives": [{"decision": {"x": 1}, "decision_text": "a", "visits": 10, "mean_reward": 0.6,
                                  "win_prob": None, "expected_vp": 7.0}]}

    merged = suggest.merge_parts([part(1), part(2)], temperature=0.0, position=0)
    alt = merged["alternatives"][0]
    assert alt["win_prob"] is None and merged["win_prob"] is None
    assert alt["mean_reward"] == 0.6 and alt["expected_vp"] == 7.0 and alt["visits"] == 20


def test_the_command_fits_and_keeps_other_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cal.json"
    out.write_text(json.dumps({"levels": {"master": {"2": {"weights": [0, 1, 0, 0]}}}}))
    assert main(["calibrate", "--levels", "novice", "--players", "2", "-n", "12", "-j", "1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    entry = doc["levels"]["novice"]["2"]
    assert len(entry["weights"]) == 4 and all(math.isfinite(w) for w in entry["weights"])
    assert entry["games"] == 12 and entry["preset"] == calibrate.preset_of(get_level("novice"))
    assert doc["levels"]["master"]["2"]["weights"] == [0, 1, 0, 0]
    assert "novice" in capsys.readouterr().out
    doc["levels"]["master"]["2"] = entry  # the table reads every entry's held-out measures
    out.write_text(json.dumps(doc))
    assert main(["calibrate", "--table", "--out", str(out)]) == 0
    table = capsys.readouterr().out
    assert "| novice | 2 | 12 |" in table and "| master | 2 | 12 |" in table
    assert main(["calibrate", "--table", "--out", str(tmp_path / "missing.json")]) == 2
    with pytest.raises(SystemExit):
        main(["calibrate", "--players", "5", "--out", str(out)])
    assert main(["calibrate", "--levels", "grandmaster", "--out", str(out)]) == 2
    assert "unknown level grandmaster" in capsys.readouterr().err


@pytest.mark.parametrize("text", ['{"levels": {"club": {"2": {"weights": [0.1, ', '[1, 2]',
                                  '{"levels": {"club": {"2": {"weights": ["a", 1, 2, 3], "preset": null}}}}'])
def test_a_damaged_calibration_file_gives_no_win_prob_not_an_error(
        text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    """A truncated file (an interrupted write) made every sync /suggest a 422 blaming the client's
    state; now the answer comes, with win_prob null (and the server logs why)."""
    from service import create_app

    path = tmp_path / "cal.json"
    path.write_text(text)
    monkeypatch.setattr(calibrate, "CALIBRATION_FILE", path)
    calibrate.load_calibration.cache_clear()
    if "preset" in text:  # malformed weights, under the shipped preset
        doc = json.loads(text)
        doc["levels"]["club"]["2"]["preset"] = calibrate.preset_of(get_level("club"))
        path.write_text(json.dumps(doc))
    state = engine_ext.new_game(players=2, seed=8).to_json()
    r = create_app({"TESTING": True, "log_level": "WARNING"}).test_client().post(
        "/suggest", json={"state": state, "level": "club", "iterations": 40, "mode": "sync"})
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["win_prob"] is None


def test_merged_parts_get_the_chance_of_their_merged_mean_reward(shipped: None) -> None:
    """The map is not linear: a search in parts gets the calibrated chance of the merged mean
    reward, as one search would (not the mean of the parts' chances)."""
    from service import create_app

    g = engine_ext.new_game(players=3, seed=5)
    for _ in range(25):
        g.apply(g.legal()[0])
    out = create_app({"TESTING": True, "log_level": "WARNING"}).test_client().post(
        "/suggest", json={"state": g.to_json(), "level": "casual", "iterations": 90, "parallel": 3,
                          "mode": "sync", "seed": 2}).get_json()
    assert out["parts"] == 3
    weights = calibrate.weights_for(get_level("casual"), 3)
    t = calibrate.progress_of(g.state)
    for alt in out["alternatives"]:
        if alt["mean_reward"] is not None:
            assert alt["win_prob"] == pytest.approx(calibrate.predict(weights, alt["mean_reward"], t), abs=2e-6)


def test_the_command_wants_games_on_both_sides_of_the_split(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["-n", "1"], ["-n", "2", "--held-out", "0.9"], ["-n", "4", "--held-out", "0.1"]):
        assert main(["calibrate", "--levels", "novice", "--players", "2", "-j", "1", *argv,
                     "--out", str(tmp_path / "c.json")]) == 2
        assert "argument --held-out" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()
