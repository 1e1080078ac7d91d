"""Cards that change caravans: removing cards (Mundschenk, Hochstapler, Zigeuner), the
Aristokratin's fourth caravan (docs/rules.md#aristokratin-aristocrat), and the Hirte's routes
(docs/rules.md#hirte-herder)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from engine_ext import Decision, DecisionError, StateError
from engine_ext.checks import problems
from tests.builders import (
    assert_turn_over,
    caravans,
    current_player,
    make_state,
    options,
    play,
    res,
    resources_dict,
    solo,
)


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


# --- Hirte: every front card to a different caravan, several may share one ---------------------
# docs/rules.md#hirte-herder, the card index: "The order in which the front cards are moved is left
# to each player. It is possible that in a caravan 2 cards are placed at the back. It is only
# important that for each caravan the front card is placed at the back of a different caravan."

# a whole game's cards: 3 Start cards and a Patriarch per caravan each, the Aristokratin (removed)
# gave player 0 a fourth caravan with the spare Patriarch
HIRTE_MINE = [["hirte", "patriarch"], ["knecht", "patriarch"], ["prophet", "patriarch", "bauer"],
              ["schreiber", "patriarch"]]
OPP = [["patriarch", "kraemerin"], ["patriarch", "wagner"], ["patriarch", "korbmacher"]]


def _hirte_routing(engine: Any) -> Any:
    """Player 0 has played the Hirte of caravan 0 (4 caravans) and now routes: its caravans are
    [patriarch, hirte], [knecht, patriarch], [prophet, patriarch, bauer], [schreiber, patriarch]."""
    g = engine.from_json(make_state(caravans=[HIRTE_MINE, OPP], removed=["aristokratin"], spare_patriarch=False))
    assert problems(g) == []
    play(g, "c0:a")
    assert current_player(g) == 0 and g.to_json()["pending"]["wait"] == "route"
    return g


def _routing_with(engine: Any, nonempty: list[int]) -> Any:
    """The routing step of `_hirte_routing`, with only the caravans `nonempty` (0 among them)
    holding cards (the others' cards are back in the Standard deck)."""
    doc = _hirte_routing(engine).to_json()
    doc.pop("decks")  # derived again from what is left in play
    for c in range(4):
        if c not in nonempty:
            doc["seats"][0]["caravans"][c] = []
    return engine.from_json(doc)


@pytest.mark.parametrize("nonempty,routes", [([0, 1, 2], 14), ([0, 2, 3], 14), ([0, 1, 2, 3], 225)])
def test_hirte_route_counts(engine: Any, nonempty: list[int], routes: int) -> None:
    """3 and 4 non-empty caravans: 14 and 225 routes; only non-empty caravans give or receive,
    and no front card stays in its own caravan."""
    g = _routing_with(engine, nonempty)
    found = options(g, "route ")
    assert len(found) == len(g.legal_codes()) == routes
    for text in found:
        to = [int(x) for x in text.split(" order")[0].split()[1:]]
        assert len(to) == len(nonempty)
        assert all(t in nonempty and t != src for src, t in zip(nonempty, to, strict=True))


@pytest.mark.parametrize("nonempty", [[0, 1], [0, 3]])
def test_hirte_routing_two_caravans_is_never_asked(engine: Any, nonempty: list[int]) -> None:
    """With 2 non-empty caravans there is one route (a swap), which play makes itself: a document
    that asks for it is refused."""
    with pytest.raises(StateError) as err:
        _routing_with(engine, nonempty)
    assert err.value.pointer == "/pending" and "(route " in err.value.message


def test_hirte_two_caravans_is_forced(engine: Any) -> None:
    """With 2 non-empty caravans the one route (a swap) is made without a decision."""
    mine = [["hirte", "bauer"], ["hoeker", "zuechter"]]
    g = engine.from_json(make_state(caravans=[mine, OPP[:2]], spare_patriarch=False))
    play(g, "c0:a")
    assert caravans(g, 0) == [["hirte", "hoeker"], ["zuechter", "bauer"]]
    assert caravans(g, 1) == [["kraemerin", "patriarch"], ["wagner", "patriarch"]]
    assert_turn_over(g, 1)


@pytest.mark.parametrize("route,back", [("route 1 0 0 0", ["knecht", "prophet", "schreiber"]),
                                        ("route 1 0 0 0 order 1 3 2 0", ["knecht", "schreiber", "prophet"]),
                                        ("route 1 0 0 0 order 3 2 1 0", ["schreiber", "prophet", "knecht"])])
def test_hirte_several_fronts_to_one_caravan_in_the_chosen_order(engine: Any, route: str, back: list[str]) -> None:
    """Caravans 1, 2 and 3 all give their front card to caravan 0, which gets them at its back in
    the order they are moved (caravan order unless `order` says otherwise); caravan 0's front goes to
    caravan 1, and caravans 2 and 3 receive none."""
    g = _hirte_routing(engine)
    play(g, route)
    assert caravans(g, 0) == [["hirte", *back], ["patriarch", "patriarch"], ["patriarch", "bauer"], ["patriarch"]]
    assert [len(c) for c in caravans(g, 0)] == [4, 2, 2, 1]
    assert problems(g) == []
    assert current_player(g) == 1 and g.to_json()["pending"]["wait"] == "route"


def test_hirte_two_fronts_to_one_caravan_either_order(engine: Any) -> None:
    """Two fronts to one caravan: the chosen order, and the reverse order gives the reverse."""
    ends = {}
    for route in ("route 2 0 0 1", "route 2 0 0 1 order 2 1 3 0"):
        g = _hirte_routing(engine)
        play(g, route)
        ends[route] = caravans(g, 0)
        assert problems(g) == []
    rest = [["patriarch", "schreiber"], ["patriarch", "bauer", "patriarch"], ["patriarch"]]
    assert ends["route 2 0 0 1"] == [["hirte", "knecht", "prophet"], *rest]
    assert ends["route 2 0 0 1 order 2 1 3 0"] == [["hirte", "prophet", "knecht"], *rest]
    assert [len(c) for c in ends["route 2 0 0 1"]] == [3, 2, 3, 1]


def test_hirte_route_keeps_vp_and_bookkeeping(engine: Any) -> None:
    """Routing moves cards between one player's caravans: VP unchanged, every check holds, and the
    state reads back as itself after each route."""
    g0 = _hirte_routing(engine)
    vp = g0.vp(0)
    for code in g0.legal_codes():
        g = g0.clone()
        g.apply(code)
        assert g.vp(0) == vp
        assert sum(len(c) for c in caravans(g, 0)) == 9
        assert problems(g) == []
        assert engine.from_json(g.to_json()).to_json() == g.to_json()


def test_hirte_route_forms_round_trip(engine: Any) -> None:
    """Every legal route of a 4-caravan position: code -> Decision -> text -> Decision -> code, and
    the same through JSON; the repr reads back; each route is a different outcome."""
    g = _hirte_routing(engine)
    outcomes = set()
    for code in g.legal_codes():
        d = g.decision(code)
        assert Decision.parse(str(d)) == d
        assert Decision.parse(str(d)).to_code(g.state, engine.data) == code
        assert Decision.from_json(d.to_json()) == d
        assert Decision.from_json(d.to_json()).to_code(g.state, engine.data) == code
        assert eval(repr(d), {"Decision": Decision}) == d
        assert ("order" in d.to_json()) == (" order " in str(d))
        h = g.clone()
        h.apply(d.to_json())
        outcomes.add(str(h.to_json()["seats"][0]["caravans"]))
    assert len(outcomes) == 225


def test_hirte_route_old_forms_and_any_order(engine: Any) -> None:
    """Texts and JSON without `order` (cards sharing a destination in caravan order) still work; any
    `order` that lists the sources once means the same outcome as its canonical form (only the order
    within each destination counts)."""
    g = _hirte_routing(engine)
    assert g.code("route 1 0 3 2") == g.code({"kind": "route", "to": [1, 0, 3, 2]})
    assert str(g.decision(g.code({"kind": "route", "to": [1, 0, 3, 2]}))) == "route 1 0 3 2"
    plain = g.code("route 1 0 0 0")
    # caravan order within each destination: the canonical form leaves `order` out
    assert Decision.parse("route 1 0 0 0 order 1 2 3 0") == Decision.parse("route 1 0 0 0")
    assert Decision.parse("route 1 0 0 0 order 0 1 2 3") == Decision.parse("route 1 0 0 0")
    assert g.code("route 1 0 0 0 order 0 1 2 3") == plain
    assert g.code({"kind": "route", "to": [1, 0, 0, 0], "order": [1, 2, 0, 3]}) == plain
    # another order within destination 0, written ungrouped: canonical is grouped by destination
    d = Decision.parse("route 1 0 0 0 order 0 3 1 2")
    assert str(d) == "route 1 0 0 0 order 3 1 2 0"
    assert d.to_json() == {"kind": "route", "to": [1, 0, 0, 0], "order": [3, 1, 2, 0]}
    assert g.code(d) == g.code({"kind": "route", "to": [1, 0, 0, 0], "order": [3, 1, 0, 2]}) != plain
    assert str(g.decision(g.code(d))) == "route 1 0 0 0 order 3 1 2 0"


@pytest.mark.parametrize("bad", ["route 1 0 0 0 order", "route 1 0 0 0 order 0 1 2",
                                 "route 1 0 0 0 order 0 1 2 2", "route 1 0 0 0 order 0 1 2 3 0",
                                 "route 1 0 0 0 order 0 1 2 x", "route 1 0 0 0 order 0 1 2 9",
                                 "route 1 0 0 0 orderly 0 1 2 3"])
def test_hirte_bad_order_text(bad: str) -> None:
    with pytest.raises(DecisionError) as info:
        Decision.parse(bad)
    assert info.value.pointer == "/order"


@pytest.mark.parametrize("order", [[0, 1, 2], [0, 1, 1, 2], [0, 1, 2, 4], [0, 1, 2, -1], "0 1 2 3",
                                   [0, 1, 2, True], [0, 1, 2, 3.0], None])
def test_hirte_bad_order_json(order: Any) -> None:
    obj: dict[str, Any] = {"kind": "route", "to": [1, 0, 0, 0], "order": order}
    if order is None:
        assert Decision.from_json(obj) == Decision.parse("route 1 0 0 0")  # null: no order
        return
    with pytest.raises(DecisionError) as info:
        Decision.from_json(obj)
    assert info.value.pointer == "/order"


def test_hirte_order_must_list_the_players_caravans(engine: Any) -> None:
    """Caravans 0, 1 and 3 hold cards: an `order` naming caravan 2 (empty) is refused on /order."""
    g = _routing_with(engine, [0, 1, 3])
    assert g.code("route 1 0 0 order 0 3 1") == g.code("route 1 0 0 order 3 1 0")
    for bad in ("route 1 0 0 order 0 2 1", {"kind": "route", "to": [1, 0, 0], "order": [0, 1, 2]}):
        with pytest.raises(DecisionError) as info:
            g.code(bad)
        assert info.value.pointer == "/order"
    with pytest.raises(DecisionError) as info:
        g.code("route 2 0 0")  # caravan 2 is not a destination
    assert info.value.pointer == "/to"
