"""The learned evaluation end to end: `kashgar train` on a few games, its model file, and the
compiled forward pass against scikit-learn's prediction, in both builds."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bots import build_for
from bots.ismcts_bot import ISMCTSConfig, make_value, search_game
from bots.learned import Model, features, load_model, model_feature_names
from kashgar_cli.main import main as kashgar
from lab.train import Positions, export_layers, td_targets, train
from tests.engine_helpers import random_walk

pytest.importorskip("sklearn", reason="the train extra (pip install -e '.[train]')")


def test_model_features_agree_in_both_builds(compiled_engine: Any, interpreted_engine: Any) -> None:
    names = model_feature_names()
    for seed in range(30):
        players, steps = 2 + seed % 3, random.Random(seed).randrange(200)
        a = random_walk(compiled_engine, players, seed, steps).state
        b = random_walk(interpreted_engine, players, seed, steps).state
        for p in range(players):
            fa, fb = features(a, p), features(b, p)
            assert len(fa) == len(names)
            assert fa == pytest.approx(fb, abs=1e-12)


def test_model_features_are_seat_relative(engine: Any) -> None:
    names = model_feature_names()
    st = random_walk(engine, 3, 11, 120).state
    f0, f1 = features(st, 0), features(st, 1)
    seat = names.index("own.vp"), names.index("next.vp"), names.index("next2.vp")
    vps = [st.vp(p) for p in range(3)]
    assert [f0[i] for i in seat] == [vps[0], vps[1], vps[2]]
    assert [f1[i] for i in seat] == [vps[1], vps[2], vps[0]]
    assert f0[names.index("next3.vp")] == 0.0 and f0[names.index("table.has_next3")] == 0.0
    assert f0[names.index("table.players_3")] == 1.0


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    out = tmp_path_factory.mktemp("train")
    model, data = out / "model.json", out / "pos.npz"
    rc = kashgar(["train", "--policy", "greedy", "-n", "6", "-p", "2,3", "-j", "1", "--seed", "5",
                  "--hidden", "12,6", "--max-iter", "4", "--quiet", "--save-data", str(data),
                  "--out", str(model)])
    assert rc == 0
    return model, data


def test_train_writes_a_model_with_its_provenance(trained: tuple[Path, Path]) -> None:
    model, _ = trained
    doc = json.loads(model.read_text())
    assert doc["features"] == model_feature_names()
    assert doc["sizes"] == [len(model_feature_names()), 12, 6, 1]
    t = doc["training"]
    assert t["games"] == 6 and t["policy"] == "greedy" and t["players"] == [2, 3] and t["positions"] > 50
    assert "kashgar train" in t["command"] and t["commit"] and t["date"]
    held = t["held_out"]["model"]
    assert 0 < held["log_loss"] < 5 and sum(b["n"] for b in held["reliability"]) == held["rows"]
    Model(doc).check_engine()


def test_compiled_evaluation_equals_sklearn(trained: tuple[Path, Path], compiled_engine: Any,
                                            interpreted_engine: Any) -> None:
    model_path, data = trained
    doc = json.loads(model_path.read_text())
    pos = Positions.load(str(data))
    # the same training again gives the same network: the file holds the pipeline's layers
    pipe, _ = train(pos, tuple(doc["training"]["hidden"]), doc["training"]["alpha"], seed=5, max_iter=4)
    assert export_layers(pipe) == doc["layers"]
    model = Model(doc)
    checked = 0
    for engine in (compiled_engine, interpreted_engine):
        core = build_for(random_walk(engine, 2, 0, 0).state).kashgar.KashgarSearchGame()
        core.set_model(model.sizes, model.flat)
        for seed in range(12):
            players = 2 + seed % 3
            st = random_walk(engine, players, 100 + seed, random.Random(seed).randrange(150)).state
            for p in range(players):
                want = float(pipe.predict_proba(np.asarray([features(st, p)]))[0, 1])
                z = core.model_logit(st, p)
                assert 1.0 / (1.0 + math.exp(-z)) == pytest.approx(want, abs=1e-6)
                checked += 1
    assert checked > 60


def test_the_search_values_leaves_by_the_model(trained: tuple[Path, Path], engine: Any) -> None:
    model_path, _ = trained
    st = random_walk(engine, 3, 4, 60).state
    cfg = ISMCTSConfig(evaluator="learned", weights=str(model_path), rollout="turn", macro=2)
    ev = make_value(cfg.evaluator, st, cfg.scale, cfg.weights)
    core = search_game(ev, st, cfg)
    z = ev.values(st)
    ex = [math.exp(v - max(z)) for v in z]
    assert core.leaf_rewards(st) == pytest.approx([e / sum(ex) for e in ex], abs=1e-9)
    # blended: the logit plus `blend` times the linear value of the weights tuned by play
    blended = search_game(ev, st, cfg.with_(blend=0.5))
    z = [v + 0.5 * core.heuristic(st, p) for p, v in enumerate(ev.values(st))]
    ex = [math.exp(v - max(z)) for v in z]
    assert blended.leaf_rewards(st) == pytest.approx([e / sum(ex) for e in ex], abs=1e-9)


def test_a_model_for_other_features_is_refused(trained: tuple[Path, Path], tmp_path: Path) -> None:
    doc = json.loads(trained[0].read_text())
    doc["features"] = doc["features"][:-1] + ["table.deck:nobody"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="differ from this engine"):
        load_model(str(bad))


def _one_input_layers(weight: float) -> list[dict[str, list[Any]]]:
    """A model whose logit is `weight` times the first input."""
    return [{"weights": [[weight]], "biases": [0.0]}]


def test_td_targets_are_lambda_returns_per_seat() -> None:
    # one 2-seat game of three positions (seat 1 won), one 3-seat game of two (seat 0 won)
    x = np.array([[0.0], [0.0], [1.0], [-1.0], [2.0], [-2.0], [0.5], [0.0], [-0.5], [1.5], [0.0], [0.0]])
    y = np.array([0, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 0])
    pos = Positions(x, y, np.array([0] * 6 + [1] * 6), np.array([0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4]),
                    np.array([2] * 6 + [3] * 6))
    layers = _one_input_layers(1.0)
    v = 1.0 / (1.0 + np.exp(-x[:, 0]))
    assert list(td_targets(pos, layers, 1.0)) == list(y.astype(float))  # lambda 1: the outcomes
    zero = td_targets(pos, layers, 0.0)  # lambda 0: the value one position on; the last, the outcome
    assert zero[[0, 1, 2, 3]] == pytest.approx(v[[2, 3, 4, 5]]) and list(zero[[4, 5]]) == [0.0, 1.0]
    assert zero[[6, 7, 8]] == pytest.approx(v[[9, 10, 11]]) and list(zero[9:]) == [1.0, 0.0, 0.0]
    half = td_targets(pos, layers, 0.5)
    # seat 0 of the first game: G3 = 0, G2 = 0.5 v4 + 0.5 * 0, G1 = 0.5 v2 + 0.5 G2
    assert half[0] == pytest.approx(0.5 * v[2] + 0.5 * (0.5 * v[4]))
    assert half[1] == pytest.approx(0.5 * v[3] + 0.5 * (0.5 * v[5] + 0.5))
    with pytest.raises(ValueError, match="lambda"):
        td_targets(pos, layers, 1.5)


def test_train_learns_td_targets_of_a_model(trained: tuple[Path, Path], tmp_path: Path) -> None:
    model, data = trained
    out = tmp_path / "td.json"
    assert kashgar(["train", "--no-play", "--data", str(data), "--td-lambda", "0.7", "--td-model", str(model),
                    "--seed", "5", "--hidden", "12,6", "--max-iter", "4", "--quiet", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    t = doc["training"]
    assert t["td_lambda"] == 0.7 and t["td_model"] == str(model)
    assert "--td-lambda 0.7" in t["command"]
    assert doc["layers"] != json.loads(model.read_text())["layers"]  # other targets, another network
    Model(doc).check_engine()
    # the soft targets are learned as a weighted pair of rows: a target of exactly 0 or 1 is the outcome
    pos = Positions.load(str(data))
    hard = train(pos, (12, 6), 10.0, seed=5, max_iter=2)[0]
    pos.target = pos.y.astype(float)
    soft = train(pos, (12, 6), 10.0, seed=5, max_iter=2)[0]
    probe = pos.x[:50]
    assert soft.predict_proba(probe)[:, 1] == pytest.approx(hard.predict_proba(probe)[:, 1], abs=0.05)


@pytest.mark.parametrize("argv, message", [
    (["--td-lambda", "2"], "argument --td-lambda: lambda is a number from 0 to 1"),
    (["--td-lambda", "0.5", "--td-model", "nowhere.json"], "argument --td-model: nowhere.json: not a model file"),
])
def test_bad_td_settings_are_refused(trained: tuple[Path, Path], argv: list[str], message: str,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    _, data = trained
    try:
        code = kashgar(["train", "--no-play", "--data", str(data), "--quiet", *argv])
    except SystemExit as exc:  # argparse's own refusal
        code = exc.code
    assert code == 2
    assert message in capsys.readouterr().err
