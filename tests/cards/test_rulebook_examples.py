"""The worked examples of the rules texts (docs/rules.md#worked-examples), as tests.

- the rules: the Patriarch turn example and the contract-fulfilment example (Krämerin, large contract).
- the card index: the examples of Bäcker, Bettler, Böttcher, Bootsmann, Fahrender Händler,
  Geldeintreiber, Gönnerin, Händlertochter, Hirte, Höker, Hufschmied, Kurtisane, Dorfschönheit,
  Mundschenk.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.builders import (
    assert_turn_over,
    caravans,
    current_player,
    deck,
    make_state,
    options,
    play,
    res,
    resources_dict,
    solo,
)

START_CARAVANS = [["patriarch", "kraemerin"], ["patriarch", "knecht"], ["patriarch", "prophet"]]


def test_patriarch_turn_example(engine: Any) -> None:
    """The player selects the Patriarch of caravan 1, draws Pflanzerin and Bäcker, keeps the
    Pflanzerin behind the Patriarch, the Bäcker goes to the Standard discard pile."""
    doc = make_state(caravans=[START_CARAVANS], standard_top=["pflanzerin", "baecker"])
    g = engine.from_json(doc)
    assert options(g, "c0:") == {"c0:a", "c0:b"}  # free, and cannot be passed
    play(g, "c0:a")
    assert options(g, "keep ") == {"keep pflanzerin", "keep baecker"}
    play(g, "keep pflanzerin")
    assert caravans(g, 0) == [["kraemerin", "patriarch", "pflanzerin"], ["patriarch", "knecht"],
                              ["patriarch", "prophet"]]
    assert g.to_json()["discard"] == ["baecker"]
    assert res(g, 0) == resources_dict(3)  # both Patriarch actions are free
    assert_turn_over(g, 1)


def test_patriarch_turn_example_second_action(engine: Any) -> None:
    """...or the Patriarch turns to the Matriarch at the back, and no card is drawn."""
    doc = make_state(caravans=[START_CARAVANS], standard_top=["pflanzerin", "baecker"])
    g = engine.from_json(doc)
    play(g, "c0:b")
    assert caravans(g, 0)[0] == ["kraemerin", "matriarch"]
    assert g.to_json()["discard"] == []
    assert deck(g.to_json(), "standard")[:2] == ["pflanzerin", "baecker"]
    assert_turn_over(g, 1)


def test_contract_fulfilment_example(engine: Any) -> None:
    """Krämerin's parting action fulfils the 4-VP large contract: at least 3 mules (met),
    pay 1 mule and 6 cinnamon; the contract lies with the player; the display is refilled."""
    cars = [["kraemerin", "patriarch"], ["patriarch", "knecht"], ["patriarch", "prophet"]]
    start = resources_dict(3, cinnamon=6)
    doc = make_state(caravans=[cars], resources=[start], display=[17, 1, 9, 29], contract_top=[22])
    g = engine.from_json(doc)
    vp_before = g.vp(0)
    play(g, "c0:part", "fulfil 17")
    after = g.to_json()
    assert res(g, 0) == {**start, "mules": 2, "cinnamon": 0}
    assert after["seats"][0]["contracts"] == [17]
    assert "kraemerin" in after["removed"]
    assert caravans(g, 0)[0] == ["patriarch"]
    assert sorted(after["display"]) == [1, 9, 22, 29]
    assert g.vp(0) == vp_before - 1 + 4  # the Krämerin (1 VP) left, the contract (4 VP) came
    assert_turn_over(g, 1)


def test_baecker_example(engine: Any) -> None:
    """Opponents have cinnamon 4 and 6: the player raises cinnamon to 6."""
    resources = [resources_dict(3, cinnamon=1), resources_dict(3, cinnamon=4), resources_dict(3, cinnamon=6)]
    g = engine.from_json(solo("baecker", players=3, resources=resources))
    play(g, "c0:a", "choose cinnamon")
    assert res(g, 0)["cinnamon"] == 6
    assert res(g, 1)["cinnamon"] == 4 and res(g, 2)["cinnamon"] == 6


def test_bettler_example(engine: Any) -> None:
    """One opponent 5 -> 3, another 1 -> 0; an opponent is at 0, so the player sets gold to 6."""
    resources = [resources_dict(3, gold=2), resources_dict(3, gold=5), resources_dict(3, gold=1)]
    g = engine.from_json(solo("bettler", players=3, resources=resources))
    play(g, "c0:a")
    assert [res(g, p)["gold"] for p in range(3)] == [6, 3, 0]


def test_bettler_example_opponent_already_at_zero(engine: Any) -> None:
    """'This would also have been the case if an opponent had Gold at 0 even before.'"""
    resources = [resources_dict(3, gold=2), resources_dict(3, gold=5), resources_dict(3, gold=0)]
    g = engine.from_json(solo("bettler", players=3, resources=resources))
    play(g, "c0:a")
    assert [res(g, p)["gold"] for p in range(3)] == [6, 3, 0]


def test_boettcher_example(engine: Any) -> None:
    """The player sets gold to 4 and increases mules by 1."""
    g = engine.from_json(solo("boettcher", res0=resources_dict(3, gold=7, mules=2)))
    play(g, "c0:a", "choose gold")
    assert res(g, 0) == resources_dict(3, gold=4, mules=3)


def test_bootsmann_example(engine: Any) -> None:
    """Second caravan action: pepper -4, ginger set to 9; pepper cannot be lowered by 4 and then set to 9."""
    start = resources_dict(3, pepper=6, ginger=2, cinnamon=4)
    g = engine.from_json(solo("bootsmann", res0=start))
    play(g, "c0:b")
    assert options(g, "choose ") == {"choose pepper", "choose cinnamon"}
    play(g, "choose pepper")
    assert "choose pepper" not in options(g, "choose ")
    play(g, "choose ginger")
    assert res(g, 0) == {**start, "pepper": 2, "ginger": 9}


def test_fahrender_haendler_example(engine: Any) -> None:
    """Gold -4: pepper +4, cinnamon +2, mules +1."""
    start = resources_dict(3, gold=5, pepper=1, cinnamon=2, mules=2)
    g = engine.from_json(solo("fahrender_haendler", res0=start))
    play(g, "c0:a", "pay 4", "choose pepper", "choose pepper", "choose cinnamon", "choose mules")
    assert res(g, 0) == {**start, "gold": 1, "pepper": 5, "cinnamon": 4, "mules": 3}
    assert_turn_over(g, 1)


def test_geldeintreiber_caravan_example(engine: Any) -> None:
    """3 fulfilled contracts: gold and pepper +3 each."""
    g = engine.from_json(solo("geldeintreiber", contracts=[[1, 9, 29]]))
    play(g, "c0:a")
    assert res(g, 0) == resources_dict(3, gold=6, pepper=6)


def test_geldeintreiber_parting_example(engine: Any) -> None:
    """4 fulfilled contracts: draw 4 Special, one to the back of this caravan, three under the deck."""
    top = ["bootsmann", "schneider", "gildenherr", "hufschmied", "haendlertochter"]
    g = engine.from_json(solo("geldeintreiber", rest=("korbmacher",), contracts=[[1, 9, 29, 2]],
                              special_top=top))
    n = len(deck(g.to_json(), "special"))
    play(g, "c0:part")
    assert options(g, "keep ") == {f"keep {c}" for c in top[:4]}
    play(g, "keep gildenherr")
    assert caravans(g, 0)[0] == ["korbmacher", "gildenherr"]
    special = deck(g.to_json(), "special")
    assert len(special) == n - 1
    assert special[0] == "haendlertochter"
    assert Counter(special[-3:]) == Counter(["bootsmann", "schneider", "hufschmied"])
    assert_turn_over(g, 1)


def test_goennerin_example(engine: Any) -> None:
    """A caravan of 4 cards (Gönnerin included): ginger +4 (not +3 ginger and +1 cinnamon)."""
    g = engine.from_json(solo("goennerin", rest=("korbmacher", "marktfrau", "recke")))
    play(g, "c0:a")
    assert not options(g, "choose gold")
    play(g, "choose ginger")
    assert res(g, 0) == resources_dict(3, ginger=7)
    assert_turn_over(g, 1)


def test_haendlertochter_example(engine: Any) -> None:
    """2 Patriarchs face up, the third on its Matriarch side: gold +2 and ginger +2."""
    g = engine.from_json(solo("haendlertochter", rest=("patriarch",),
                              others=(("patriarch", "marktfrau"), ("matriarch", "pflanzerin"))))
    play(g, "c0:a", "choose ginger")
    assert res(g, 0) == resources_dict(3, gold=5, ginger=5)
    assert_turn_over(g, 1)


def test_hirte_example(engine: Any) -> None:
    """Every caravan gives its front card to the back of a different caravan; the order is the
    player's, and a caravan may get 2 cards at its back (so another gets none)."""
    mine = [["bauer", "recke", "hoeker"], ["zuechter", "schmied"]]
    opp = [["patriarch", "korbmacher"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
    g = engine.from_json(solo("hirte", rest=("adelige",), others=mine, caravans=[None, opp]))
    play(g, "c0:a")
    # caravan 0 is [adelige, hirte]
    assert {"route 1 2 0", "route 2 0 1", "route 1 0 0", "route 1 0 0 order 2 1 0"} <= options(g, "route ")
    play(g, "route 2 0 1")
    assert caravans(g, 0) == [["hirte", "bauer"], ["recke", "hoeker", "zuechter"], ["schmied", "adelige"]]
    assert current_player(g) == 1
    play(g, "route 1 2 0")
    assert_turn_over(g, 1)


def test_hirte_example_two_cards_placed_in_one_caravan(engine: Any) -> None:
    """"It is possible that in a caravan 2 cards are placed at the back": the fronts of caravans 1
    and 2 both go to caravan 0, in the order the player moves them; caravan 0's goes to caravan 1."""
    mine = [["bauer", "recke", "hoeker"], ["zuechter", "schmied"]]
    opp = [["patriarch", "korbmacher"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
    for route, back in (("route 1 0 0", ["bauer", "zuechter"]), ("route 1 0 0 order 2 1 0", ["zuechter", "bauer"])):
        g = engine.from_json(solo("hirte", rest=("adelige",), others=mine, caravans=[None, opp]))
        play(g, "c0:a", route)
        assert caravans(g, 0) == [["hirte", *back], ["recke", "hoeker", "adelige"], ["schmied"]]
        assert current_player(g) == 1


def test_hoeker_example(engine: Any) -> None:
    """Missing spices paid with gold, only those: the card index example (docs/rules.md#hoeker-hawker:
    4 pepper and 6 cinnamon with 3 pepper and 4 cinnamon, gold -3) restated on contract 25 (1 mule +
    4 cinnamon + 4 pepper, mules >= 4), the reconstructed contract closest to it: pepper 3,
    cinnamon 2 -> pepper 0, cinnamon 0, gold -3."""
    start = resources_dict(3, pepper=3, cinnamon=2, gold=5, mules=4)
    g = engine.from_json(solo("hoeker", res0=start, display=[25, 1, 9, 29], contract_top=[5]))
    play(g, "c0:a", "fulfil 25")
    assert res(g, 0) == {**start, "pepper": 0, "cinnamon": 0, "gold": 2, "mules": 3}
    assert g.to_json()["seats"][0]["contracts"] == [25]


def test_hufschmied_example(engine: Any) -> None:
    """Drawn: 1 large, 1 small, 1 special contract. Small and special fulfilled free, no immediate
    payout for the special one; the large one goes under the deck."""
    start = resources_dict(2, mules=1)
    g = engine.from_json(solo("hufschmied", rest=("korbmacher",), res0=start, contract_top=[20, 12, 39, 6]))
    play(g, "c0:a")
    while g.to_json()["pending"] is not None and options(g, "fulfil "):
        play(g, sorted(options(g, "fulfil "))[0])
    doc = g.to_json()
    assert sorted(doc["seats"][0]["contracts"]) == [12, 39]
    assert res(g, 0) == {**start, "mules": 0}  # no +6 gold from contract 39
    assert deck(doc, "contract")[-1] == 20
    assert deck(doc, "contract")[0] == 6
    assert_turn_over(g, 1)


def test_hufschmied_example_wheat_field_raises_bauer(engine: Any) -> None:
    g = engine.from_json(solo("hufschmied", rest=("bauer",), res0=resources_dict(2, mules=1),
                              contract_top=[20, 12, 33, 6]))
    vp_before = g.vp(0)
    play(g, "c0:a")
    while g.to_json()["pending"] is not None and options(g, "fulfil "):
        play(g, sorted(options(g, "fulfil "))[0])
    assert sorted(g.to_json()["seats"][0]["contracts"]) == [12, 33]
    assert g.vp(0) == vp_before + 3 + 1 + 1  # small 12, wheat field 33, and the Bauer grows by 1


def test_kurtisane_example(engine: Any) -> None:
    """All opponents turn Patriarchs to Matriarchs and back, without moving them."""
    p1 = [["patriarch", "bauer"], ["recke", "matriarch"], ["patriarch", "hoeker"]]
    p2 = [["schmied", "patriarch"], ["matriarch", "zuechter"], ["adelige"]]
    g = engine.from_json(solo("kurtisane", rest=("patriarch",), players=3, caravans=[None, p1, p2]))
    play(g, "c0:a")
    assert caravans(g, 1) == [["matriarch", "bauer"], ["recke", "patriarch"], ["matriarch", "hoeker"]]
    assert caravans(g, 2) == [["schmied", "matriarch"], ["patriarch", "zuechter"], ["adelige"]]
    assert caravans(g, 0)[0] == ["patriarch", "kurtisane"]


def test_dorfschoenheit_example(engine: Any) -> None:
    """Every player's Patriarchs go to the front of their caravans; Matriarchs stay where they are."""
    p1 = [["bauer", "recke", "patriarch"], ["hoeker", "matriarch"], ["patriarch", "adelige"]]
    g = engine.from_json(solo("dorfschoenheit", rest=("korbmacher", "patriarch"), caravans=[None, p1],
                              others=(("marktfrau", "matriarch"), ("pflanzerin", "patriarch"))))
    play(g, "c0:part")
    assert caravans(g, 0) == [["patriarch", "korbmacher"], ["marktfrau", "matriarch"],
                              ["patriarch", "pflanzerin"]]
    assert caravans(g, 1) == [["patriarch", "bauer", "recke"], ["hoeker", "matriarch"],
                              ["patriarch", "adelige"]]


def test_mundschenk_example_caravan(engine: Any) -> None:
    """The caravan action removes one card of this caravan, even a Patriarch."""
    g = engine.from_json(solo("mundschenk", rest=("patriarch", "recke")))
    play(g, "c0:a", "remove c0 0")
    assert caravans(g, 0)[0] == ["recke", "mundschenk"]
    assert g.to_json()["removed"] == ["patriarch"]


def test_mundschenk_example_parting(engine: Any) -> None:
    """The parting action removes up to 2 cards, from the same or from different caravans."""
    g = engine.from_json(solo("mundschenk", rest=("recke",)))
    play(g, "c0:part", "remove c1 0", "remove c2 1")
    assert caravans(g, 0) == [["recke"], ["marktfrau"], ["patriarch"]]
    assert Counter(g.to_json()["removed"]) == Counter(["mundschenk", "patriarch", "pflanzerin"])
    assert_turn_over(g, 1)
