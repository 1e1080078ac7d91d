"""Cards that draw or take person cards: where the kept card goes (back, or front for the
Schneider's caravan action) and where the others go (Standard: face up on the discard pile;
Special: under the Special deck), and the Patriarch/Matriarch turning."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from engine_ext import StateError
from engine_ext.checks import contract_numbers
from tests.builders import (
    assert_turn_over,
    caravans,
    deck,
    make_state,
    options,
    play,
    res,
    resources_dict,
    solo,
)


def _discard(g: Any) -> Counter[str]:
    return Counter(g.to_json()["discard"])


# --- Patriarch / Matriarch ---------------------------------------------------------------------


def test_patriarch_a_draws_two_standard_keeps_one(engine: Any) -> None:
    g = engine.from_json(solo("patriarch", rest=("knecht",), standard_top=["recke", "hoeker", "bauer"]))
    n_before = len(deck(g.to_json(), "standard"))
    play(g, "c0:a")
    assert options(g, "keep ") == {"keep recke", "keep hoeker"}
    play(g, "keep hoeker")
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "hoeker"]
    assert _discard(g) == Counter(["recke"])
    after = deck(g.to_json(), "standard")
    assert len(after) == n_before - 2
    assert after[0] == "bauer"
    assert res(g, 0) == resources_dict(3)
    assert_turn_over(g, 1)


def test_patriarch_a_same_card_twice(engine: Any) -> None:
    """Two copies drawn: keeping is forced (engine-api.md "Forced steps"), the other copy goes to
    the discard pile."""
    g = engine.from_json(solo("patriarch", rest=("knecht",), standard_top=["quacksalber", "quacksalber"]))
    play(g, "c0:a")
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "quacksalber"]
    assert _discard(g) == Counter(["quacksalber"])
    assert_turn_over(g, 1)


def test_patriarch_b_turns_to_matriarch_at_back(engine: Any) -> None:
    g = engine.from_json(solo("patriarch", rest=("knecht", "recke"), standard_top=["bauer"]))
    n_before = len(deck(g.to_json(), "standard"))
    play(g, "c0:b")
    assert caravans(g, 0)[0] == ["knecht", "recke", "matriarch"]
    assert len(deck(g.to_json(), "standard")) == n_before
    assert g.to_json()["discard"] == []
    assert_turn_over(g, 1)


def test_matriarch_takes_from_discard_then_turns(engine: Any) -> None:
    g = engine.from_json(solo("matriarch", rest=("knecht",), discard=["marktfrau", "recke", "bauer"]))
    assert options(g, "c0:") == {"c0:a"}
    play(g, "c0:a")
    assert options(g, "take ") == {"take marktfrau", "take recke", "take bauer"}
    play(g, "take recke")
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "recke"]
    assert _discard(g) == Counter(["marktfrau", "bauer"])
    assert_turn_over(g, 1)


def test_matriarch_with_empty_discard_only_turns(engine: Any) -> None:
    g = engine.from_json(solo("matriarch", rest=("knecht",)))
    play(g, "c0:a")
    assert caravans(g, 0)[0] == ["knecht", "patriarch"]
    assert_turn_over(g, 1)


def test_matriarch_can_take_additional_card_in_variant(engine: Any) -> None:
    g = engine.from_json(solo("matriarch", rest=("knecht",), discard=["hirte", "recke"], variant="all"))
    play(g, "c0:a", "take hirte")
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "hirte"]
    assert g.to_json()["discard"] == ["recke"]


def test_matriarch_single_card_kind_in_discard_is_taken(engine: Any) -> None:
    """One card kind on the discard pile: the take is forced and happens without a decision."""
    g = engine.from_json(solo("matriarch", rest=("knecht",), discard=["bauer", "bauer"]))
    play(g, "c0:a")
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "bauer"]
    assert g.to_json()["discard"] == ["bauer"]
    assert_turn_over(g, 1)


# --- Standard draws -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "card,option,k,cost_gold",
    [("prophet", "a", 3, 0), ("graue_eminenz", "a", 3, 1), ("schankmaid", "part", 4, 0),
     ("schneider", "part", 5, 0)],
)
def test_draw_k_standard_keep_one_to_back(
    engine: Any, card: str, option: str, k: int, cost_gold: int
) -> None:
    top = ["recke", "bauer", "hoeker", "zuechter", "schmied", "adelige"][: k + 1]
    g = engine.from_json(solo(card, rest=("korbmacher",), standard_top=top))
    n_before = len(deck(g.to_json(), "standard"))
    play(g, f"c0:{option}")
    assert options(g, "keep ") == {f"keep {c}" for c in top[:k]}
    play(g, "keep hoeker")
    back = ["korbmacher", card, "hoeker"] if option == "a" else ["korbmacher", "hoeker"]
    assert caravans(g, 0)[0] == back
    assert _discard(g) == Counter(c for c in top[:k] if c != "hoeker")
    after = deck(g.to_json(), "standard")
    assert len(after) == n_before - k
    assert after[0] == top[k]
    assert res(g, 0)["gold"] == 3 - cost_gold
    if option == "part":
        assert card in g.to_json()["removed"]
    assert_turn_over(g, 1)


def test_schneider_a_keeps_card_at_front(engine: Any) -> None:
    """Schneider's caravan action puts the kept card at the FRONT (usable next turn)."""
    top = ["recke", "bauer", "hoeker", "zuechter", "schmied", "adelige"]
    g = engine.from_json(solo("schneider", rest=("korbmacher", "marktfrau"), standard_top=top))
    play(g, "c0:a")
    assert options(g, "keep ") == {f"keep {c}" for c in top[:5]}
    play(g, "keep zuechter")
    assert caravans(g, 0)[0] == ["zuechter", "korbmacher", "marktfrau", "schneider"]
    assert _discard(g) == Counter(["recke", "bauer", "hoeker", "schmied"])
    assert deck(g.to_json(), "standard")[0] == "adelige"
    assert_turn_over(g, 1)


def test_graue_eminenz_needs_gold(engine: Any) -> None:
    g = engine.from_json(solo("graue_eminenz", res0=resources_dict(3, gold=0)))
    assert "c0:a" not in options(g, "c0:")


@pytest.mark.parametrize("card", ["graue_eminenz", "kurtisane"])
def test_part_takes_from_discard_to_back(engine: Any, card: str) -> None:
    g = engine.from_json(solo(card, rest=("korbmacher", "marktfrau"), discard=["bauer", "zimtfuerst"]))
    play(g, "c0:part")
    assert options(g, "take ") == {"take bauer", "take zimtfuerst"}
    play(g, "take zimtfuerst")
    assert caravans(g, 0)[0] == ["korbmacher", "marktfrau", "zimtfuerst"]
    assert g.to_json()["discard"] == ["bauer"]
    assert card in g.to_json()["removed"]
    assert_turn_over(g, 1)


# --- Special draws --------------------------------------------------------------------------------


@pytest.mark.parametrize("card,option,cost_gold", [("adelige", "a", 1), ("kraeuterfrau", "part", 0)])
def test_draw_two_special_keep_one_rest_under(engine: Any, card: str, option: str, cost_gold: int) -> None:
    top = ["schneider", "bootsmann", "gildenherr"]
    g = engine.from_json(solo(card, rest=("korbmacher",), special_top=top))
    n_before = len(deck(g.to_json(), "special"))
    play(g, f"c0:{option}")
    assert options(g, "keep ") == {"keep schneider", "keep bootsmann"}
    play(g, "keep bootsmann")
    back = ["korbmacher", card, "bootsmann"] if option == "a" else ["korbmacher", "bootsmann"]
    assert caravans(g, 0)[0] == back
    special = deck(g.to_json(), "special")
    assert len(special) == n_before - 1
    assert special[0] == "gildenherr"
    assert special[-1] == "schneider"
    assert g.to_json()["discard"] == []
    assert res(g, 0)["gold"] == 3 - cost_gold
    assert_turn_over(g, 1)


def test_adelige_needs_gold(engine: Any) -> None:
    g = engine.from_json(solo("adelige", res0=resources_dict(3, gold=0)))
    assert "c0:a" not in options(g, "c0:")
    assert {"c0:part", "c0:pass"} <= options(g, "c0:")


def test_geldeintreiber_part_draws_n_special(engine: Any) -> None:
    """N = fulfilled contracts: 2 -> draw 2 Special, keep 1 at the back, the other under the deck."""
    g = engine.from_json(solo("geldeintreiber", rest=("korbmacher",), contracts=[[3, 30]],
                              special_top=["hufschmied", "schneider", "gildenherr"]))
    n_before = len(deck(g.to_json(), "special"))
    play(g, "c0:part")
    assert options(g, "keep ") == {"keep hufschmied", "keep schneider"}
    play(g, "keep schneider")
    assert caravans(g, 0)[0] == ["korbmacher", "schneider"]
    special = deck(g.to_json(), "special")
    assert len(special) == n_before - 1
    assert special[0] == "gildenherr"
    assert special[-1] == "hufschmied"
    assert_turn_over(g, 1)


def test_geldeintreiber_part_can_draw_more_than_eight(engine: Any) -> None:
    """N = 9 fulfilled contracts: 9 Special cards drawn at once, every one can be kept, and nothing
    else moves. (The engine's buffer of drawn cards held 8; the ninth card overwrote where
    contract 1 lay, and contract 1 vanished from the game. Found by the engine property test.)"""
    done = [1, 2, 3, 4, 5, 6, 9, 10, 11]
    g = engine.from_json(solo("geldeintreiber", rest=("korbmacher",), contracts=[done]))
    special = deck(g.to_json(), "special")
    assert len(special) >= 10
    play(g, "c0:part")
    doc = g.to_json()
    assert doc["pending"]["drawn"] == special[:9]
    assert sorted(doc["seats"][0]["contracts"]) == done
    assert sorted(contract_numbers(doc)) == list(range(1, 41))
    assert engine.from_json(doc).to_json() == doc  # the state with 9 drawn cards round-trips
    assert options(g, "keep ") == {f"keep {c}" for c in special[:9]}
    play(g, f"keep {special[8]}")
    assert caravans(g, 0)[0] == ["korbmacher", special[8]]
    after = g.to_json()
    assert len(deck(after, "special")) == len(special) - 1
    assert sorted(after["seats"][0]["contracts"]) == done
    assert sorted(contract_numbers(after)) == list(range(1, 41))
    # more drawn cards than the Special deck can ever hold: a clear error naming where
    doc["pending"]["drawn"] = {"count": 17}
    with pytest.raises(StateError) as info:
        engine.from_json(doc)
    assert info.value.pointer.startswith("/pending")


def test_geldeintreiber_part_without_contracts_draws_nothing(engine: Any) -> None:
    g = engine.from_json(solo("geldeintreiber", rest=("korbmacher",), special_top=["hufschmied"]))
    before = deck(g.to_json(), "special")
    play(g, "c0:part")
    assert caravans(g, 0)[0] == ["korbmacher"]
    assert deck(g.to_json(), "special") == before
    assert_turn_over(g, 1)


def test_gesandter_a_draws_two_special_then_shuffles(engine: Any) -> None:
    specials = ["schneider", "bootsmann", "gildenherr", "gildenherr", "hufschmied", "hufschmied",
                "haendlertochter", "haendlertochter", "fahrender_haendler", "fahrender_haendler",
                "schneider", "bootsmann"]
    doc = solo("gesandter", rest=("korbmacher",), decks={"special": list(specials)})
    g = engine.from_json(doc)
    play(g, "c0:a")
    assert options(g, "keep ") == {"keep schneider", "keep bootsmann"}
    play(g, "keep schneider")
    assert caravans(g, 0)[0] == ["korbmacher", "gesandter", "schneider"]
    assert res(g, 0)["gold"] == 2
    after_doc = g.to_json()
    special = deck(after_doc, "special")
    assert len(special) == 11
    unshuffled = specials[2:] + ["bootsmann"]
    if all(c is not None for c in special):
        assert Counter(special) == Counter(unshuffled)
        assert special != unshuffled, "the Special deck was not shuffled"
    else:
        # A deck given as count/known: after the shuffle nobody knows any position.
        assert all(c is None for c in special)
    assert_turn_over(g, 1)


def test_gesandter_needs_gold(engine: Any) -> None:
    g = engine.from_json(solo("gesandter", res0=resources_dict(3, gold=0)))
    assert "c0:a" not in options(g, "c0:")


def test_special_deck_short_draws_what_is_there(engine: Any) -> None:
    """Special deck with one card: the Adelige draws just that one and keeps it."""
    removed = ["bootsmann", "bootsmann", "gildenherr", "gildenherr", "hufschmied", "hufschmied",
               "haendlertochter", "haendlertochter", "fahrender_haendler", "fahrender_haendler", "schneider"]
    doc = make_state(caravans=[[["adelige", "korbmacher"], ["patriarch", "marktfrau"]]], removed=removed,
                     decks={"special": ["schneider"]})
    g = engine.from_json(doc)
    play(g, "c0:a")
    if options(g, "keep "):
        play(g, "keep schneider")
    assert caravans(g, 0)[0] == ["korbmacher", "adelige", "schneider"]
    assert deck(g.to_json(), "special") == []
    assert_turn_over(g, 1)
