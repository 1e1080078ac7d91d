"""Card actions that only change the acting player's own resources (docs/rules.md#resources-and-costs, `+n` increase,
`=n` set, `pay n`, `X/Y` and "any spice" choices).

Each case: the card at the front of caravan 0, the player's resources (3 each unless overridden),
the select decision and the follow-up choices, and the resources afterwards. A caravan action puts
the card at the back of its caravan; a parting action removes it from the game.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.builders import SPICES, assert_turn_over, caravans, options, play, res, resources_dict, solo


@dataclass(frozen=True)
class Case:
    card: str
    option: str  # a, b or part
    choices: tuple[str, ...]
    expect: dict[str, int]  # resources that differ from the start afterwards
    start: dict[str, int] = field(default_factory=dict)
    first_choices: frozenset[str] | None = None  # the legal `choose` texts at the first choice

    @property
    def id(self) -> str:
        return f"{self.card}-{self.option}-{'-'.join(c.split()[-1] for c in self.choices) or 'none'}"


ANY_SPICE = frozenset(f"choose {s}" for s in SPICES)

CASES: list[Case] = [
    # Start cards
    Case("aristokratin", "a", (), {"gold": 4}),
    Case("dorfschoenheit", "a", ("choose pepper",), {"pepper": 5}, first_choices=ANY_SPICE),
    Case("knecht", "a", ("choose cloves", "choose anise"),  # cinnamon is then forced
         {"gold": 5, "cloves": 2, "anise": 2, "cinnamon": 2},
         start={"gold": 8, "cloves": 7, "anise": 0, "cinnamon": 9}),
    Case("knecht", "a", ("choose ginger", "choose cloves", "choose pepper"),  # pepper of 3 left
         {"gold": 5, "ginger": 2, "cloves": 2, "pepper": 2}, start={"gold": 1}),
    Case("knecht", "part", (), {"gold": 4, "mules": 4}),
    Case("kraemerin", "a", ("choose ginger",), {"ginger": 5}, first_choices=ANY_SPICE),
    Case("kraeuterfrau", "a", (), {"anise": 4, "cloves": 4}),
    Case("prophet", "part", (), {"gold": 5}),
    Case("schankmaid", "a", ("choose anise",), {"gold": 4, "anise": 4}, first_choices=ANY_SPICE),
    Case("schreiber", "a", (), {"gold": 4}),
    Case("stadtwache", "a", (), {"gold": 4, "mules": 4}),
    Case("stadtwache", "part", (), {"mules": 6}),
    Case("wagner", "a", (), {"mules": 5}),
    Case("wagner", "part", (), {"mules": 5}, start={"mules": 6}),
    Case("wagner", "part", (), {"mules": 5}, start={"mules": 0}),
    Case("waldbaeuerin", "a", ("choose cloves",), {"cloves": 5},
         first_choices=frozenset({"choose anise", "choose cloves"})),
    Case("waldbaeuerin", "a", ("choose anise",), {"anise": 5},
         first_choices=frozenset({"choose anise", "choose cloves"})),
    Case("waldbaeuerin", "part", (), {"anise": 5, "cloves": 5}),
    Case("zigeuner", "part", (), {"gold": 5}),
    # Standard cards
    Case("adelige", "part", (), {"gold": 5}),
    Case("baecker", "part", ("choose cinnamon",), {"cinnamon": 6},
         first_choices=frozenset({"choose cinnamon", "choose pepper"})),
    Case("baecker", "part", ("choose pepper",), {"pepper": 6},
         first_choices=frozenset({"choose cinnamon", "choose pepper"})),
    Case("bauer", "part", (), {"mules": 5}),
    Case("boettcher", "a", ("choose gold",), {"gold": 4, "mules": 4}, start={"gold": 8},
         first_choices=ANY_SPICE | {"choose gold"}),
    Case("boettcher", "a", ("choose cinnamon",), {"cinnamon": 4, "mules": 4}, start={"cinnamon": 9}),
    Case("boettcher", "a", ("choose ginger",), {"ginger": 4, "mules": 6}, start={"ginger": 0, "mules": 5}),
    Case("boettcher", "part", (), {"mules": 5}),
    Case("gewuerzhaendler", "part", ("choose cloves",), {"cloves": 5}, first_choices=ANY_SPICE),
    Case("hochstapler", "a", ("choose cinnamon",), {"gold": 4, "cinnamon": 4}, first_choices=ANY_SPICE),
    Case("korbmacher", "a", (), {"gold": 4, "mules": 4}),
    Case("korbmacher", "part", (), {"mules": 6}),
    Case("kurtisane", "b", (), {"gold": 5}),
    Case("marktfrau", "a", ("choose ginger",), {"ginger": 5}, first_choices=ANY_SPICE),
    Case("marktfrau", "part", ("choose anise",), {"anise": 6}, first_choices=ANY_SPICE),
    Case("mulihaendlerin", "a", (), {"mules": 5}),
    Case("mulihaendlerin", "part", (), {"mules": 6}, start={"mules": 1}),
    Case("nachtwaechter", "a", (), {"gold": 4, "mules": 4}),
    Case("nachtwaechter", "part", (), {"gold": 7}),
    Case("pflanzerin", "a", (), {"ginger": 6}),
    Case("pflanzerin", "part", (), {"ginger": 5, "anise": 5}),
    Case("quacksalber", "a", ("choose pepper",), {"gold": 2, "pepper": 6}, first_choices=ANY_SPICE),
    Case("quacksalber", "part", (), {"gold": 5}),
    Case("recke", "a", (), {"gold": 4}),
    Case("recke", "part", (), {"mules": 5}, start={"mules": 1}),
    Case("schmied", "a", (), {"gold": 2, "mules": 5}),
    Case("schmied", "part", (), {"gold": 6}),
    Case("schmied", "part", (), {"gold": 6}, start={"gold": 9}),
    Case("zimtfuerst", "part", (), {"cinnamon": 6}),
    Case("zuechter", "a", (), {"mules": 4}),
    Case("zuechter", "a", (), {"mules": 6}, start={"mules": 4}),
    Case("zuechter", "a", (), {"mules": 1}, start={"mules": 1}),
    Case("zuechter", "part", (), {"mules": 6}, start={"mules": 0}),
    # Special cards
    Case("bootsmann", "a", (), {"gold": 1, "mules": 6}),
    Case("bootsmann", "a", (), {"gold": 0, "mules": 4}, start={"gold": 2, "mules": 1}),
    Case("bootsmann", "part", ("choose cinnamon",), {"cinnamon": 7}, first_choices=ANY_SPICE),
    Case("fahrender_haendler", "part", (), {"gold": 6}),
    Case("haendlertochter", "part", (), {"gold": 6}),
    # Additional cards
    Case("bettler", "part", (), {"gold": 5}),
    Case("gesandter", "part", (), {"gold": 5, "mules": 4}),
    Case("hirte", "part", ("choose ginger",), {"ginger": 5}, first_choices=ANY_SPICE),
    Case("karawanenfuehrer", "part", (), {"mules": 6}),
    Case("taschenspielerin", "part", (), {"gold": 6}),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_own_resource_action(engine: Any, case: Case) -> None:
    start = resources_dict(3, **case.start)
    g = engine.from_json(solo(case.card, rest=("korbmacher",), res0=start))
    before = g.to_json()
    play(g, f"c0:{case.option}")
    for i, choice in enumerate(case.choices):
        if i == 0 and case.first_choices is not None:
            assert options(g, "choose ") == case.first_choices
        play(g, choice)
    assert res(g, 0) == {**start, **case.expect}
    # The card went to the back (caravan action) or out of the game (parting action).
    if case.option == "part":
        assert caravans(g, 0)[0] == ["korbmacher"]
        assert g.to_json()["removed"] == [case.card]
    else:
        assert caravans(g, 0)[0] == ["korbmacher", case.card]
        assert g.to_json()["removed"] == []
    # Nothing happened to the opponent.
    assert g.to_json()["seats"][1] == before["seats"][1]
    assert_turn_over(g, 1)


def test_knecht_spices_strictly_increasing(engine: Any) -> None:
    """Knecht's three spices are chosen in strictly increasing resource order (engine-api.md)."""
    g = engine.from_json(solo("knecht"))
    play(g, "c0:a", "choose cloves")
    after_cloves = options(g, "choose ")
    assert "choose ginger" not in after_cloves
    assert "choose cloves" not in after_cloves
    assert {"choose pepper", "choose anise"} <= after_cloves
    play(g, "choose anise")  # the third spice can only be cinnamon: forced
    assert res(g, 0) == resources_dict(3, gold=5, cloves=2, anise=2, cinnamon=2)
    assert_turn_over(g, 1)


def test_knecht_choice_orders_are_canonical(engine: Any) -> None:
    """No spice can be chosen twice, so the set of three is reached in exactly one order."""
    g = engine.from_json(solo("knecht"))
    play(g, "c0:a", "choose ginger", "choose pepper")
    assert options(g, "choose ") == {"choose anise", "choose cinnamon"}


@pytest.mark.parametrize("card,cost", [("quacksalber", "gold"), ("schmied", "gold"), ("bootsmann", "gold")])
def test_gold_cost_unpayable_makes_action_illegal(engine: Any, card: str, cost: str) -> None:
    """`pay n gold` with too little gold: the caravan action cannot be chosen; pass/part still can."""
    need = 2 if card == "bootsmann" else 1
    g = engine.from_json(solo(card, res0=resources_dict(3, gold=need - 1)))
    sel = options(g, "c0:")
    assert "c0:a" not in sel
    assert {"c0:part", "c0:pass"} <= sel
