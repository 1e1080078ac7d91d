"""win_prob as a calibrated chance of winning (bots/calibrate.py, `kashgar calibrate`)."""

from __future__ import annotations

import json
import logging
import math
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from bots import suggest, win_prob
from bots.levels import get_level
from kashgar_cli.main import main
from lab import calibrate
from lab.calibrate import Record
from tests.cli_helpers import one_line_error


def synthetic(weights: list[float], games: int, per_game: int, seed: int, players: int = 0) -> list[Record]:
    """Records whose outcomes follow the logistic model with `weights` (one outcome per decision);
    with `players`, each record has a place in turn order (its term in the weights, if any)."""
    rnd = random.Random(seed)
    out = []
    for g in range(games):
        for _ in range(per_game):
            r, t = rnd.uniform(0.02, 0.98), rnd.random()
            k = rnd.randrange(players) if players else None
            out.append(Record(g, t, r, int(rnd.random() < win_prob.predict(weights, r, t, k or 0)), k))
    return out


@pytest.fixture
def shipped() -> Iterator[None]:
    win_prob.load_calibration.cache_clear()
    yield
    win_prob.load_calibration.cache_clear()


def test_the_fit_recovers_the_weights_of_a_known_model() -> None:
    truth = [0.3, 0.4, -0.5, 1.5]
    fitted = calibrate.fit(synthetic(truth, 400, 50, seed=1))
    for got, want in zip(fitted, truth, strict=True):
        assert abs(got - want) < 0.15, (fitted, truth)


def test_the_fit_recovers_the_terms_of_the_places_in_turn_order() -> None:
    truth = [0.3, 0.4, -0.5, 1.5, -0.8, 0.6]  # at 3 players: the second place's term, the third's
    records = synthetic(truth, 400, 50, seed=4, players=3)
    fitted = calibrate.fit(records, players=3)
    for got, want in zip(fitted, truth, strict=True):
        assert abs(got - want) < 0.15, (fitted, truth)
    assert len(calibrate.fit(records)) == win_prob.N_WEIGHTS  # without players: the model without places
    with pytest.raises(ValueError, match="place in turn order"):
        calibrate.fit([*records, Record(999, 0.5, 0.5, 1, None)], players=3)
    with pytest.raises(ValueError, match="place in turn order"):
        calibrate.fit([*records, Record(999, 0.5, 0.5, 1, 3)], players=3)
    # calibrate() fits the places where every record has one and says which model it fitted
    doc = calibrate.calibrate(records, held_out=0.3, seed=2, players=3)
    assert doc["model"] == win_prob.MODEL_ORDER and len(doc["weights"]) == 6
    assert doc["held_out"]["calibrated"]["log_loss"] < calibrate.calibrate(
        [Record(r.game, r.progress, r.reward, r.won) for r in records], held_out=0.3, seed=2,
        players=3)["held_out"]["calibrated"]["log_loss"]  # the places' terms pay on held-out games
    plain = calibrate.calibrate([Record(r.game, r.progress, r.reward, r.won) for r in records], players=3)
    assert plain["model"] == win_prob.MODEL and len(plain["weights"]) == 4


def test_the_places_terms_are_fitted_only_where_they_predict_better() -> None:
    """Cross-validated over whole games: with the place biasing who wins, the places' terms lower
    the log-loss and are kept; with the place not in the outcome, they only fit noise, cost
    log-loss on the folds left out, and the model is fitted without them."""
    biased = synthetic([0.3, 0.4, -0.5, 1.5, -0.8, 0.6], 400, 50, seed=4, players=3)
    assert calibrate.place_gain(biased, 3) > 0.005
    doc = calibrate.calibrate(biased, held_out=0.3, seed=2, players=3)
    assert doc["model"] == win_prob.MODEL_ORDER and doc["place_gain"] > 0.005
    fair = synthetic([0.3, 0.4, -0.5, 1.5, 0.0, 0.0], 400, 50, seed=5, players=3)
    assert -0.002 < calibrate.place_gain(fair, 3) < 0
    doc = calibrate.calibrate(fair, held_out=0.3, seed=2, players=3)
    assert doc["model"] == win_prob.MODEL and len(doc["weights"]) == 4 and doc["place_gain"] < 0
    assert doc["weights"] == calibrate.fit(fair)
    assert doc["held_out"]["by_order_calibrated"]  # the places are still measured
    assert "place_gain" not in calibrate.calibrate([Record(r.game, r.progress, r.reward, r.won) for r in fair],
                                                   players=3)  # records without places: nothing to weigh
    two = [r for r in fair if r.game < 2]  # one game to fit: nothing to cross-validate, no terms
    assert calibrate.place_gain(two[:50], 3) == 0.0
    assert calibrate.calibrate(two, held_out=0.5, seed=2, players=3)["model"] == win_prob.MODEL


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


def test_predicted_and_observed_per_place_in_turn_order_show_a_bias_the_model_lacks() -> None:
    R = calibrate.Record
    recs = [R(1, 0.1, 0.5, 1, 0), R(1, 0.2, 0.5, 0, 1), R(2, 0.1, 0.5, 1, 0), R(2, 0.2, 0.5, 0, 1),
            R(3, 0.1, 0.5, 0, 0), R(3, 0.2, 0.5, 1, 1), R(3, 0.3, 0.5, 0, 0)]
    probs = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.2]
    assert calibrate.by_order(probs, recs) == [
        {"order": 0, "n": 4, "predicted": 0.425, "observed": 0.5},
        {"order": 1, "n": 3, "predicted": 0.5, "observed": 0.333}]
    assert calibrate.by_order(probs, [*recs[:-1], R(3, 0.3, 0.5, 0, None)]) is None
    # held out by calibrate() only where every record names its place
    placed = [R(r.game, r.progress, r.reward, r.won, r.game % 2) for r in synthetic([0.0, 1.0, 0.0, 0.0], 60, 10, 3)]
    h = calibrate.calibrate(placed, held_out=0.3, seed=1)["held_out"]
    assert [row["order"] for row in h["by_order_calibrated"]] == [0, 1]
    assert sum(row["n"] for row in h["by_order_calibrated"]) == h["decisions"]
    assert "by_order_calibrated" not in calibrate.calibrate(synthetic([0.0, 1.0, 0.0, 0.0], 60, 10, 3))["held_out"]


def test_self_play_records_label_every_searched_decision_with_its_player_s_result() -> None:
    recs = calibrate.play_game(("casual", 3, 11))
    assert recs and {r.game for r in recs} == {11}
    assert all(0.0 <= r.reward <= 1.0 and 0.0 <= r.progress <= 1.0 for r in recs)
    assert 0 < sum(r.won for r in recs) < len(recs)  # one seat of three won: some yes, most no
    assert recs[-1].progress >= recs[0].progress


def test_self_play_records_are_labelled_won_for_the_winner_s_decisions_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Watch the decisions `play_game` makes and the state it ends in: a record is labelled won (1)
    exactly when its decision was the final winner's, with the search's raw mean reward."""
    import lab.arena as arena

    real_bot, real_state = arena.cached_bot, arena.new_state
    states: list[Any] = []
    searched: list[tuple[int, float]] = []  # (player, mean reward) of each decision kept

    class Spy:
        def __init__(self, bot: Any) -> None:
            self.bot = bot

        def analyse(self, st: Any, **kw: Any) -> Any:
            an = self.bot.analyse(st, **kw)
            if an.iterations > 0 and not math.isnan(an.mean_reward):
                searched.append((int(an.player), float(an.mean_reward)))
            return an

    starts: list[int] = []  # the start player of each game, read before its first decision

    def new_state(*args: Any) -> Any:
        states.append(real_state(*args))
        starts.append(int(states[-1].turn_player()))
        return states[-1]

    monkeypatch.setattr(arena, "cached_bot", lambda spec: Spy(real_bot(spec)))
    monkeypatch.setattr(arena, "new_state", new_state)
    winners = set()
    for seed in range(5, 25):
        searched.clear()
        recs = calibrate.play_game(("novice", 2, seed))
        st = states[-1]
        assert st.is_terminal()
        winner = int(st.winner())
        winners.add(winner)
        assert len(recs) == len(searched) > 0
        assert [r.won for r in recs] == [int(p == winner) for p, _ in searched], seed
        assert [r.reward for r in recs] == [m for _, m in searched]
        assert [r.order for r in recs] == [(p - starts[-1]) % 2 for p, _ in searched]
        if winners == {0, 1}:  # games won by either seat
            break
    assert winners == {0, 1}


def by_hand(w: list[float], r: float, t: float, order: int = 0) -> float:
    """The model, written out here apart from lab.calibrate: logit P = w0 + s * x + w2 * t (+ u_k,
    the weight after w3 numbered by the place k, for a place after the start player's), with
    x = logit(r clipped to [1e-4, 1 - 1e-4]) and the slope s = max(0, w1 + w3 * t) (w1 * x + w3 * t * x
    where that is not negative)."""
    r = min(1.0 - 1e-4, max(1e-4, r))
    x = math.log(r) - math.log(1.0 - r)
    z = w[0] + max(0.0, w[1] + w[3] * t) * x + w[2] * t + (w[3 + order] if order > 0 else 0.0)
    return 1.0 / (1.0 + math.exp(-z))


def test_predict_is_the_model_written_out() -> None:
    """Numbers worked out by hand: the features' order, the logit's sign, the clip of the reward
    and the clip of the slope."""
    w = [0.5, 1.0, -2.0, 0.5]
    # x = ln(0.8 / 0.2) = ln 4 = 1.386294; slope 1 + 0.5 * 0.4 = 1.2; z = 0.5 + 1.2 x - 0.8 = 1.363553
    assert win_prob.predict(w, 0.8, 0.4) == pytest.approx(0.7963366, abs=1e-7)
    # x = ln(0.3 / 0.7) = -0.847298; slope 1.5; z = 0.5 - 1.270946 - 2 = -2.770946
    assert win_prob.predict(w, 0.3, 1.0) == pytest.approx(0.0589145, abs=1e-7)
    assert win_prob.predict([0.0, 1.0, 0.0, 0.0], 1.0, 0.0) == pytest.approx(0.9999, abs=1e-9)  # r clipped
    assert win_prob.predict([0.0, 1.0, 0.0, 0.0], 0.0, 0.0) == pytest.approx(0.0001, abs=1e-9)
    # slope -1 + 1 * 0.2 < 0: taken as 0, the chance of the intercept alone, whatever the reward
    for r in (0.1, 0.5, 0.9):
        assert win_prob.predict([0.5, -1.0, 0.0, 1.0], r, 0.2) == pytest.approx(0.6224593, abs=1e-7)
    # the places' terms (MODEL_ORDER): none for the start player, u_k added to the logit for place k
    wo = [0.5, 1.0, -2.0, 0.5, -1.0, 0.25]
    assert win_prob.predict(wo, 0.8, 0.4, 0) == pytest.approx(0.7963366, abs=1e-7)
    assert win_prob.predict(wo, 0.8, 0.4, 1) == pytest.approx(1 / (1 + math.exp(-0.363553)), abs=1e-6)
    assert win_prob.predict(wo, 0.8, 0.4, 2) == pytest.approx(1 / (1 + math.exp(-1.613553)), abs=1e-6)
    assert win_prob.predict(w, 0.8, 0.4, 2) == pytest.approx(0.7963366, abs=1e-7)  # MODEL: no place term


# the cells fitted with a term per place in turn order: played with each decision's place recorded,
# and the terms predicting better there, cross-validated (`place_gain` above 0)
WITH_PLACES = {("novice", 3), ("beginner", 2), ("casual", 2), ("casual", 3), ("casual", 4), ("club", 3),
               ("skilled", 2), ("advanced", 2), ("expert", 2), ("expert", 3), ("expert", 4), ("master", 2),
               ("master", 3), ("master", 4)}
CELLS = [(lv, n) for lv in ("novice", "beginner", "casual", "club", "skilled", "advanced", "expert", "master")
         for n in (2, 3, 4)]


@pytest.mark.parametrize(("level", "players"), CELLS)
def test_the_shipped_weights_mean_the_model_written_out(level: str, players: int, shipped: None) -> None:
    """The shipped fits, read from the file itself, mean what the model says: a change to the
    features, their order, the logit or its clips fails here, not only the numbers. The cells whose
    places' terms predict better have a term per place after the start player's, the others none."""
    entry = json.loads(win_prob.CALIBRATION_FILE.read_text())["levels"][level][str(players)]
    w = entry["weights"]
    places = (level, players) in WITH_PLACES
    assert entry["model"] == (win_prob.MODEL_ORDER if places else win_prob.MODEL)
    assert len(w) == win_prob.N_WEIGHTS + (players - 1 if places else 0)
    assert win_prob.weights_for(get_level(level), players) == w
    for r, t in ((0.5, 0.0), (0.9, 0.1), (0.9, 0.6), (0.2, 0.3), (0.05, 1.0), (0.999999, 0.8), (0.0, 0.5)):
        for order in range(players):
            want = by_hand(w, r, t, order if places else 0)
            assert win_prob.predict(w, r, t, order) == pytest.approx(want, abs=1e-12), (r, t, order)
            assert win_prob.win_prob(w, r, t, order) == pytest.approx(want, abs=1e-12), (r, t, order)


def test_progress_is_the_leader_s_vp_over_25() -> None:
    class Seats:
        def __init__(self, *vp: int) -> None:
            self.players, self._vp = len(vp), vp

        def vp(self, p: int) -> int:
            return self._vp[p]

    assert win_prob.progress_of(Seats(3, 11, 7)) == pytest.approx(11 / 25)
    assert win_prob.progress_of(Seats(0, 0)) == 0.0
    assert win_prob.progress_of(Seats(2, 30, 26, 1)) == 1.0  # at most 1
    assert win_prob.progress_of(Seats(-2, -1)) == 0.0  # a Bettler and a Gewürzhändler: at least 0
    g = engine_ext.new_game(players=3, seed=4)
    rnd = random.Random(1)
    while max(g.state.vp(p) for p in range(3)) < 5:
        g.apply(rnd.choice(g.legal()))
    leader = max(g.state.vp(p) for p in range(3))
    assert 5 <= leader < 25
    assert win_prob.progress_of(g.state) == pytest.approx(leader / 25)


def test_win_prob_never_falls_as_the_mean_reward_rises(shipped: None) -> None:
    """A fit with a negative slope early in the game (casual 2p below t = 0.23 once, novice 2p below
    t = 0.21 now) gave the alternative the search liked best the lowest win_prob; now it is at most
    a tie."""
    from bots.levels import load_levels

    rewards = [0.0, 1e-5, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.99999, 1.0]
    for lv in load_levels():
        for players in (2, 3, 4):
            w = win_prob.weights_for(lv, players)
            assert w is not None, (lv.name, players)
            for t in (0.0, 0.1, 0.2, 0.5, 1.0):
                probs = [win_prob.predict(w, r, t) for r in rewards]
                assert probs == sorted(probs), (lv.name, players, t, probs)
    w = win_prob.weights_for(get_level("novice"), 2)
    assert w is not None and w[1] + w[3] * 0.1 < 0  # the fit itself slopes down there
    assert win_prob.predict(w, 0.9, 0.1) == win_prob.predict(w, 0.6, 0.1)  # a tie, not an inversion
    assert win_prob.predict(w, 0.9, 0.5) > win_prob.predict(w, 0.6, 0.5)


def test_an_entry_fitted_under_another_model_gives_no_weights(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    doc = json.loads(win_prob.CALIBRATION_FILE.read_text())
    models = {e["model"] for by in doc["levels"].values() for e in by.values()}
    assert models <= {win_prob.MODEL, win_prob.MODEL_ORDER}
    doc["levels"]["club"]["2"]["model"] = "logit P = w0 + w1 * reward"
    del doc["levels"]["club"]["3"]["model"]  # written before entries named their model
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(win_prob, "CALIBRATION_FILE", path)
    assert win_prob.weights_for(get_level("club"), 2) is None
    assert win_prob.weights_for(get_level("club"), 3) is None
    assert win_prob.weights_for(get_level("club"), 4) == doc["levels"]["club"]["4"]["weights"]
    out = suggest.analyse_state(engine_ext.new_game(players=2, seed=8).to_json(), level="club", iterations=60)
    assert out["win_prob"] is None


def write_replacing(path: Path, text: str, mtime_ns: int) -> None:
    """Write `path` as `kashgar calibrate` does (a new file moved over it), with its mtime set."""
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(text)
    os.utime(tmp, ns=(mtime_ns, mtime_ns))
    os.replace(tmp, path)


def test_a_rewritten_or_mended_file_takes_effect_without_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    """The file was read once per process: a running server kept an old fit after `kashgar
    calibrate` wrote a new one, and null after a damaged file was mended. (The file is looked at
    every call here; once a second, as served, in the next test.)"""
    doc = json.loads(win_prob.CALIBRATION_FILE.read_text())
    path = tmp_path / "cal.json"
    monkeypatch.setattr(win_prob, "CALIBRATION_FILE", path)
    monkeypatch.setattr(win_prob.load_calibration, "check_s", 0.0)
    club = get_level("club")
    state = engine_ext.new_game(players=2, seed=8).to_json()
    assert win_prob.load_calibration() == {}  # none yet
    write_replacing(path, '{"levels": {"club": ', 1_000_000_000)  # damaged
    assert win_prob.weights_for(club, 2) is None
    assert suggest.analyse_state(state, level="club", iterations=60)["win_prob"] is None
    write_replacing(path, json.dumps(doc), 2_000_000_000)  # mended
    assert win_prob.weights_for(club, 2) == doc["levels"]["club"]["2"]["weights"]
    first = suggest.analyse_state(state, level="club", iterations=60)["win_prob"]
    assert first is not None
    doc["levels"]["club"]["2"]["weights"] = [3.0, 0.0, 0.0, 0.0]  # a new fit
    write_replacing(path, json.dumps(doc), 3_000_000_000)
    assert win_prob.weights_for(club, 2) == [3.0, 0.0, 0.0, 0.0]
    assert suggest.analyse_state(state, level="club", iterations=60)["win_prob"] == pytest.approx(
        1 / (1 + math.exp(-3.0)), abs=1e-6)
    doc["levels"]["club"]["2"]["weights"] = [2.0, 0.0, 0.0, 0.0]  # written in place, same size
    path.write_text(json.dumps(doc))
    os.utime(path, ns=(4_000_000_000, 4_000_000_000))
    assert win_prob.weights_for(club, 2) == [2.0, 0.0, 0.0, 0.0]
    path.unlink()
    assert win_prob.load_calibration() == {} and win_prob.weights_for(club, 2) is None


def test_the_file_is_looked_at_once_a_second_at_most(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A served request asks for the calibration every time: the stat of the file each call was 5%
    of a web process's time at the cheap levels. Now it is looked at once every `check_s` seconds,
    and a new, mended or removed file takes effect within that."""
    now = [100.0]
    loader = win_prob.CalibrationLoader(check_s=1.0, clock=lambda: now[0])
    path = tmp_path / "cal.json"
    stats: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **kw: stats.append(os.fspath(p)) or real_stat(p, *a, **kw))
    assert loader(str(path)) == {} and len(stats) == 1  # none yet, and that is kept too
    write_replacing(path, '{"levels": {"a": 1}}', 1_000_000_000)
    for _ in range(5):
        now[0] += 0.15
        assert loader(str(path)) == {}  # within the second: not looked at
    assert len(stats) == 1
    now[0] += 0.5
    assert loader(str(path)) == {"levels": {"a": 1}} and len(stats) == 2
    write_replacing(path, '{"levels": {"b": 2}}', 2_000_000_000)
    now[0] += 0.5
    assert loader(str(path)) == {"levels": {"a": 1}}
    now[0] += 0.6
    assert loader(str(path)) == {"levels": {"b": 2}}
    path.unlink()
    now[0] += 1.0
    assert loader(str(path)) == {}


def test_an_unchanged_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    path = tmp_path / "cal.json"
    path.write_text('{"levels": {}}')
    reads: list[str] = []
    real = json.load
    monkeypatch.setattr(json, "load", lambda fh: reads.append(fh.name) or real(fh))
    for _ in range(5):
        assert win_prob.load_calibration(str(path)) == {"levels": {}}
    assert reads == [str(path)]
    win_prob.load_calibration.cache_clear()
    assert win_prob.load_calibration(str(path)) == {"levels": {}}
    assert reads == [str(path)] * 2


def test_the_kept_records_are_the_games_of_the_shipped_fit(shipped: None) -> None:
    """lab/data/calibration holds the records of shipped fits, so that a new model is fitted on them
    without playing: each file is of the level's preset as shipped, and fitting it gives the
    shipped weights and the held-out games and decisions."""
    folder = Path(__file__).resolve().parents[2] / "lab" / "data" / "calibration"
    files = sorted(folder.glob("*.jsonl.xz"))
    assert files
    doc = win_prob.load_calibration()
    for path in files:
        header, records = calibrate.read_records(path)
        entry = doc["levels"][header["level"]][str(header["players"])]
        assert path.name == f"{header['level']}-{header['players']}p.jsonl.xz"
        level = get_level(header["level"])
        assert win_prob.same_preset(header["preset"], level) and win_prob.same_preset(entry["preset"], level)
        # the records have the places: the model has their terms where they predict better
        places = entry["place_gain"] > 0
        assert entry["model"] == (win_prob.MODEL_ORDER if places else win_prob.MODEL)
        assert calibrate.fit(records, players=header["players"] if places else None) == pytest.approx(
            entry["weights"], abs=1e-9)
        assert len({r.game for r in records}) == entry["games"] and len(records) == entry["decisions"]
        assert all(r.order is not None and 0 <= r.order < header["players"] for r in records)


def test_every_shipped_level_is_calibrated_for_2_to_4_players(shipped: None) -> None:
    from bots.levels import load_levels

    doc = win_prob.load_calibration()
    for lv in load_levels():
        for players in (2, 3, 4):
            entry = doc["levels"][lv.name][str(players)]
            assert win_prob.weights_for(lv, players) == entry["weights"], (lv.name, players)
            h = entry["held_out"]
            assert h["calibrated"]["brier"] <= h["raw"]["brier"], (lv.name, players)
            assert h["calibrated"]["log_loss"] <= h["raw"]["log_loss"], (lv.name, players)
            if "place_gain" in entry:  # played with the places recorded: their terms where they pay
                assert (entry["model"] == win_prob.MODEL_ORDER) == (entry["place_gain"] > 0), (lv.name, players)


def test_win_prob_is_the_calibrated_chance_of_the_mean_reward(shipped: None) -> None:
    g = engine_ext.new_game(players=2, seed=8)
    for _ in range(30):
        g.apply(g.legal()[0])
    out = suggest.analyse_state(g.to_json(observer=g.current_player), level="club", iterations=200, seed=3)
    weights = win_prob.weights_for(get_level("club"), 2)
    t = win_prob.progress_of(g.state)
    for alt in out["alternatives"]:
        if alt["mean_reward"] is not None:
            assert alt["win_prob"] == pytest.approx(win_prob.predict(weights, alt["mean_reward"], t), abs=1e-6)
    chosen = next(a for a in out["alternatives"] if a["decision_text"] == out["decision_text"])
    assert out["win_prob"] == chosen["win_prob"]


def test_win_prob_counts_the_mover_s_place_in_turn_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         shipped: None) -> None:
    """With weights of MODEL_ORDER, a suggestion's win_prob is the chance for the mover's place:
    found from the state's start player (dealt: a deal whose start player is not seat 0)."""
    doc = json.loads(win_prob.CALIBRATION_FILE.read_text())
    terms = [0.0, 1.0, 0.0, 0.0, -3.0, 1.0, 2.0]  # places 1, 2, 3 far apart
    doc["levels"]["club"]["4"].update(model=win_prob.MODEL_ORDER, weights=terms)
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(win_prob, "CALIBRATION_FILE", path)
    win_prob.load_calibration.cache_clear()
    g = next(g for g in (engine_ext.new_game(players=4, seed=s) for s in range(40)) if g.current_player != 0)
    start = g.current_player
    seen = set()
    while len(seen) < 4:
        mover = g.current_player
        place = (mover - start) % 4
        assert win_prob.order_of(g.state) == place
        if place not in seen and len(g.legal()) > 1:
            seen.add(place)
            out = suggest.analyse_state(g.to_json(observer=mover), level="club", iterations=60, seed=1)
            t = win_prob.progress_of(g.state)
            for alt in out["alternatives"]:
                if alt["mean_reward"] is not None:
                    want = win_prob.predict(terms, alt["mean_reward"], t, place)
                    assert alt["win_prob"] == pytest.approx(want, abs=1e-6), place
        g.apply(g.legal()[0])


def test_weights_of_the_wrong_length_for_their_model_give_no_win_prob(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    doc = json.loads(win_prob.CALIBRATION_FILE.read_text())
    path = tmp_path / "cal.json"
    monkeypatch.setattr(win_prob, "CALIBRATION_FILE", path)
    club = get_level("club")
    for model, weights, ok in ((win_prob.MODEL_ORDER, [0.0, 1.0, 0.0, 0.0, 0.5, 0.5], True),
                               (win_prob.MODEL_ORDER, [0.0, 1.0, 0.0, 0.0, 0.5], False),
                               (win_prob.MODEL_ORDER, [0.0, 1.0, 0.0, 0.0], False),
                               (win_prob.MODEL, [0.0, 1.0, 0.0, 0.0, 0.5, 0.5], False),
                               (win_prob.MODEL, [0.0, 1.0, 0.0, 0.0], True)):
        doc["levels"]["club"]["3"].update(model=model, weights=weights)
        path.write_text(json.dumps(doc))
        win_prob.load_calibration.cache_clear()
        assert (win_prob.weights_for(club, 3) == weights) is ok, (model, weights)


def test_a_level_whose_preset_changed_since_its_fit_has_no_win_prob(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    doc = json.loads(win_prob.CALIBRATION_FILE.read_text())
    doc["levels"]["club"]["2"]["preset"]["iterations"] += 1
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(doc))
    monkeypatch.setattr(win_prob, "CALIBRATION_FILE", path)
    win_prob.load_calibration.cache_clear()
    assert win_prob.weights_for(get_level("club"), 2) is None
    assert win_prob.weights_for(get_level("club"), 3) is not None
    out = suggest.analyse_state(engine_ext.new_game(players=2, seed=8).to_json(), level="club", iterations=60)
    assert out["win_prob"] is None
    assert all(a["win_prob"] is None for a in out["alternatives"])
    assert any(a["mean_reward"] is not None for a in out["alternatives"])


def test_merging_parts_without_win_prob_gives_none_not_zero() -> None:
    import dataclasses

    import engine_ext
    from bots.answer import AlternativeStats, Answer

    position = suggest.Position.of(engine_ext.new_game(players=2, seed=8), "club")
    code = position.game.legal_codes()[0]
    only = AlternativeStats(position.game.decision(code), code, 10, 0.6, None, 7.0)
    part = Answer(decision=only.decision, code=code, alternatives=(only,), line=(), win_prob=None, iterations=10,
                  elapsed_ms=1.0, seed=1, level=position.level, compiled=True, workers=1, parts=1, player=0,
                  bot="club")
    merged = suggest.merge([part, dataclasses.replace(part, seed=2)], position, temperature=0.0)
    alt = merged.alternatives[0]
    assert alt.win_prob is None and merged.win_prob is None
    assert alt.mean_reward == 0.6 and alt.expected_vp == 7.0 and alt.visits == 20


def test_the_command_fits_and_keeps_other_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cal.json"
    out.write_text(json.dumps({"levels": {"master": {"2": {"weights": [0, 1, 0, 0]}}}}))
    assert main(["calibrate", "--levels", "novice", "--players", "2", "-n", "12", "-j", "1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    entry = doc["levels"]["novice"]["2"]
    # games played now record each decision's place in turn order: w0..w3, and the second place's
    # term where it predicts better, cross-validated
    places = entry["place_gain"] > 0
    assert entry["model"] == (win_prob.MODEL_ORDER if places else win_prob.MODEL)
    assert len(entry["weights"]) == 4 + places and all(math.isfinite(w) for w in entry["weights"])
    assert entry["games"] == 12 and entry["preset"] == win_prob.preset_of(get_level("novice"))
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
    assert main(["calibrate", "--levels", "nosuchlevel", "--out", str(out)]) == 2
    assert "unknown level nosuchlevel" in capsys.readouterr().err


DEEP = '{"levels": ' + "[" * 100_000 + "]" * 100_000 + "}"


@pytest.mark.parametrize("text", ['{"levels": {"club": {"2": {"weights": [0.1, ', '[1, 2]',
                                  '{"levels": {"club": {"2": {"weights": ["a", 1, 2, 3], "preset": null}}}}',
                                  DEEP], ids=["truncated", "a list", "malformed weights", "nested too deep"])
def test_a_damaged_calibration_file_gives_no_win_prob_not_an_error(
        text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shipped: None) -> None:
    """A truncated file (an interrupted write) made every sync /suggest a 422 blaming the client's
    state; so did one nested too deep for the JSON parser (a RecursionError); now the answer comes,
    with win_prob null (and the server logs why)."""
    from service import create_app

    path = tmp_path / "cal.json"
    path.write_text(text)
    monkeypatch.setattr(win_prob, "CALIBRATION_FILE", path)
    win_prob.load_calibration.cache_clear()
    if "preset" in text:  # malformed weights, under the shipped preset and model
        doc = json.loads(text)
        doc["levels"]["club"]["2"]["preset"] = win_prob.preset_of(get_level("club"))
        doc["levels"]["club"]["2"]["model"] = win_prob.MODEL
        path.write_text(json.dumps(doc))
    logged: list[str] = []
    handler = logging.Handler(logging.ERROR)
    handler.emit = lambda record: logged.append(record.getMessage())  # type: ignore[method-assign]
    logging.getLogger("kashgar.win_prob").addHandler(handler)  # the service's logging may not propagate
    try:
        assert win_prob.weights_for(get_level("club"), 2) is None
    finally:
        logging.getLogger("kashgar.win_prob").removeHandler(handler)
    assert len(logged) == 1 and ("is null" in logged[0]), logged
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
    weights = win_prob.weights_for(get_level("casual"), 3)
    t, order = win_prob.progress_of(g.state), win_prob.order_of(g.state)
    for alt in out["alternatives"]:
        if alt["mean_reward"] is not None:
            assert alt["win_prob"] == pytest.approx(win_prob.predict(weights, alt["mean_reward"], t, order), abs=2e-6)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_grandmaster_answer_has_the_chance_of_its_fit(shipped: None, players: int) -> None:
    """grandmaster's win_prob comes from its own fit (made on master's games), not master's: here
    a short search in grandmaster's four parts, answered as the lab plays it (`served:grandmaster`)."""
    from lab.served import served_answer

    g = engine_ext.new_game(players=players, seed=6)
    for _ in range(30):
        g.apply(g.legal()[0])
    out = served_answer(g.state, "grandmaster", seed=2, iterations=400, parts=4).to_json()
    assert out["parts"] == 4 and out["level"] == "grandmaster"
    weights = win_prob.weights_for(get_level("grandmaster"), players)
    assert weights is not None and weights != win_prob.weights_for(get_level("master"), players)
    t, order = win_prob.progress_of(g.state), win_prob.order_of(g.state)
    assert out["win_prob"] is not None
    for alt in out["alternatives"]:
        if alt["mean_reward"] is not None:
            assert alt["win_prob"] == pytest.approx(win_prob.predict(weights, alt["mean_reward"], t, order), abs=2e-6)


def test_the_command_wants_games_on_both_sides_of_the_split(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["-n", "1"], ["-n", "2", "--held-out", "0.9"], ["-n", "4", "--held-out", "0.1"]):
        assert main(["calibrate", "--levels", "novice", "--players", "2", "-j", "1", *argv,
                     "--out", str(tmp_path / "c.json")]) == 2
        assert "argument --held-out" in capsys.readouterr().err
    assert not (tmp_path / "c.json").exists()


def games_of(per_game: int, games: int, seed: int) -> tuple[list[float], list[Record]]:
    """Perfectly calibrated predictions whose decisions share their game's outcome: each game has
    one chance p, and every decision of it predicts p and is won or lost together."""
    rnd = random.Random(seed)
    probs, recs = [], []
    for g in range(games):
        p = rnd.uniform(0.05, 0.95)
        won = int(rnd.random() < p)
        probs += [p] * per_game
        recs += [Record(g, 0.5, p, won)] * per_game
    return probs, recs


def test_the_gap_spread_resamples_whole_games() -> None:
    """Decisions of one game share one outcome, so the games are the sample: with 200 games a
    perfectly calibrated map shows a large bin gap by chance, and its spread over resampled games is
    wide (and above 0: a largest gap is biased up); with 2,000 games it narrows. Seeded: the same
    spread again."""
    few = games_of(per_game=5, games=200, seed=1)
    many = games_of(per_game=5, games=2000, seed=1)
    lo_few, hi_few = calibrate.gap_spread(*few, min_bin=50, seed=3)
    lo_many, hi_many = calibrate.gap_spread(*many, min_bin=50, seed=3)
    assert calibrate.gap_spread(*few, min_bin=50, seed=3) == [lo_few, hi_few]
    assert calibrate.largest_gap(*few, min_bin=50) > 0.1 and hi_few > 0.25  # chance alone: every prediction is right
    assert hi_many < 0.15 and hi_many - lo_many < hi_few - lo_few
    assert lo_few > 0.05  # above 0 though every prediction is right: a largest gap is biased up


def test_the_table_shows_the_gap_spread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = synthetic([0.0, 0.8, 0.0, 0.0], 600, 40, seed=4)  # held-out bins of 500 decisions and more
    entry = calibrate.calibrate(records, held_out=0.3, seed=2)
    lo, hi = entry["held_out"]["bin_gap_calibrated_spread"]
    assert 0.0 < lo <= hi
    out = tmp_path / "cal.json"
    out.write_text(json.dumps({"levels": {"club": {"2": entry}}}))
    assert main(["calibrate", "--table", "--out", str(out)]) == 0
    row = capsys.readouterr().out.splitlines()[2]
    assert row.endswith(f" [{lo:.3f}, {hi:.3f}] | - |"), row  # records without places: no place_gain
    entry["place_gain"] = -0.00236
    out.write_text(json.dumps({"levels": {"club": {"2": entry}}}))
    assert main(["calibrate", "--table", "--out", str(out)]) == 0
    assert capsys.readouterr().out.splitlines()[2].endswith(f" [{lo:.3f}, {hi:.3f}] | -0.0024 |")


def test_a_level_asked_in_games_another_level_plays() -> None:
    """--played-by: the game is the playing level's own self-play game (the same decisions, seeds
    and outcome), and the level fitted is asked at every k-th decision that level searched."""
    asked = calibrate.play_game(("advanced", 2, 5, "expert", 3))
    own = calibrate.play_game(("expert", 2, 5))
    assert [(r.progress, r.won, r.order) for r in asked] == [(r.progress, r.won, r.order) for r in own[::3]]
    assert [r.reward for r in asked] != [r.reward for r in own[::3]]  # another level's reading


def test_a_one_part_level_is_asked_as_its_own_search() -> None:
    """A one-part level's served mean reward is its own search's."""
    import engine_ext
    from lab.arena import cached_bot

    st = engine_ext.new_game(players=2, seed=8).state
    an = cached_bot("level:advanced").analyse(st, seed=99)
    assert calibrate.served_reward(st, "advanced", 99) == pytest.approx(an.mean_reward, abs=1e-6)


def test_grandmaster_is_asked_as_the_service_asks_it(served_small: list[Any]) -> None:
    """grandmaster's budget goes to the service's root-parallel parts (4 of 20,000 iterations),
    merged as a job's are."""
    import engine_ext

    st = engine_ext.new_game(players=2, seed=8).state
    reward = calibrate.served_reward(st, "grandmaster", 99)
    assert 0.0 < reward < 1.0
    assert [(s.level, s.iterations, s.parallel, s.seed) for s in served_small] == [("grandmaster", 80_000, 4, 99)]


def test_the_command_fits_a_level_asked_in_another_level_s_games(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "rec").mkdir()
    out = tmp_path / "cal.json"
    argv = ["calibrate", "--levels", "advanced", "--players", "2", "--seed", "40", "--out", str(out)]
    assert main([*argv, "-n", "6", "-j", "2", "--played-by", "expert", "--every", "4",
                 "--records", str(tmp_path / "rec")]) == 0
    entry = json.loads(out.read_text())["levels"]["advanced"]["2"]
    assert entry["played_by"] == "expert" and "--played-by expert --every 4" in entry["command"]
    header, records = calibrate.read_records(tmp_path / "rec" / "advanced-2p.jsonl")
    assert header["played_by"] == "expert" and header["every"] == 4 and len(records) > 6
    again = [*argv, "--from-records", str(tmp_path / "rec"), "--played-by", "expert"]
    assert main([*again, "--every", "2"]) != 0  # records asked at every 4th decision, not every 2nd
    assert "--played-by and --every" in one_line_error(capsys)
    assert main([*again, "--every", "4"]) == 0
    assert json.loads(out.read_text())["levels"]["advanced"]["2"]["weights"] == entry["weights"]
    assert main([*argv, "--every", "3"]) != 0
    assert "--every: only with --played-by" in one_line_error(capsys)
    assert main([*argv, "--played-by", "nobody"]) != 0
    assert "--played-by: unknown level nobody" in one_line_error(capsys)
