"""The learned policy (`bots.policy`): its input in both builds, its file, the search's continuation
and prior with it, and its training (`lab.policy`) on a tiny data set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bots.ismcts_bot import ISMCTSConfig, make_value, search_game
from bots.levels import get_level, make_bot
from bots.policy import DECISION_KINDS, POLICY_FILE, load_policy, policy_feature_names
from tests.engine_helpers import random_walk


def master_game(st: Any, **kw: Any) -> Any:
    cfg = get_level("master").config.with_(**kw)
    return search_game(make_value(cfg.evaluator, st, cfg.scale, cfg.weights), st, cfg)


def write_policy(path: Path, weights: dict[str, float]) -> str:
    names = policy_feature_names()
    w = [weights.get(n, 0.0) for n in names]
    path.write_text(json.dumps({"format": 1, "features": names, "weights": w}))
    return str(path)


def stats(spec: str, st: Any, seed: int = 1) -> list[tuple[int, int]]:
    return [(a.code, a.visits) for a in make_bot(spec).analyse(st, seed=seed).alternatives]


def test_policy_features_agree_in_both_builds(compiled_engine: Any, interpreted_engine: Any) -> None:
    names = policy_feature_names()
    for seed in range(12):
        players, steps = 2 + seed % 3, 7 * seed
        a = random_walk(compiled_engine, players, seed, steps).state
        b = random_walk(interpreted_engine, players, seed, steps).state
        fa, fb = master_game(a).policy_features(a), master_game(b).policy_features(b)
        assert len(fa) == len(a.legal_codes()) and all(len(row) == len(names) for row in fa)
        for ra, rb in zip(fa, fb, strict=True):
            assert ra == pytest.approx(rb, abs=1e-12)


def test_policy_features_say_what_the_decision_does(engine: Any) -> None:
    names = policy_feature_names()
    st = engine.new_game(2, seed=3).state
    rows = master_game(st).policy_features(st)
    kind = [n for n in names if n.startswith("kind.")]
    for code, row in zip(st.legal_codes(), rows, strict=True):
        assert [n for n in kind if row[names.index(n)] == 1.0] == [f"kind.{DECISION_KINDS[(code >> 8) - 1]}"]
        after = st.clone()
        after.apply(code)
        assert row[names.index("change.vp")] == after.vp(0) - st.vp(0)


def test_the_shipped_policy_loads_once_and_scores_every_legal_decision(engine: Any) -> None:
    w = load_policy(str(POLICY_FILE))
    assert len(w) == len(policy_feature_names())
    assert load_policy(str(POLICY_FILE)) is w  # read once per process
    st = random_walk(engine, 2, 4, 30).state
    sg = master_game(st, policy="learned")
    rows = sg.policy_features(st)
    assert sg.policy_scores(st) == pytest.approx([sum(a * b for a, b in zip(r, w, strict=True)) for r in rows])


def test_a_policy_file_of_other_inputs_is_refused(tmp_path: Path) -> None:
    p = tmp_path / "bad.json"
    p.write_text(json.dumps({"format": 1, "features": ["vp"], "weights": [1.0]}))
    with pytest.raises(ValueError, match="inputs"):
        load_policy(str(p))
    with pytest.raises(ValueError, match="prior"):
        ISMCTSConfig(prior=1.0)


def test_a_policy_of_the_greedy_value_alone_searches_as_master(tmp_path: Path, compiled_engine: Any) -> None:
    greedy = write_policy(tmp_path / "greedy.json", {"change.greedy_value": 1.0})
    for seed in (0, 5):
        st = random_walk(compiled_engine, 2, seed, 10 * seed).state
        assert stats(f"level:master:iterations=200,policy={greedy}", st) == stats("level:master:iterations=200", st)


def test_the_continuation_plays_the_policy(tmp_path: Path, engine: Any) -> None:
    contrary = write_policy(tmp_path / "contrary.json", {"change.greedy_value": -1.0})
    st = engine.new_game(2, seed=2).state
    sg = master_game(st, policy=contrary)
    plain = master_game(st)
    from bots import build_for

    rng = build_for(st).search.Rng
    n = len(st.legal_codes())
    greedy = [plain.greedy_choice(st, rng(k)) for k in range(5)]
    ours = [sg.greedy_choice(st, rng(k)) for k in range(5)]
    values = plain.policy_features(st)
    gi = policy_feature_names().index("change.greedy_value")
    worst = min(r[gi] for r in values)
    assert n > 1 and all(values[st.legal_codes().index(c)][gi] == worst for c in ours)
    assert set(ours) != set(greedy)
    spec = f"level:master:iterations=300,policy={contrary}"
    assert stats(spec, st) == stats(spec, st)  # deterministic by seed
    assert stats(spec, st) != stats("level:master:iterations=300", st)
    sampled = spec + ",policy_temp=1.0"
    assert stats(sampled, st, 7) == stats(sampled, st, 7)


def test_the_prior_expands_the_policys_first_choice_first(tmp_path: Path, engine: Any) -> None:
    pol = write_policy(tmp_path / "p.json", {"change.greedy_value": 1.0, "kind.select": 0.5})
    st = random_walk(engine, 2, 8, 40).state
    sg = master_game(st, policy=pol)
    scores = sg.policy_scores(st)
    best = st.legal_codes()[scores.index(max(scores))]
    bot = make_bot(f"level:master:policy={pol},prior=2.0")
    s, _, _ = bot.search(st, iterations=1, seed=3)
    assert [c for c, _, _, _ in s.root_stats()] == [best]
    spec = f"level:master:iterations=300,policy={pol},prior=2.0"
    assert stats(spec, st) == stats(spec, st)


def test_a_policy_only_at_the_root_leaves_the_continuation_greedy(tmp_path: Path, engine: Any) -> None:
    contrary = write_policy(tmp_path / "contrary.json", {"change.greedy_value": -1.0})
    st = engine.new_game(2, seed=2).state
    from bots import build_for

    rng = build_for(st).search.Rng
    plain = master_game(st)
    root_only = master_game(st, policy=contrary, prior=1.0, policy_below=0)
    greedy = [plain.greedy_choice(st, rng(k)) for k in range(5)]
    assert [root_only.greedy_choice(st, rng(k)) for k in range(5)] == greedy
    assert root_only.policy_scores(st) == master_game(st, policy=contrary).policy_scores(st)  # the prior's
    spec = f"level:master:iterations=300,policy={contrary},prior=1.0"
    assert stats(spec + ",policy_below=0", st) not in (stats(spec, st), stats("level:master:iterations=300", st))
    with pytest.raises(ValueError, match="policy_below"):
        ISMCTSConfig(policy="learned", policy_below=0)  # no prior: the policy would do nothing


def test_the_policy_trains_on_a_tiny_data_set(tmp_path: Path) -> None:
    pytest.importorskip("scipy", reason="the train extra (pip install -e '.[train]')")
    from lab.policy import decisions, fit, model_document, train
    from lab.policy_games import play_game

    games = [play_game("level:master:iterations=40", 2, deal, deal) for deal in (11, 12, 13)]
    assert all(m[1] is None or sum(v for _, v in m[1]) > 0 for g in games for m in g["moves"])
    data = decisions(games)
    w = fit(data, alpha=1e-3, max_iter=100)
    from lab.policy import cross_entropy

    z0 = cross_entropy(data.x @ (0.0 * w), data)
    assert cross_entropy(data.x @ w, data) < z0  # better than uniform on what it was fitted to
    w2, report = train(games, held_out=0.34)
    assert report["held_out"]["games"] == 1 and 0.0 <= report["held_out"]["top1"] <= 1.0
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(model_document(w2, report, games=["tiny"])))
    import engine_ext

    st = random_walk(engine_ext.get_engine(), 2, 1, 5).state
    sg = master_game(st, policy=str(path))
    rows = sg.policy_features(st)
    assert sg.policy_scores(st) == pytest.approx([float(sum(a * b for a, b in zip(r, w2, strict=True))) for r in rows],
                                                 rel=1e-6, abs=1e-9)
