"""Contracts (docs/rules.md#contracts) and the cards that fulfil them.

Fulfilling a face-up contract needs at least its mule requirement (not paid) and pays its cost;
the immediate-payout contracts then give +6 pepper / +6 gold; the display is refilled to 4 from
the Contract deck. "fulfil free" ignores both requirement and cost.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import (
    CONTRACTS,
    RESOURCES,
    assert_turn_over,
    caravans,
    deck,
    options,
    play,
    res,
    resources_dict,
    solo,
)

CAP = {r: (6 if r == "mules" else 9) for r in RESOURCES}


def _fillers(n: int) -> tuple[list[int], int]:
    display = [m for m in (1, 9, 17, 29, 2, 10) if m != n][:3]
    top = next(m for m in (36, 35, 34) if m != n)
    return display, top


def _exact_resources(n: int) -> dict[str, int]:
    """Resources that can pay contract n: each cost +1, mules exactly the requirement."""
    c = CONTRACTS[n]
    start = resources_dict(2)
    for r, v in c.cost.items():
        if r != "mules":
            start[r] = v + 1
    start["mules"] = c.mules_required
    return start


@pytest.mark.parametrize("n", sorted(CONTRACTS))
def test_fulfil_contract_pays_cost_keeps_requirement(engine: Any, n: int) -> None:
    c = CONTRACTS[n]
    fillers, top = _fillers(n)
    start = _exact_resources(n)
    doc = solo("gewuerzhaendler", rest=("korbmacher",), res0=start, display=[n, *fillers], contract_top=[top])
    g = engine.from_json(doc)
    n_deck = len(deck(g.to_json(), "contract"))
    play(g, "c0:a", f"fulfil {n}")
    expected = dict(start)
    for r, v in c.cost.items():
        expected[r] -= v
    for r, v in c.payout.items():
        expected[r] = min(CAP[r], expected[r] + v)
    assert res(g, 0) == expected
    doc2 = g.to_json()
    assert doc2["seats"][0]["contracts"] == [n]
    assert sorted(doc2["display"]) == sorted([*fillers, top])
    assert len(deck(doc2, "contract")) == n_deck - 1
    assert g.vp(0) == c.vp - 1  # the Gewürzhändler is worth -1
    assert caravans(g, 0)[0] == ["korbmacher", "gewuerzhaendler"]
    assert_turn_over(g, 1)


def _fulfil_not_offered(g: Any, n: int) -> None:
    if "c0:a" in options(g, "c0:"):
        play(g, "c0:a")
        assert f"fulfil {n}" not in options(g, "fulfil ")
    doc = g.to_json()
    assert n in doc["display"]
    assert n not in doc["seats"][0]["contracts"]


@pytest.mark.parametrize("n", sorted(CONTRACTS))
def test_mule_requirement_must_be_met(engine: Any, n: int) -> None:
    """One mule short of the requirement (the mule cost alone would still be payable)."""
    start = _exact_resources(n)
    start["mules"] -= 1
    fillers, top = _fillers(n)
    g = engine.from_json(solo("gewuerzhaendler", res0=start, display=[n, *fillers], contract_top=[top]))
    _fulfil_not_offered(g, n)


COST_CASES = [(n, r) for n, c in sorted(CONTRACTS.items()) for r in c.cost]


@pytest.mark.parametrize("n,short", COST_CASES, ids=[f"{n}-{r}" for n, r in COST_CASES])
def test_cost_must_be_payable(engine: Any, n: int, short: str) -> None:
    start = _exact_resources(n)
    c = CONTRACTS[n]
    if short == "mules":
        # A mule cost larger than the mules held cannot happen with the requirement met
        # (requirement >= cost), so check the cost side via the requirement-free Gildenherr part.
        start["mules"] = c.cost["mules"] - 1
        fillers, top = _fillers(n)
        g = engine.from_json(solo("gildenherr", res0=start, display=[n, *fillers], contract_top=[top]))
        if "c0:part" in options(g, "c0:"):
            play(g, "c0:part")
            assert f"fulfil {n}" not in options(g, "fulfil ")
        return
    start[short] = c.cost[short] - 1
    fillers, top = _fillers(n)
    g = engine.from_json(solo("gewuerzhaendler", res0=start, display=[n, *fillers], contract_top=[top]))
    _fulfil_not_offered(g, n)


def test_only_payable_face_up_contracts_offered(engine: Any) -> None:
    # 1: 4 ginger (ok); 9: 3 ginger + 3 cloves (cloves 2: no); 17: mules>=3 (mules 2: no); 29: 2 ginger (ok)
    start = resources_dict(0, ginger=4, cloves=2, cinnamon=9, mules=2)
    g = engine.from_json(solo("gewuerzhaendler", res0=start, display=[1, 9, 17, 29]))
    play(g, "c0:a")
    assert options(g, "fulfil ") == {"fulfil 1", "fulfil 29"}


def test_kraemerin_part_fulfils_paying_cost(engine: Any) -> None:
    start = resources_dict(3, ginger=4, cloves=5)
    g = engine.from_json(solo("kraemerin", rest=("korbmacher",), res0=start, display=[1, 9, 17, 29],
                              contract_top=[5]))
    play(g, "c0:part", "fulfil 9")
    assert res(g, 0) == {**start, "ginger": 1, "cloves": 2}
    assert g.to_json()["seats"][0]["contracts"] == [9]
    assert sorted(g.to_json()["display"]) == [1, 5, 17, 29]
    assert caravans(g, 0)[0] == ["korbmacher"]
    assert g.to_json()["removed"] == ["kraemerin"]
    assert_turn_over(g, 1)


# --- Höker --------------------------------------------------------------------------------------


def test_hoeker_a_pays_lacking_spices_with_gold(engine: Any) -> None:
    """Contract 9 (3 ginger + 3 cloves): ginger 1, cloves 3, gold 5 -> ginger 0, cloves 0, gold 3."""
    start = resources_dict(3, ginger=1, cloves=3, gold=5)
    g = engine.from_json(solo("hoeker", rest=("korbmacher",), res0=start, display=[1, 9, 17, 29],
                              contract_top=[5]))
    play(g, "c0:a", "fulfil 9")
    assert res(g, 0) == {**start, "ginger": 0, "cloves": 0, "gold": 3}
    assert g.to_json()["seats"][0]["contracts"] == [9]
    assert_turn_over(g, 1)


def test_hoeker_a_does_not_pay_gold_for_spices_held(engine: Any) -> None:
    start = resources_dict(3, ginger=4, cloves=4, gold=9)
    g = engine.from_json(solo("hoeker", res0=start, display=[1, 9, 17, 29], contract_top=[5]))
    play(g, "c0:a", "fulfil 9")
    assert res(g, 0) == {**start, "ginger": 1, "cloves": 1}


def test_hoeker_a_gold_must_cover_what_is_lacking(engine: Any) -> None:
    """No spices at all, gold 5: only contracts lacking at most 5 spices are payable."""
    start = resources_dict(0, gold=5, mules=3)
    g = engine.from_json(solo("hoeker", res0=start, display=[1, 9, 17, 29], contract_top=[5]))
    play(g, "c0:a")
    fulfils = options(g, "fulfil ")
    assert "fulfil 9" not in fulfils  # 6 spices lacking
    assert "fulfil 17" not in fulfils  # 6 cinnamon lacking (and the mule)
    assert "fulfil 1" in fulfils  # 4 gold for 4 ginger
    assert "fulfil 29" in fulfils  # 2 gold for 2 ginger


def test_hoeker_a_mule_cost_and_requirement_not_replaced(engine: Any) -> None:
    start = resources_dict(0, gold=9, mules=2)
    g = engine.from_json(solo("hoeker", res0=start, display=[17, 1, 2, 29], contract_top=[5]))
    play(g, "c0:a")
    assert "fulfil 17" not in options(g, "fulfil ")  # mules 2 < 3


def test_hoeker_part_fulfils_without_gold_substitution(engine: Any) -> None:
    start = resources_dict(3, ginger=1, cloves=3, gold=9)
    g = engine.from_json(solo("hoeker", res0=start, display=[1, 9, 17, 29], contract_top=[5]))
    if "c0:part" in options(g, "c0:"):
        play(g, "c0:part")
        assert "fulfil 9" not in options(g, "fulfil ")
    g = engine.from_json(solo("hoeker", rest=("korbmacher",), res0=resources_dict(3, ginger=3),
                              display=[1, 9, 17, 29], contract_top=[5]))
    play(g, "c0:part", "fulfil 9")
    assert res(g, 0) == resources_dict(3, ginger=0, cloves=0)
    assert caravans(g, 0)[0] == ["korbmacher"]
    assert_turn_over(g, 1)


# --- Zimtfürst ----------------------------------------------------------------------------------


def test_zimtfuerst_a_substitutes_cinnamon(engine: Any) -> None:
    """Contract 17 (mules>=3; 1 mule + 6 cinnamon) paid with 4 ginger and 2 cinnamon: the six
    cinnamon units are chosen in non-decreasing resource order (engine-api.md)."""
    start = resources_dict(3, cinnamon=2, ginger=9, mules=3)
    g = engine.from_json(solo("zimtfuerst", rest=("korbmacher",), res0=start, display=[17, 1, 9, 29],
                              contract_top=[5]))
    play(g, "c0:a", "fulfil 17")
    play(g, *["choose ginger"] * 4)
    assert "choose ginger" in options(g, "choose ")
    play(g, "choose cinnamon")  # the sixth unit can then only be cinnamon: forced
    assert res(g, 0) == {**start, "ginger": 5, "cinnamon": 0, "mules": 2}
    assert g.to_json()["seats"][0]["contracts"] == [17]
    assert caravans(g, 0)[0] == ["korbmacher", "zimtfuerst"]
    assert_turn_over(g, 1)


def test_zimtfuerst_a_substitute_order_is_non_decreasing(engine: Any) -> None:
    start = resources_dict(3, cinnamon=6, mules=3)
    g = engine.from_json(solo("zimtfuerst", res0=start, display=[17, 1, 9, 29]))
    play(g, "c0:a", "fulfil 17", "choose pepper")
    choices = options(g, "choose ")
    assert "choose ginger" not in choices
    assert "choose cloves" not in choices
    assert "choose pepper" in choices
    assert "choose cinnamon" in choices


def test_zimtfuerst_a_needs_enough_spices(engine: Any) -> None:
    # 6 cinnamon needed, 5 spices in all: contract 17 not payable.
    start = resources_dict(1, gold=9, mules=3)
    g = engine.from_json(solo("zimtfuerst", res0=start, display=[17, 1, 9, 29]))
    _fulfil_not_offered_select(g, "c0:a", 17)


def test_zimtfuerst_a_other_spices_not_replaced(engine: Any) -> None:
    """Only cinnamon may be substituted: contract 1 (4 ginger) with ginger 3 and cinnamon 9 is not payable."""
    start = resources_dict(0, ginger=3, cinnamon=9, mules=3)
    g = engine.from_json(solo("zimtfuerst", res0=start, display=[1, 17, 9, 29]))
    _fulfil_not_offered_select(g, "c0:a", 1)


def _fulfil_not_offered_select(g: Any, select: str, n: int) -> None:
    """The caravan `select` is offered, and once it is played, contract `n` is not."""
    assert select in options(g, "c0:")
    play(g, select)
    assert f"fulfil {n}" not in options(g, "fulfil ")


# --- free fulfilment: Schreiber / Hufschmied parting --------------------------------------------


@pytest.mark.parametrize("card", ["schreiber", "hufschmied"])
def test_part_fulfils_free_small_face_up(engine: Any, card: str) -> None:
    start = resources_dict(0)
    g = engine.from_json(solo(card, rest=("korbmacher",), res0=start, display=[1, 9, 17, 29],
                              contract_top=[5]))
    play(g, "c0:part")
    assert options(g, "fulfil ") == {"fulfil 1", "fulfil 9"}
    play(g, "fulfil 9")
    assert res(g, 0) == start
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == [9]
    assert sorted(doc["display"]) == [1, 5, 17, 29]
    assert caravans(g, 0)[0] == ["korbmacher"]
    assert card in doc["removed"]
    assert_turn_over(g, 1)


# --- Hufschmied caravan action ------------------------------------------------------------------


def _finish_fulfils(g: Any) -> None:
    """Hufschmied fulfils up to 2 small/special ones; if the engine asks, answer each fulfil."""
    while True:
        fulfils = sorted(options(g, "fulfil "))
        if not fulfils or g.to_json()["pending"] is None:
            return
        play(g, fulfils[0])


def test_hufschmied_a_fulfils_small_and_special_free(engine: Any) -> None:
    """Drawn: small 3, immediate-pepper 37, large 21: 3 and 37 fulfilled free (no +6 pepper),
    21 under the Contract deck; one mule paid; the display is untouched."""
    start = resources_dict(0, mules=2)
    g = engine.from_json(solo("hufschmied", rest=("korbmacher",), res0=start, display=[1, 9, 17, 29],
                              contract_top=[3, 37, 21, 5]))
    n_deck = len(deck(g.to_json(), "contract"))
    play(g, "c0:a")
    assert "skip" not in legal_or_empty(g)
    _finish_fulfils(g)
    doc = g.to_json()
    assert sorted(doc["seats"][0]["contracts"]) == [3, 37]
    assert res(g, 0) == {**start, "mules": 1}
    assert doc["display"] == [1, 9, 17, 29]
    contract_deck = deck(doc, "contract")
    assert len(contract_deck) == n_deck - 2
    assert contract_deck[0] == 5
    assert contract_deck[-1] == 21
    assert g.vp(0) == 2 + 3 + 1  # contract 3, contract 37, the Hufschmied itself
    assert caravans(g, 0)[0] == ["korbmacher", "hufschmied"]
    assert_turn_over(g, 1)


def legal_or_empty(g: Any) -> set[str]:
    return set(options(g, ""))


# docs/rules.md#hufschmied-farrier, the reference manual: "Farrier, Guild Lord: Draw 3 Orders;
# fulfill up to 2 for free, return others under deck." With 3 small or special contracts drawn, the
# player chooses the 2 to fulfil (one at a time, in increasing contract number); with exactly 2 the
# picks are asked too (each with one outcome: see below); with 1 or none, it is taken without a
# question.


@pytest.mark.parametrize("picks,returned", [(["fulfil 3", "fulfil 9"], 12), (["fulfil 3", "fulfil 12"], 9),
                                            (["fulfil 9", "fulfil 12"], 3)])
def test_hufschmied_a_three_small_drawn_fulfils_the_two_chosen(engine: Any, picks: list[str], returned: int) -> None:
    """Drawn: small 3, 12 and 9. The player is asked, fulfils the 2 chosen free (2 picks; after
    `fulfil 9` only 12 is left above it, and that pick is still asked: the drawn contracts are the
    player's alone, and a pick made for them would tell the other seats what is left), the third
    goes under the Contract deck with the display untouched."""
    start = resources_dict(0, mules=2)
    g = engine.from_json(solo("hufschmied", rest=("korbmacher",), res0=start, display=[1, 17, 29, 37],
                              contract_top=[3, 12, 9, 5]))
    n_deck = len(deck(g.to_json(), "contract"))
    play(g, "c0:a")
    doc = g.to_json()
    assert doc["pending"]["wait"] == "contracts_free"
    assert doc["pending"]["drawn"] == [3, 12, 9]
    assert set(legal_or_empty(g)) == {"fulfil 3", "fulfil 9"}  # in increasing order: 12 cannot come first
    play(g, picks[0])
    assert set(legal_or_empty(g)) == ({"fulfil 12"} if picks[0] == "fulfil 9" else {"fulfil 9", "fulfil 12"})
    play(g, picks[1])
    doc = g.to_json()
    chosen = sorted({3, 9, 12} - {returned})
    assert doc["seats"][0]["contracts"] == chosen
    assert res(g, 0) == {**start, "mules": 1}
    assert doc["display"] == [1, 17, 29, 37]
    contract_deck = deck(doc, "contract")
    assert len(contract_deck) == n_deck - 2
    assert contract_deck[0] == 5 and contract_deck[-1] == returned
    assert g.vp(0) == sum(CONTRACTS[n].vp for n in chosen) + 1  # and the Hufschmied itself
    assert caravans(g, 0)[0] == ["korbmacher", "hufschmied"]
    assert_turn_over(g, 1)


def test_hufschmied_a_two_small_and_a_large_are_both_asked(engine: Any) -> None:
    """Drawn: small 3, large 21, small 12: both small ones are fulfilled free and 21 goes under the
    deck. The two picks are asked though each has one outcome: the other seats see 2 contracts taken
    whether the third was large or small, and a turn going on without a pause would tell them."""
    start = resources_dict(0, mules=2)
    g = engine.from_json(solo("hufschmied", rest=("korbmacher",), res0=start, contract_top=[3, 21, 12, 5]))
    play(g, "c0:a")
    assert g.to_json()["pending"]["wait"] == "contracts_free"
    assert legal_or_empty(g) == {"fulfil 3"}
    play(g, "fulfil 3")
    assert legal_or_empty(g) == {"fulfil 12"}
    play(g, "fulfil 12")
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == [3, 12]
    assert deck(doc, "contract")[-1] == 21
    assert_turn_over(g, 1)


def test_hufschmied_a_one_small_is_taken_without_a_question(engine: Any) -> None:
    """Drawn: small 3, large 21 and 20: fewer free than may be taken, so 3 is taken at once (the
    other seats see 1 contract taken and know by the rules that the 2 put back are large)."""
    g = engine.from_json(solo("hufschmied", rest=("korbmacher",), res0=resources_dict(0, mules=2),
                              contract_top=[3, 21, 20, 5]))
    play(g, "c0:a")
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == [3]
    assert sorted(deck(doc, "contract")[-2:]) == [20, 21]
    assert_turn_over(g, 1)


def test_hufschmied_a_three_eligible_with_wheat_and_special(engine: Any) -> None:
    """Drawn: wheat field 30, special 37, small 9: any 2 of them; the wheat field counts for the Bauer
    and the special one pays nothing."""
    start = resources_dict(0, mules=1)
    g = engine.from_json(solo("hufschmied", rest=("bauer",), res0=start, contract_top=[30, 37, 9, 5]))
    vp0 = g.vp(0)
    play(g, "c0:a")
    assert set(legal_or_empty(g)) == {"fulfil 9", "fulfil 30"}
    play(g, "fulfil 9", "fulfil 30")
    assert g.to_json()["seats"][0]["contracts"] == [9, 30]
    assert deck(g.to_json(), "contract")[-1] == 37
    assert res(g, 0) == {**start, "mules": 0}
    assert g.vp(0) == vp0 + 3 + 1 + 1  # small 9, wheat field 30, the Bauer grows by 1
    assert_turn_over(g, 1)


@pytest.mark.parametrize("picked", [[], ["fulfil 3"]])
def test_hufschmied_choice_pending_survives_json(engine: Any, picked: list[str]) -> None:
    """Mid-decision (no pick yet, or one made) the state reads back as itself, and the same
    decisions then end the same; the other player's view (drawn contracts hidden) loads too."""
    start = resources_dict(0, mules=2)
    g = engine.from_json(solo("hufschmied", rest=("korbmacher",), res0=start, contract_top=[3, 12, 9, 5]))
    play(g, "c0:a", *picked)
    doc = g.to_json()
    assert doc["pending"]["wait"] == "contracts_free"
    assert doc["pending"]["drawn"] == [n for n in (3, 12, 9) if f"fulfil {n}" not in picked]
    g2 = engine.from_json(doc)
    assert g2.to_json() == doc
    assert g2.legal_codes() == g.legal_codes()
    assert engine.from_json(g.view(0)).view(0) == g.view(0)
    other = g.view(1)
    assert other["pending"]["drawn"] == {"count": len(doc["pending"]["drawn"])}
    assert engine.from_json(other).legal_codes()
    for game in (g, g2):
        play(game, *["fulfil 3", "fulfil 12"][len(picked):])
        assert_turn_over(game, 1)
    assert g2.to_json() == g.to_json()
    assert g.to_json()["seats"][0]["contracts"] == [3, 12]
    assert deck(g.to_json(), "contract")[-1] == 9


def test_hufschmied_a_needs_a_mule(engine: Any) -> None:
    g = engine.from_json(solo("hufschmied", res0=resources_dict(3, mules=0)))
    assert "c0:a" not in options(g, "c0:")


def test_hufschmied_a_wheat_field_counts_for_bauer(engine: Any) -> None:
    start = resources_dict(0, mules=1)
    g = engine.from_json(solo("hufschmied", rest=("bauer",), res0=start, contract_top=[30, 18, 19, 5]))
    play(g, "c0:a")
    _finish_fulfils(g)
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == [30]
    assert sorted(deck(doc, "contract")[-2:]) == [18, 19]
    assert g.vp(0) == 1 + 1 + 1  # wheat field 30, the Bauer (1 wheat field), the Hufschmied


# --- Gildenherr ---------------------------------------------------------------------------------


def test_gildenherr_a_replaces_display_then_fulfils(engine: Any) -> None:
    start = resources_dict(3, cloves=5)
    g = engine.from_json(solo("gildenherr", rest=("korbmacher",), res0=start, display=[1, 9, 17, 29],
                              contract_top=[2, 10, 18, 30, 5]))
    play(g, "c0:a")
    assert sorted(g.to_json()["display"]) == [2, 10, 18, 30]
    fulfils = options(g, "fulfil ")
    assert "fulfil 2" in fulfils and "fulfil 30" in fulfils
    assert not fulfils & {"fulfil 1", "fulfil 9", "fulfil 17", "fulfil 29"}
    assert "skip" in legal_or_empty(g)
    play(g, "fulfil 2")
    doc = g.to_json()
    assert res(g, 0) == {**start, "cloves": 1}
    assert doc["seats"][0]["contracts"] == [2]
    assert sorted(doc["display"]) == [5, 10, 18, 30]
    assert sorted(deck(doc, "contract")[-4:]) == [1, 9, 17, 29]
    assert_turn_over(g, 1)


def test_gildenherr_a_may_skip_fulfilling(engine: Any) -> None:
    g = engine.from_json(solo("gildenherr", rest=("korbmacher",), display=[1, 9, 17, 29],
                              contract_top=[2, 10, 18, 30, 5]))
    n_deck = len(deck(g.to_json(), "contract"))
    play(g, "c0:a", "skip")
    doc = g.to_json()
    assert sorted(doc["display"]) == [2, 10, 18, 30]
    assert doc["seats"][0]["contracts"] == []
    c = deck(doc, "contract")
    assert len(c) == n_deck
    assert c[0] == 5
    assert sorted(c[-4:]) == [1, 9, 17, 29]
    assert res(g, 0) == resources_dict(3)
    assert_turn_over(g, 1)


def test_gildenherr_part_ignores_mule_requirement_but_pays_cost(engine: Any) -> None:
    start = resources_dict(0, ginger=3, cloves=4, mules=0)
    g = engine.from_json(solo("gildenherr", rest=("korbmacher",), res0=start, display=[9, 17, 1, 29],
                              contract_top=[5]))
    play(g, "c0:part")
    fulfils = options(g, "fulfil ")
    assert "fulfil 9" in fulfils  # mules>=2 ignored
    assert "fulfil 17" not in fulfils  # cost: 1 mule + 6 cinnamon, not payable
    assert "fulfil 1" not in fulfils  # cost: 4 ginger, not payable
    play(g, "fulfil 9")
    assert res(g, 0) == {**start, "ginger": 0, "cloves": 1}
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == [9]
    assert sorted(doc["display"]) == [1, 5, 17, 29]
    assert caravans(g, 0)[0] == ["korbmacher"]
    assert_turn_over(g, 1)


# --- Bauer --------------------------------------------------------------------------------------


def test_bauer_a_draws_three_fulfils_one_wheat_field_free(engine: Any) -> None:
    start = resources_dict(0)
    g = engine.from_json(solo("bauer", rest=("korbmacher",), res0=start, display=[1, 9, 17, 29],
                              contract_top=[31, 35, 18, 4]))
    n_deck = len(deck(g.to_json(), "contract"))
    play(g, "c0:a")
    assert options(g, "fulfil ") == {"fulfil 31", "fulfil 35"}
    assert "skip" in legal_or_empty(g)
    play(g, "fulfil 35")
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == [35]
    assert res(g, 0) == start
    assert doc["display"] == [1, 9, 17, 29]
    c = deck(doc, "contract")
    assert len(c) == n_deck - 1
    assert c[0] == 4
    assert sorted(c[-2:]) == [18, 31]
    assert g.vp(0) == 2 + 1  # wheat field 35 and the Bauer counting it
    assert caravans(g, 0)[0] == ["korbmacher", "bauer"]
    assert_turn_over(g, 1)


def test_bauer_a_without_wheat_field_puts_all_under(engine: Any) -> None:
    g = engine.from_json(solo("bauer", rest=("korbmacher",), contract_top=[2, 18, 37, 4]))
    n_deck = len(deck(g.to_json(), "contract"))
    play(g, "c0:a")
    assert options(g, "fulfil ") == set()
    if g.to_json()["pending"] is not None:
        play(g, "skip")
    doc = g.to_json()
    assert doc["seats"][0]["contracts"] == []
    c = deck(doc, "contract")
    assert len(c) == n_deck
    assert c[0] == 4
    assert sorted(c[-3:]) == [2, 18, 37]
    assert_turn_over(g, 1)



@pytest.mark.parametrize("gold,payable", [(5, True), (4, False)])
def test_hoeker_a_gold_cost_plus_lacking_spices(engine: Any, gold: int, payable: bool) -> None:
    """Contract 27 (mules>=5; 2 mules + 3 gold + 4 pepper + 4 anise) with anise 2: the Höker pays
    3 gold for the cost and 2 more for the lacking anise, so 5 gold are needed."""
    start = resources_dict(3, pepper=4, anise=2, gold=gold, mules=5)
    g = engine.from_json(solo("hoeker", rest=("korbmacher",), res0=start, display=[27, 1, 9, 29],
                              contract_top=[5]))
    play(g, "c0:a")
    if not payable:
        assert "fulfil 27" not in options(g, "fulfil ")
        return
    play(g, "fulfil 27")
    assert res(g, 0) == {**start, "pepper": 0, "anise": 0, "gold": 0, "mules": 3}


@pytest.mark.parametrize("ginger,payable", [(6, True), (5, False)])
def test_zimtfuerst_a_substitute_with_spice_also_in_cost(engine: Any, ginger: int, payable: bool) -> None:
    """Contract 13 (mules>=2; 3 cinnamon + 3 ginger) without cinnamon: the cinnamon may be paid
    with ginger, but the ginger of the cost must be paid too, so 6 ginger are needed."""
    start = resources_dict(0, ginger=ginger, mules=2)
    g = engine.from_json(solo("zimtfuerst", rest=("korbmacher",), res0=start, display=[13, 1, 9, 29],
                              contract_top=[5]))
    if not payable:
        _fulfil_not_offered_select(g, "c0:a", 13)
        return
    play(g, "c0:a", "fulfil 13")
    while g.to_json()["pending"] is not None:
        assert options(g, "choose ") == {"choose ginger"}
        play(g, "choose ginger")
    assert res(g, 0) == {**start, "ginger": 0}
    assert g.to_json()["seats"][0]["contracts"] == [13]


def test_immediate_payout_is_capped(engine: Any) -> None:
    """Contract 37 (+6 pepper) with pepper 5: pepper ends at 9, the excess is lost."""
    start = resources_dict(3, gold=3, ginger=3, pepper=5, mules=2)
    g = engine.from_json(solo("gewuerzhaendler", res0=start, display=[37, 1, 9, 29], contract_top=[5]))
    play(g, "c0:a", "fulfil 37")
    assert res(g, 0) == {**start, "gold": 0, "ginger": 0, "pepper": 9}


def test_gildenherr_part_immediate_payout_applies(engine: Any) -> None:
    """Only the Hufschmied's drawn contracts skip the payout; a Gildenherr fulfilment pays it."""
    start = resources_dict(0, cloves=4, cinnamon=4, gold=1)
    g = engine.from_json(solo("gildenherr", res0=start, display=[39, 1, 9, 29], contract_top=[5]))
    play(g, "c0:part", "fulfil 39")
    assert res(g, 0) == {**start, "cloves": 0, "cinnamon": 0, "gold": 7}
