"""The person's rating (bots/rating.py): the model on known cases, monotone in the results, the
prior's hold on a first game, and the coverage of its interval for simulated people: a level's Elo
playing 20 games against random bot levels, their results drawn from the logistic Elo model (each
pair on its own, and as the ranks of a game whose pairs share the person's play), and once from
real games of a low level played through the lab's arena."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from bots import rating as R

ELOS = R.served_ladder()
MIDDLE = R.ladder_middle(ELOS)
GUMBEL = R.ELO_SCALE / math.log(10.0)  # the scale whose Gumbel differences are the logistic Elo model


def test_the_shipped_ladder_and_its_middle() -> None:
    assert ELOS["novice"] == 0.0 and ELOS["master"] == pytest.approx(1032.7)
    assert MIDDLE == pytest.approx(1032.7 / 2)
    assert R.nearest_level(640, ELOS) == "skilled" and R.nearest_level(-500, ELOS) == "novice"
    assert R.nearest_level(5000, ELOS) == "master"


def test_a_known_case_three_wins_in_four_is_the_logistic_elo_of_a_075_score() -> None:
    games = [R.Game((500.0,), (s,)) for s in (1.0, 1.0, 1.0, 0.0)]
    flat = R.rate(games, prior_mean=0.0, prior_sd=1e7)  # the prior as good as flat: the MLE
    assert flat.elo == pytest.approx(500 + 400 * math.log10(3), abs=0.01)  # 690.8
    assert flat.low < flat.elo < flat.high
    even = R.rate([R.Game((500.0,), (1.0,)), R.Game((500.0,), (0.0,))], prior_mean=500.0)
    assert even.elo == pytest.approx(500.0) and even.high - 500 == pytest.approx(500 - even.low)


def test_many_games_the_interval_is_the_curvatures() -> None:
    """With 400 games the posterior is near normal: the profile interval is the MAP plus or minus
    1.96 over the square root of the information."""
    games = [R.Game((600.0,), (1.0 if i % 3 else 0.0,)) for i in range(400)]
    r = R.rate(games, MIDDLE)
    p = R.expected_score(r.elo, 600.0)
    sd = 1 / math.sqrt(400 * R.K ** 2 * p * (1 - p) + 1 / R.PRIOR_SD ** 2)
    assert r.high - r.elo == pytest.approx(1.96 * sd, rel=0.03) and r.elo - r.low == pytest.approx(1.96 * sd, rel=0.03)


def test_no_game_is_the_prior() -> None:
    r = R.rate([], MIDDLE)
    assert r.games == 0 and r.elo == pytest.approx(MIDDLE)
    assert r.low == pytest.approx(MIDDLE - 1.96 * 350, abs=0.5)
    assert r.high == pytest.approx(MIDDLE + 1.96 * 350, abs=0.5)
    assert r.to_dict() == {"elo": 516, "interval": [-170, 1202], "games": 0, "confidence": 0.95,
                           "prior": {"mean": 516, "sd": 350}}


def test_monotone_in_the_results() -> None:
    """A loss made a draw, a draw made a win, or a stronger opponent beaten: never a lower rating."""
    rng = random.Random(4)
    for _ in range(30):
        games = [R.Game(tuple(ELOS[rng.choice(list(ELOS))] for _ in range(n - 1)),
                        tuple(rng.choice((0.0, 0.5, 1.0)) for _ in range(n - 1)))
                 for n in (rng.randint(2, 4) for _ in range(rng.randint(1, 12)))]
        base = R.rate(games, MIDDLE)
        k = rng.randrange(len(games))
        g = games[k]
        j = rng.randrange(len(g.scores))
        if g.scores[j] < 1:
            better = list(games)
            better[k] = R.Game(g.opponents, g.scores[:j] + (g.scores[j] + 0.5,) + g.scores[j + 1:])
            up = R.rate(better, MIDDLE)
            assert up.elo > base.elo and up.low > base.low and up.high > base.high
        if g.scores[j] == 1:
            stronger = list(games)
            stronger[k] = R.Game(g.opponents[:j] + (g.opponents[j] + 100,) + g.opponents[j + 1:], g.scores)
            assert R.rate(stronger, MIDDLE).elo > base.elo
    wins = [R.rate([R.Game((452.8,), (1.0,))] * n + [R.Game((452.8,), (0.0,))] * 3, MIDDLE).elo for n in range(8)]
    assert wins == sorted(wins) and len(set(wins)) == 8


def test_one_game_says_little() -> None:
    """After one game (whose maximum likelihood alone is at plus or minus infinity) the rating stays
    on the ladder with an interval about as wide as the ladder (over 1,000 Elo); the expected result
    (a win against novice, a loss to master) moves it from the middle by less than 40 Elo; an upset
    moves it more, towards the beaten (or beating) level, not past it."""
    low, high = min(ELOS.values()), max(ELOS.values())
    for level in ELOS:
        for score in (0.0, 1.0):
            r = R.rate([R.Game((ELOS[level],), (score,))], MIDDLE)
            assert low < r.elo < high and r.high - r.low > 1000, (level, score, r)
            assert (r.elo > MIDDLE) == (score == 1.0)
    assert abs(R.rate([R.Game((ELOS["novice"],), (1.0,))], MIDDLE).elo - MIDDLE) < 40
    assert abs(R.rate([R.Game((ELOS["master"],), (0.0,))], MIDDLE).elo - MIDDLE) < 40
    beat_master = R.rate([R.Game((ELOS["master"],), (1.0,))], MIDDLE)
    assert beat_master.elo < ELOS["master"] and beat_master.low < MIDDLE
    lost_to_novice = R.rate([R.Game((ELOS["novice"],), (0.0,))], MIDDLE)
    assert lost_to_novice.elo > ELOS["novice"] and lost_to_novice.high > MIDDLE


def test_pairwise_scores_the_winner_above_all_then_by_vp() -> None:
    assert R.pairwise_scores([25, 25, 20], 1, 0) == [0.0, 1.0]  # lost the tie-break, above seat 3
    assert R.pairwise_scores([25, 25, 20], 0, 0) == [1.0, 1.0]
    assert R.pairwise_scores([20, 25, 20, 25], 1, 0) == [0.0, 0.5, 0.0]
    assert R.pairwise_scores([20, 25, 20, 25], 1, 3) == [1.0, 0.0, 1.0]
    assert R.pairwise_scores([20, 20], None, 1) == [0.5]


def test_a_result_and_a_record_read_as_the_same_game() -> None:
    from engine_ext import record as records
    from tests.builders import random_record

    rec = random_record(seed=7, moves=10_000, rng_seed=7, players=3)
    rec["seats"] = [{"seat": 0, "level": "club"}, {"seat": 1, "level": None}, {"seat": 2, "level": "master"}]
    assert records.replay(rec).is_terminal
    g = R.game_of_record(rec, ELOS)
    res = rec["result"]
    assert g == R.game_of_result(["club", None, "master"], res["vp"], res["winner"], ELOS)
    assert g.opponents == (ELOS["club"], ELOS["master"]) and g.weight == 0.75


def test_a_bot_at_an_elo_is_an_opponent_of_that_elo() -> None:
    """A seat of level `elo:N` (the table's bot at Elo N) is an opponent of Elo N, in a result and
    in a record; a malformed one is named by its field."""
    g = R.game_of_result([None, "elo:640", "club"], [25, 20, 26], 2, ELOS)
    assert g.opponents == (640.0, ELOS["club"]) and g.scores == (1.0, 0.0)
    assert R.game_of_result([None, "elo:-50.5"], [1, 2], None, ELOS).opponents == (-50.5,)  # any finite number
    rec = {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
           "seats": [{"seat": 0, "level": "elo:452.8"}, {"seat": 1, "level": None}],
           "result": {"vp": [25, 20], "winner": 0, "is_terminal": True}}
    assert R.game_of_record(rec, ELOS) == R.Game((452.8,), (0.0,)) == R.game_of_result(
        ["club", None], [25, 20], 0, ELOS)  # club's Elo, as the level or as elo:452.8
    for bad in ("elo:x", "elo:", "elo:inf", "elo:640:p=1"):
        with pytest.raises(R.RatingError, match="elo:N takes a finite number") as err:
            R.game_of_result([None, "club", bad], [25, 20, 3], 0, ELOS)
        assert err.value.pointer == "/levels/2"
        with pytest.raises(R.RatingError) as err:
            R.game_of_record({**rec, "seats": [{"seat": 1, "level": None}, {"seat": 0, "level": bad}]}, ELOS)
        assert err.value.pointer == "/seats/1/level", err.value.message


@pytest.mark.parametrize("change, pointer", [
    ({"seats": [{"seat": 0, "level": None}, {"seat": 1, "level": None}]}, "/seats"),
    ({"seats": [{"seat": 0, "level": None}, {"seat": 1, "level": "grandmaster"}]}, "/seats/1/level"),
    ({"seats": [{"seat": 0, "level": None}, {"seat": 0, "level": "club"}]}, "/seats/1/seat"),
    ({"seats": [{"seat": 1, "level": "club"}]}, "/seats"),
    ({"seats": None}, "/seats"),
    ({"result": None}, "/result"),
    ({"result": {"vp": [3, 4], "winner": -1, "is_terminal": False}}, "/result/is_terminal"),
    ({"result": {"vp": [3], "winner": 0, "is_terminal": True}}, "/result/vp"),
    ({"result": {"vp": [3, 30], "winner": 0, "is_terminal": True}}, "/result/winner"),
])
def test_a_record_the_rating_cannot_read_is_named_by_its_field(change: dict[str, Any], pointer: str) -> None:
    rec = {"schema": "kashgar/record@1", "players": 2, "seed": 1, "moves": [],
           "seats": [{"seat": 0, "level": None}, {"seat": 1, "level": "club"}],
           "result": {"vp": [25, 20], "winner": 0, "is_terminal": True}}
    rec.update(change)
    with pytest.raises(R.RatingError) as err:
        R.game_of_record(rec, ELOS)
    assert err.value.pointer == pointer, err.value.message


def _simulated(true: float, rng: random.Random, ranks: bool, players: tuple[int, ...]) -> list[R.Game]:
    """20 games of a person of Elo `true` against random bot levels: each pair drawn on its own from
    the logistic model, or (`ranks`) the game's seats ranked by Elo plus a Gumbel noise each, whose
    pairwise marginals are the same logistic model but whose pairs share the person's play."""
    names = list(ELOS)
    games = []
    for _ in range(20):
        n = rng.choice(players)
        opponents = tuple(ELOS[rng.choice(names)] for _ in range(n - 1))
        if ranks:
            play = [e - GUMBEL * math.log(-math.log(rng.random())) for e in (true, *opponents)]
            winner = max(range(n), key=lambda p: play[p])
            scores = tuple(R.pairwise_scores(play, winner, 0))
        else:
            scores = tuple(1.0 if rng.random() < R.expected_score(true, e) else 0.0 for e in opponents)
        games.append(R.Game(opponents, scores))
    return games


@pytest.mark.parametrize("ranks, players", [(False, (2,)), (True, (2, 3, 4))], ids=["pairs-2p", "ranks-2to4p"])
def test_coverage_simulated_people_after_20_games(ranks: bool, players: tuple[int, ...]) -> None:
    """Each level's Elo as a person: in 200 runs of 20 games each, the interval holds it in at least 90%."""
    for k, (level, true) in enumerate(ELOS.items()):
        rng = random.Random(1000 * k + (7 if ranks else 3))
        runs = [R.rate(_simulated(true, rng, ranks, players), MIDDLE) for _ in range(200)]
        held = sum(r.low <= true <= r.high for r in runs) / len(runs)
        assert held >= 0.90, (level, held)
        assert sum(r.high - r.low for r in runs) / len(runs) < 600  # and 20 games say something


def test_real_games_of_casual_played_as_the_person() -> None:
    """casual as the person, 20 real 2-player games (lab's arena, seats alternating) against bot
    levels drawn at random from novice to expert: the interval holds casual's measured Elo."""
    from lab.arena import play_game

    rng = random.Random(3)
    opponents = [n for n in ELOS if n != "master"]  # master's search costs seconds a game
    games = []
    for g in range(20):
        other = rng.choice(opponents)
        res = play_game((g, ["casual", other], 2, 5000 + g, "kashgar", None))
        seat = res.seats.index("casual") if res.seats[0] != res.seats[1] else g % 2
        levels: list[str | None] = list(res.seats)
        levels[seat] = None
        games.append(R.game_of_result(levels, res.vps, res.winner, ELOS))
    r = R.rate(games, MIDDLE)
    assert r.low <= ELOS["casual"] <= r.high, r
