"""SPSA tuning of the evaluation weights (`lab.spsa`, `kashgar tune-eval`): the optimiser climbs a
noisy pairwise objective, the parameters map onto weights, and real greedy game pairs say which
weight set plays better."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest

from bots.features import HAND_WEIGHTS, load_weights, parse_weights
from engine_ext import Engine
from lab.spsa import CARDS, PairPlayer, SpsaConfig, default_params, spsa, theta_of, weights_of
from tests.engine_helpers import random_walk


def distance(a: dict[str, float], b: dict[str, float]) -> float:
    """Euclidean distance between two parameter vectors (over a's names)."""
    return math.sqrt(sum((a[p] - b[p]) ** 2 for p in a))


def _noisy_match(target: dict[str, float], seed: int):  # type: ignore[no-untyped-def]
    """Game pairs whose winner is drawn from a logistic model of -||theta - target||^2: the closer
    side wins more often, and every result is -1, 0 or +1 as a real pair's is."""
    rng = random.Random(seed)

    def strength(th: dict[str, float]) -> float:
        return -sum((th[p] - target[p]) ** 2 for p in target)

    def play(tasks: list[tuple[dict[str, float], dict[str, float], int]]) -> list[float]:
        out = []
        for plus, minus, _ in tasks:
            p = 1 / (1 + math.exp(-40 * (strength(plus) - strength(minus))))
            games = [1.0 if rng.random() < p else -1.0 for _ in range(2)]
            out.append(sum(games) / 2)
        return out

    return play


def test_spsa_climbs_a_noisy_pairwise_objective() -> None:
    target = {"x.a": 0.4, "y.a": -0.3, "z.b": 0.1}
    start = {p: 0.0 for p in target}
    cfg = SpsaConfig(iterations=3000, c=0.1, lr=0.5, seed=3, batch=8)
    res = spsa(start, _noisy_match(target, 4), cfg)
    assert distance(start, target) > 0.5
    assert distance(res.theta, target) < 0.15, res.theta
    assert res.pairs == 3000 and len(res.history) == 3000 // 8


def test_spsa_does_not_drift_when_nothing_matters() -> None:
    start = {"x.a": 0.2, "y.a": -0.1}
    coin = random.Random(5)
    cfg = SpsaConfig(iterations=2000, c=0.05, lr=0.1, seed=6)
    res = spsa(start, lambda tasks: [coin.choice((-1.0, 0.0, 0.0, 1.0)) for _ in tasks], cfg)
    assert distance(res.theta, start) < 0.1
    assert abs(res.score) < 0.05


def test_parameters_map_onto_weights() -> None:
    params = default_params()
    assert "vp.a" in params and "caravans.b" in params and CARDS in params
    theta = theta_of(HAND_WEIGHTS, params, cards=0.0)
    assert theta["vp.a"] == HAND_WEIGHTS["vp"][0] and theta["caravans.a"] == 0.0
    table = {"card:bauer": (0.2, 0.4), "card:hirte": (-0.1, 0.0)}
    w = weights_of({**theta, "vp.b": 0.05, CARDS: 0.5}, dict(HAND_WEIGHTS), table)
    assert w["vp"] == (HAND_WEIGHTS["vp"][0], 0.05)
    assert w["card:bauer"] == (0.1, 0.2) and w["card:hirte"] == (-0.05, 0.0)
    assert w["spices"] == HAND_WEIGHTS["spices"]
    assert "card:bauer" not in weights_of(theta_of(HAND_WEIGHTS, ["vp.a"]), dict(HAND_WEIGHTS), table)


def test_real_game_pairs_tell_a_sensible_weight_set_from_a_blind_one() -> None:
    params = ["vp.a", "spices.a", "gold.a", "mules.a", "best_contract.a"]
    hand = theta_of(HAND_WEIGHTS, params)
    blind = {p: 0.0 for p in params}  # every position looks the same: the greedy bot plays at random
    with PairPlayer(dict(HAND_WEIGHTS), {}, workers=1) as play:
        results = play([(hand, blind, s) for s in range(12)])
        again = play([(hand, blind, s) for s in range(3)])
        mirror = play([(hand, hand, s) for s in range(4)])
    assert again == results[:3]  # a pair is a function of its seed
    assert all(r in (-1.0, 0.0, 1.0) for r in results + mirror)
    assert sum(results) >= 9, results  # the heuristic wins almost every game against blind play


def test_cli_writes_a_loadable_weights_file(tmp_path: Path) -> None:
    from kashgar_cli.main import main

    out = tmp_path / "w.json"
    assert main(["tune-eval", "-n", "4", "--batch", "2", "-j", "1", "--seed", "2", "--out", str(out),
                 "--params", "vp.a,gold.b,cards"]) == 0
    doc = json.loads(out.read_text())
    assert doc["tuned"]["pairs"] == 4
    assert set(doc["tuned"]["theta"]) == {"vp.a", "gold.b", CARDS}
    weights = parse_weights(doc)
    assert weights == load_weights(str(out))
    assert any(k.startswith("card:") for k in weights)

    from bots.greedy import GreedyBot
    from lab.bots import make_bot

    bot = make_bot(f"greedy:evaluator=fitted,weights={out}")
    assert isinstance(bot, GreedyBot) and bot.weights == str(out)


def test_cli_rejects_an_unknown_parameter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kashgar_cli.main import main

    assert main(["tune-eval", "-n", "2", "-j", "1", "--out", str(tmp_path / "w.json"), "--params", "vp.c"]) == 2
    assert "unknown parameter 'vp.c'" in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()


def test_the_tuned_evaluator_rolls_out_by_its_own_weights() -> None:
    from bots.evaluate import FittedValue, HandWeightsValue, TunedValue

    tuned = TunedValue()
    doc = json.loads(Path("bots/data/eval_tuned.json").read_text())
    assert doc["tuned"]["pairs"] >= 1000  # the shipped file comes from a real run
    assert tuned.weights == parse_weights(doc)
    assert tuned.rollout_weights() == tuned.engine_weights() != HandWeightsValue().engine_weights()
    same_file = FittedValue(path="bots/data/eval_tuned.json")
    assert same_file.engine_weights() == tuned.engine_weights()
    assert same_file.rollout_weights() == HandWeightsValue().rollout_weights()


def test_a_macro_search_makes_its_in_turn_choices_by_the_tuned_weights(compiled_engine: Engine) -> None:
    from lab.bots import make_bot

    st = random_walk(compiled_engine, 2, 11, 60).state
    assert not st.is_terminal()
    spec = "ismcts:iterations=400,macro=1,rollout=turn,eps=0,{}"
    by_tuned = make_bot(spec.format("evaluator=tuned")).analyse(st, seed=5)
    by_hand = make_bot(spec.format("evaluator=fitted,weights=bots/data/eval_tuned.json")).analyse(st, seed=5)
    # the same leaf values; only the greedy choices inside the simulated turns differ
    assert [a.visits for a in by_tuned.alternatives] != [a.visits for a in by_hand.alternatives]


def test_card_parameters_expand_one_per_card_and_bad_ones_are_named() -> None:
    from lab.spsa import expand_params

    cards = ["card:bauer", "card:hirte", "vp"]
    assert expand_params(["vp.a", "card:*.a"], cards) == ["vp.a", "card:bauer.a", "card:hirte.a"]
    assert expand_params(["card:hirte.b", "card:hirte.b"], cards) == ["card:hirte.b"]
    with pytest.raises(ValueError, match="'card:nobody.a'"):
        expand_params(["card:nobody.a"], cards)
    with pytest.raises(ValueError, match="not both"):
        expand_params([CARDS, "card:bauer.a"], cards)
    theta = {"card:bauer.a": 0.3, "vp.b": 0.1}
    w = weights_of(theta, {"card:bauer": (0.0, 0.2)}, {"card:bauer": (9.0, 9.0)})
    assert w["card:bauer"] == (0.3, 0.2) and w["vp"] == (0.0, 0.1)  # no multiplier: the table is unused


def test_an_injected_leaf_evaluator_is_the_one_the_search_uses(compiled_engine: Engine) -> None:
    from bots.evaluate import PlayWeightsValue
    from lab.bots import make_bot

    st = random_walk(compiled_engine, 2, 11, 60).state
    spec = "ismcts:iterations=300,macro=1,rollout=turn,eps=0"
    by_file = make_bot(spec + ",evaluator=tuned").analyse(st, seed=5)
    injected = make_bot(spec)
    injected.leaf_value = PlayWeightsValue(load_weights("bots/data/eval_tuned.json"))
    same = injected.analyse(st, seed=5)
    assert [(a.code, a.visits) for a in same.alternatives] == [(a.code, a.visits) for a in by_file.alternatives]
    injected.leaf_value = PlayWeightsValue(dict(HAND_WEIGHTS))
    other = injected.analyse(st, seed=5)
    assert [(a.code, a.visits) for a in other.alternatives] != [(a.code, a.visits) for a in by_file.alternatives]


def test_search_game_pairs_tell_a_sensible_weight_set_from_a_blind_one() -> None:
    from lab.spsa import pair_bot

    params = ["vp.a", "spices.a", "gold.a", "mules.a", "best_contract.a"]
    hand = theta_of(HAND_WEIGHTS, params)
    blind = {p: 0.0 for p in params}
    bot = pair_bot("ismcts:iterations=30,macro=1,rollout=turn", dict(HAND_WEIGHTS))
    assert bot.leaf_value.weights == dict(HAND_WEIGHTS)
    assert bot.leaf_value.rollout_weights() == bot.leaf_value.engine_weights()
    with PairPlayer(dict(HAND_WEIGHTS), {}, workers=1, bot="ismcts:iterations=30,macro=1,rollout=turn") as play:
        results = play([(hand, blind, s) for s in range(16)])
    assert sum(results) >= 10, results  # searching a blind evaluation is no match for the heuristic


def test_game_pairs_refuse_a_player_that_cannot_take_weights(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from kashgar_cli.main import main

    assert main(["tune-eval", "-n", "2", "-j", "1", "--out", str(tmp_path / "w.json"), "--bot", "random"]) == 2
    assert "bot 'random'" in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()
