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
from bots.ismcts_bot import ISMCTSConfig, make_evaluator, search_evaluator
from bots.learned import Model, features, load_model, model_feature_names
from kashgar_cli.main import main as kashgar
from lab.train import Positions, export_layers, train
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
        core = build_for(random_walk(engine, 2, 0, 0).state).kashgar.KashgarEvaluator()
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
    ev = make_evaluator(cfg.evaluator, st, cfg.scale, cfg.weights)
    core = search_evaluator(ev, st, cfg)
    z = ev.values(st)
    ex = [math.exp(v - max(z)) for v in z]
    assert core.leaf_rewards(st) == pytest.approx([e / sum(ex) for e in ex], abs=1e-9)
    # blended: the logit plus `blend` times the linear value of the weights tuned by play
    blended = search_evaluator(ev, st, cfg.with_(blend=0.5))
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
