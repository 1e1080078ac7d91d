"""`kashgar review`'s table counts seats and moves from 1, as every text for people does."""

from __future__ import annotations

from kashgar_cli.review import table


def test_the_table_names_seats_in_words() -> None:
    seat = {"accuracy": 80.0, "mean_loss": 0.05, "inaccuracy": 1, "mistake": 0, "blunder": 0}
    review = {"level": "master", "reviewed": 2, "seats": [{"seat": 0, **seat}, {"seat": 1, **seat}],
              "decisions": [{"move": 3, "seat": 1, "class": "inaccuracy", "played_words": "keep Farmer",
                             "played_win_prob": 0.4, "best_words": "keep Warrior", "best_win_prob": 0.52}]}
    lines = table(review).splitlines()
    assert lines[2].startswith("seat 1 ") and lines[3].startswith("seat 2 ")  # the JSON's seats 0 and 1
    assert lines[-1] == "move   3, seat 2 ?! inaccuracy: keep Farmer (40%); better: keep Warrior (52%)"
