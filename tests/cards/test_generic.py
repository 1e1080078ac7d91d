"""Properties every person card kind has (docs/rules.md#cards): the options it offers at turn start,
what passing does, and its VP while it is in a caravan."""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import (
    ALL_KINDS,
    CANNOT_PASS,
    CARD_VP,
    NO_PARTING,
    TWO_CARAVAN_ACTIONS,
    assert_turn_over,
    caravans,
    options,
    play,
    res,
    resources_dict,
    solo,
)

# Rich enough that every action of every card is affordable and has a target: a spice at 5 for
# the Bootsmann, gold for every gold cost, mules for the Hufschmied, small contracts face up.
RICH = resources_dict(5)


def _expected_selects(card: str) -> set[str]:
    opts = {"c0:a"}
    if card in TWO_CARAVAN_ACTIONS:
        opts.add("c0:b")
    if card not in NO_PARTING:
        opts.add("c0:part")
    if card not in CANNOT_PASS:
        opts.add("c0:pass")
    return opts


@pytest.mark.parametrize("card", ALL_KINDS)
def test_turn_start_options(engine: Any, card: str) -> None:
    """a (and b for two caravan actions), part unless it has none, pass unless marked `!`."""
    g = engine.from_json(solo(card, res0=RICH, display=(1, 9, 2, 29), contracts=[[3, 30]]))
    assert options(g, "c0:") == _expected_selects(card)
    # The other caravans offer their (Patriarch) front cards; no caravan 3 exists.
    assert options(g, "c1:") == {"c1:a", "c1:b"}
    assert options(g, "c3:") == set()


@pytest.mark.parametrize("card", sorted(set(ALL_KINDS) - CANNOT_PASS))
def test_pass_moves_card_to_back_and_does_nothing_else(engine: Any, card: str) -> None:
    doc = solo(card, rest=("korbmacher", "marktfrau"), res0=RICH)
    g = engine.from_json(doc)
    before = g.to_json()
    play(g, "c0:pass")
    after = g.to_json()
    assert caravans(g, 0)[0] == ["korbmacher", "marktfrau", card]
    assert caravans(g, 0)[1:] == before["seats"][0]["caravans"][1:]
    assert res(g, 0) == RICH
    assert after["seats"][1] == before["seats"][1]
    assert after["display"] == before["display"]
    assert after["discard"] == before["discard"]
    assert after["removed"] == before["removed"]
    assert after["turn"] == before["turn"] + 1
    assert_turn_over(g, 1)


@pytest.mark.parametrize("card", sorted(CANNOT_PASS))
def test_bang_cards_cannot_be_passed(engine: Any, card: str) -> None:
    g = engine.from_json(solo(card, res0=RICH))
    assert "c0:pass" not in options(g, "c0:")
    with pytest.raises(ValueError):
        g.apply("c0:pass")


@pytest.mark.parametrize("card", sorted(CARD_VP))
def test_card_vp_in_caravan(engine: Any, card: str) -> None:
    """A card's VP counts while it is in a caravan (the filler cards are worth 0)."""
    g = engine.from_json(solo(card))
    assert g.vp(0) == CARD_VP[card]
    assert g.vp(1) == 0


def test_negative_vp_cards_sum(engine: Any) -> None:
    """Bettler -2 and Gewürzhändler -1 count against the player, with contracts: 3 + 2 - 2 - 1 = 2."""
    doc = solo("bettler", rest=("gewuerzhaendler",), contracts=[[9, 1]])
    g = engine.from_json(doc)
    assert g.vp(0) == 3 + 2 - 2 - 1


@pytest.mark.parametrize("wheat,expected_bauer", [([], 0), ([29], 1), ([29, 35, 30], 3)])
def test_bauer_vp_is_wheat_field_count(engine: Any, wheat: list[int], expected_bauer: int) -> None:
    """Each Bauer is worth one VP per fulfilled wheat field (two Bauern count twice)."""
    contract_vp = {29: 1, 30: 1, 35: 2}
    doc = solo("bauer", rest=("bauer",), contracts=[[*wheat, 9]])
    g = engine.from_json(doc)
    assert g.vp(0) == 2 * expected_bauer + sum(contract_vp[n] for n in wheat) + 3


def test_removed_card_no_longer_scores(engine: Any) -> None:
    """Parting with the Recke (3 VP) takes its VP away."""
    g = engine.from_json(solo("recke"))
    assert g.vp(0) == 3
    play(g, "c0:part")
    assert g.vp(0) == 0
    assert "recke" in g.to_json()["removed"]
