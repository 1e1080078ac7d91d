"""The evaluation's features and weights: one formula in both builds, and the fit that makes them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import engine_ext
from bots import build_for, load_build
from bots.evaluate import FittedValue, HandWeightsValue, WeightedValue
from bots.features import (
    FIXED,
    HAND_WEIGHTS,
    engine_kind_slugs,
    feature_names,
    load_weights,
    parse_weights,
    weight_vector,
)
from kashgar_cli.main import main as kashgar
from lab.fit_eval import Positions, fit, hybrid_basis, log_loss, play_positions
from tests.engine_helpers import random_walk


def test_compiled_and_interpreted_evaluations_agree(compiled_engine: object, interpreted_engine: object) -> None:
    # The compiled evaluator values leaves in C; it must compute exactly what the interpreted
    # build computes (a C integer division once dropped every partly covered contract).
    evs = [HandWeightsValue(), FittedValue()]
    partial_reach = 0
    for seed in range(120):
        players, steps = 2 + seed % 3, random.Random(seed).randrange(160)
        a = random_walk(compiled_engine, players, seed, steps).state
        b = random_walk(interpreted_engine, players, seed, steps).state
        for ev in evs:
            assert ev.values(a) == pytest.approx(ev.values(b), abs=1e-9)
        fa = load_build(True).kashgar.KashgarSearchGame().features(a, 0)
        fb = load_build(False).kashgar.KashgarSearchGame().features(b, 0)
        assert fa == pytest.approx(fb, abs=1e-12)
        partial_reach += 0.0 < fa[FIXED.index("best_contract")] < 6.0
    assert partial_reach > 20  # partly covered contracts were seen (and counted) often


def test_features_read_the_position(engine: object) -> None:
    st = random_walk(engine, 3, 7, 90).state
    core = build_for(st).kashgar.KashgarSearchGame()
    slugs = engine_kind_slugs()
    for p in range(3):
        f = dict(zip(feature_names(slugs), core.features(st, p), strict=True))
        assert f["vp"] == st.vp(p)  # type: ignore[attr-defined]
        assert f["spices"] == sum(min(st.res(p, r), 7) for r in range(5))  # type: ignore[attr-defined]
        assert f["gold"] == min(st.res(p, 5), 7)  # type: ignore[attr-defined]
        assert f["mules"] == min(st.res(p, 6), 5)  # type: ignore[attr-defined]
        assert f["best_contract"] <= f["contracts_in_reach"]
        assert f["caravans"] in (3, 4)
        assert sum(v for k, v in f.items() if k.startswith("card:")) == f["caravan_cards"]
        assert f["caravan_cards"] >= f["caravans"] - 1  # a caravan may have been emptied, not many


def test_hand_weights_are_the_first_heuristic(engine: object) -> None:
    # VP + 0.2 spice + 0.18 gold + 0.22 mules + 0.35 best contract, at softmax scale 0.35.
    st = random_walk(engine, 2, 3, 70).state
    core = build_for(st).kashgar.KashgarSearchGame()
    for p in range(2):
        f = dict(zip(FIXED, core.features(st, p), strict=False))
        want = 0.35 * (f["vp"] + 0.2 * f["spices"] + 0.18 * f["gold"] + 0.22 * f["mules"]
                       + 0.35 * f["best_contract"])
        assert HandWeightsValue().values(st)[p] == pytest.approx(want)


def test_phase_weights_grow_with_the_leaders_vp(compiled_engine: object) -> None:
    st = random_walk(compiled_engine, 2, 5, 200).state
    core = load_build(True).kashgar.KashgarSearchGame()
    t = core.progress(st)
    vp = [st.vp(p) for p in range(2)]  # type: ignore[attr-defined]
    assert t == pytest.approx(min(1.0, max(vp) / 25.0))
    only_b = WeightedValue({"vp": (0.0, 1.0)})
    assert only_b.values(st) == pytest.approx([t * v for v in vp])


def test_shipped_weights_load_and_cover_the_fixed_features() -> None:
    w = load_weights()
    assert set(FIXED) <= set(w)
    assert w["vp"][0] + w["vp"][1] > 0  # more VP is better at any stage of the game
    doc = json.loads(Path("bots/data/eval_weights.json").read_text())
    fitted = doc["fit"]["held_out_log_loss"]
    assert fitted["fitted"] < fitted["hand"] < fitted["chance"]


@pytest.mark.parametrize("doc", [{}, {"weights": {}}, {"weights": {"vp": 1}}, {"weights": {"vp": [1, "x"]}}])
def test_bad_weights_documents_are_rejected(doc: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(ValueError, match="weights"):
        parse_weights(doc)


def _synthetic(weights: list[float], n: int = 6000, seats: int = 3) -> Positions:
    """Positions whose winner is drawn from softmax(features @ weights)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, seats, len(weights)))
    z = x @ np.asarray(weights)
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y = np.array([rng.choice(seats, p=row) for row in p])
    return Positions(x, y, np.arange(n))


def test_fit_recovers_a_known_model() -> None:
    pos = _synthetic([2.0, 0.5, 0.0])
    w = fit(pos, np.eye(3), l2=0.0)
    assert w == pytest.approx([2.0, 0.5, 0.0], abs=0.12)
    assert log_loss(w, pos)[0] < log_loss(np.zeros(3), pos)[0]


def test_fit_allows_no_negative_weight() -> None:
    # the data say -1; the model (more of a good thing is never worse) answers 0
    w = fit(_synthetic([-1.0]), np.eye(1), l2=0.0, free=0)
    assert w[0] == 0.0


def test_the_constrained_model_keeps_the_hand_heuristics_proportions() -> None:
    names = feature_names(engine_kind_slugs())
    nf = len(names)
    basis = hybrid_basis(names)
    m = np.zeros(basis.shape[1])
    m[0], m[1] = 0.5, 2.0  # scale 0.5 at the start, 2 at the end; no card values
    w = basis @ m
    hand = np.asarray(weight_vector(HAND_WEIGHTS, names))
    assert w[:nf] == pytest.approx(0.5 * hand[:nf])
    assert w[:nf] + w[nf:] == pytest.approx(2.0 * hand[:nf])


def test_self_play_positions_are_labelled_with_the_winner() -> None:
    rows, winner = play_positions((0, "greedy:evaluator=kashgar,samples=1", 2, 9, 5))
    n = len(feature_names(engine_kind_slugs()))
    assert rows and all(len(r) == 2 and len(r[0]) == 2 * n for r in rows)
    assert winner in (0, 1)
    last = rows[-1]
    assert last[0][0] + last[1][0] > rows[0][0][0] + rows[0][1][0]  # VP went up during the game


def test_fit_eval_command_writes_a_usable_weights_file(tmp_path: Path) -> None:
    out = tmp_path / "w.json"
    assert kashgar(["fit-eval", "--policy", "greedy:evaluator=kashgar,samples=1", "-n", "6", "-j", "1",
                    "--every", "3", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["fit"]["games"] == 6 and doc["fit"]["positions"] > 20
    ev = FittedValue(path=str(out))
    st = engine_ext.get_engine(None).new_game(players=2, seed=1).state
    assert len(ev.values(st)) == 2
    assert set(HAND_WEIGHTS) <= set(doc["weights"])
