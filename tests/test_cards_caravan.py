"""Cards that change caravans: removing cards (Mundschenk, Hochstapler, Zigeuner) and the
Aristokratin's fourth caravan (CARDS.md)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from builders import assert_turn_over, caravans, options, play, res, resources_dict, solo


def _removed(g: Any) -> Counter[str]:
    return Counter(g.to_json()["removed"])


def test_mundschenk_a_removes_other_card_of_this_caravan(engine: Any) -> None:
    g = engine.from_json(solo("mundschenk", rest=("patriarch", "bauer")))
    play(g, "c0:a")
    # caravan 0 is now [patriarch, bauer, mundschenk]: only the two others may go
    assert options(g, "remove ") == {"remove c0 0", "remove c0 1"}
    play(g, "remove c0 0")
    assert caravans(g, 0)[0] == ["bauer", "mundschenk"]
    assert _removed(g) == Counter(["patriarch"])
    assert res(g, 0) == resources_dict(3)
    assert_turn_over(g, 1)


def test_mundschenk_part_removes_two_from_one_caravan(engine: Any) -> None:
    g = engine.from_json(solo("mundschenk", rest=("korbmacher",)))
    play(g, "c0:part")
    assert options(g, "remove ") == {"remove c0 0", "remove c1 0", "remove c1 1", "remove c2 0",
                                     "remove c2 1"}
    play(g, "remove c1 0")
    assert caravans(g, 0)[1] == ["marktfrau"]
    play(g, "remove c1 0")
    assert caravans(g, 0) == [["korbmacher"], [], ["patriarch", "pflanzerin"]]
    assert _removed(g) == Counter(["mundschenk", "patriarch", "marktfrau"])
    assert_turn_over(g, 1)


def test_mundschenk_part_two_caravans(engine: Any) -> None:
    g = engine.from_json(solo("mundschenk", rest=("korbmacher",)))
    play(g, "c0:part", "remove c2 1", "remove c0 0")
    assert caravans(g, 0) == [[], ["patriarch", "marktfrau"], ["patriarch"]]
    assert _removed(g) == Counter(["mundschenk", "pflanzerin", "korbmacher"])
    assert_turn_over(g, 1)


def test_mundschenk_part_up_to_two(engine: Any) -> None:
    """'Up to 2': the player may stop after one card, or remove none."""
    g = engine.from_json(solo("mundschenk", rest=("korbmacher",)))
    play(g, "c0:part", "remove c1 1", "skip")
    assert caravans(g, 0) == [["korbmacher"], ["patriarch"], ["patriarch", "pflanzerin"]]
    assert _removed(g) == Counter(["mundschenk", "marktfrau"])
    assert_turn_over(g, 1)
    g = engine.from_json(solo("mundschenk", rest=("korbmacher",)))
    play(g, "c0:part", "skip")
    assert _removed(g) == Counter(["mundschenk"])
    assert_turn_over(g, 1)


def test_mundschenk_part_cannot_touch_opponents(engine: Any) -> None:
    g = engine.from_json(solo("mundschenk", rest=("korbmacher",)))
    play(g, "c0:part")
    before = g.to_json()["seats"][1]
    play(g, "remove c0 0", "remove c1 0")
    assert g.to_json()["seats"][1] == before


def test_hochstapler_part_removes_other_card_of_this_caravan(engine: Any) -> None:
    g = engine.from_json(solo("hochstapler", rest=("patriarch", "bauer")))
    play(g, "c0:part")
    assert options(g, "remove ") == {"remove c0 0", "remove c0 1"}
    play(g, "remove c0 0")
    assert caravans(g, 0)[0] == ["bauer"]
    assert _removed(g) == Counter(["hochstapler", "patriarch"])
    assert res(g, 0) == resources_dict(3)
    assert_turn_over(g, 1)


def _answer_forced_remove(g: Any, expected: str) -> None:
    """The engine may ask which Patriarch goes (a caravan can hold several); here only one can."""
    if g.to_json()["pending"] is not None:
        assert options(g, "remove ") == {expected}
        play(g, expected)


def test_zigeuner_a_removes_patriarch_of_this_caravan(engine: Any) -> None:
    g = engine.from_json(solo("zigeuner", rest=("patriarch", "bauer")))
    play(g, "c0:a")
    _answer_forced_remove(g, "remove c0 0")  # caravan 0: [patriarch, bauer, zigeuner]
    assert caravans(g, 0) == [["bauer", "zigeuner"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
    assert _removed(g) == Counter(["patriarch"])
    assert res(g, 0) == resources_dict(3)
    assert_turn_over(g, 1)


def test_zigeuner_a_removes_matriarch_too(engine: Any) -> None:
    g = engine.from_json(solo("zigeuner", rest=("bauer", "matriarch")))
    play(g, "c0:a")
    _answer_forced_remove(g, "remove c0 1")  # caravan 0: [bauer, matriarch, zigeuner]
    assert caravans(g, 0)[0] == ["bauer", "zigeuner"]
    removed = g.to_json()["removed"]
    assert len(removed) == 1 and removed[0] in ("patriarch", "matriarch")
    assert_turn_over(g, 1)


def test_zigeuner_a_chooses_among_several_patriarchs(engine: Any) -> None:
    g = engine.from_json(solo("zigeuner", rest=("patriarch", "bauer", "matriarch")))
    play(g, "c0:a")
    assert options(g, "remove ") == {"remove c0 0", "remove c0 2"}
    play(g, "remove c0 2")
    assert caravans(g, 0)[0] == ["patriarch", "bauer", "zigeuner"]
    assert_turn_over(g, 1)


def test_zigeuner_a_without_patriarch_does_nothing(engine: Any) -> None:
    g = engine.from_json(solo("zigeuner", rest=("bauer",)))
    play(g, "c0:a")
    assert caravans(g, 0) == [["bauer", "zigeuner"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
    assert g.to_json()["removed"] == []
    assert_turn_over(g, 1)


def test_aristokratin_part_opens_fourth_caravan(engine: Any) -> None:
    g = engine.from_json(solo("aristokratin", rest=("korbmacher",)))
    play(g, "c0:part")
    doc = g.to_json()
    assert caravans(g, 0) == [["korbmacher"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"],
                              ["patriarch"]]
    assert doc["spare_patriarch"] is False
    assert doc["removed"] == ["aristokratin"]
    assert res(g, 0) == resources_dict(3)
    assert_turn_over(g, 1)
    # The new caravan is playable on the player's next turn.
    play(g, "c0:b")  # player 1's Patriarch
    assert {"c3:a", "c3:b"} <= options(g, "c3:")


def test_aristokratin_part_without_spare_does_nothing(engine: Any) -> None:
    g = engine.from_json(solo("aristokratin", rest=("korbmacher",), spare_patriarch=False))
    play(g, "c0:part")
    assert len(caravans(g, 0)) == 3
    assert caravans(g, 0)[0] == ["korbmacher"]
    assert g.to_json()["spare_patriarch"] is False
    assert_turn_over(g, 1)
