"""Judging a played decision (bots/review.py): the loss in win chance against the level's choice, its
class by the thresholds, a seat's accuracy."""

from __future__ import annotations

import zlib
from typing import Any

import pytest

from bots import review
from bots.answer import AlternativeStats, Answer
from bots.levels import get_level
from engine_ext.decisions import Decision


def _code(text: str) -> int:
    return zlib.crc32(text.encode())  # a made-up code, one per decision


def _answer(best: str, *alts: tuple[str, int, float | None]) -> Answer:
    rows = tuple(AlternativeStats(Decision.parse(t), _code(t), v, 0.5, wp, 3.0) for t, v, wp in alts)
    return Answer(decision=Decision.parse(best), code=_code(best), alternatives=rows, line=(), win_prob=None,
                  iterations=sum(v for _, v, _ in alts), elapsed_ms=1.0, seed=0, level=get_level("novice"),
                  compiled=True, workers=1, parts=1, player=0, bot="novice")


def judge(answer: Answer, played: str) -> dict[str, Any]:
    return review.judge(answer, Decision.parse(played))


def judge_all(answers: list[Answer], played: str) -> dict[str, Any]:
    return review.judge_all(answers, Decision.parse(played))


@pytest.mark.parametrize(("loss", "cls"), [
    (None, None), (0.0, None), (review.INACCURACY - 1e-9, None), (review.INACCURACY, "inaccuracy"),
    (review.MISTAKE - 1e-9, "inaccuracy"), (review.MISTAKE, "mistake"), (review.BLUNDER, "blunder"), (0.9, "blunder"),
])
def test_a_loss_is_classed_by_the_thresholds(loss: float | None, cls: str | None) -> None:
    assert review.classify(loss) == cls


def test_the_thresholds_rise() -> None:
    assert 0 < review.INACCURACY < review.MISTAKE < review.BLUNDER < 1


def test_accuracy_is_100_without_loss_and_falls_with_it() -> None:
    assert review.move_accuracy(0.0) == pytest.approx(100.0, abs=1e-3)
    values = [review.move_accuracy(x / 100) for x in range(0, 101, 5)]
    assert values == sorted(values, reverse=True) and values[-1] == 0.0
    assert review.move_accuracy(0.10) == pytest.approx(63.6, abs=0.1)


def test_the_played_move_is_judged_against_the_most_visited() -> None:
    a = _answer("c0:a", ("c0:a", 900, 0.62), ("c1:b", 80, 0.37), ("c2:a", 20, 0.30))
    v = judge(a, "c1:b")
    assert (v["best"], v["best_win_prob"], v["played_win_prob"], v["played_visits"]) == ("c0:a", 0.62, 0.37, 80)
    assert v["loss"] == pytest.approx(0.25) and v["class"] == "mistake"
    assert judge(a, "c0:a")["loss"] == 0.0 and judge(a, "c0:a")["class"] is None
    assert judge(a, "c2:a")["class"] == "blunder"


def test_a_move_rated_higher_on_fewer_visits_is_no_loss() -> None:
    v = judge(_answer("c0:a", ("c0:a", 900, 0.50), ("c1:a", 40, 0.55)), "c1:a")
    assert v["loss"] == 0.0 and v["class"] is None


def test_a_move_the_search_never_tried_is_not_rated() -> None:
    a = _answer("c0:a", ("c0:a", 1000, 0.6), ("c1:a", 0, None))
    for played in ("c1:a", "c3:b"):  # unvisited, or not among the alternatives at all
        v = judge(a, played)
        assert v["loss"] is None and v["class"] is None and v["played_win_prob"] is None


def test_the_smaller_loss_of_two_searches_counts() -> None:
    one = _answer("c0:a", ("c0:a", 900, 0.62), ("c1:b", 80, 0.27))  # this seed sees a blunder
    two = _answer("c1:b", ("c1:b", 700, 0.55), ("c0:a", 300, 0.52))  # this one prefers the move played
    v = judge_all([one, two], "c1:b")
    assert v["loss"] == 0.0 and v["class"] is None and v["best"] == "c1:b"
    assert judge_all([one, _answer("c0:a", ("c0:a", 9, 0.6))], "c1:b")["loss"] == pytest.approx(0.35)
    unrated = judge_all([_answer("c0:a", ("c0:a", 9, 0.6))], "c1:b")
    assert unrated["loss"] is None and unrated["class"] is None


def test_a_seat_is_summed_up_over_its_rated_decisions() -> None:
    rows = [{"seat": 0, "loss": 0.0, "class": None}, {"seat": 0, "loss": 0.3, "class": "blunder"},
            {"seat": 1, "loss": 0.06, "class": "inaccuracy"}, {"seat": 1, "loss": None, "class": None}]
    s0, s1 = review.seat_summary(rows, [0, 1])
    assert (s0["decisions"], s0["rated"], s0["mean_loss"], s0["blunder"], s0["mistake"]) == (2, 2, 0.15, 1, 0)
    assert s0["accuracy"] == pytest.approx((review.move_accuracy(0.0) + review.move_accuracy(0.3)) / 2, abs=0.01)
    assert (s1["decisions"], s1["rated"], s1["mean_loss"], s1["inaccuracy"]) == (2, 1, 0.06, 1)
    assert review.seat_summary([], [2]) == [{"seat": 2, "decisions": 0, "rated": 0, "mean_loss": None,
                                             "accuracy": None, "inaccuracy": 0, "mistake": 0, "blunder": 0}]
