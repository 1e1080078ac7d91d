"""General rules (docs/rules.md#the-game-in-brief, docs/rules.md#where-the-rules-are-silent): caps, set,
`!`, costs, Patriarch/Matriarch, where drawn cards go, the Standard reshuffle, the fourth
caravan, game end, tie-break, turn limit, setup for 2-4 players, the Cut-and-Thrust variant."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tests.builders import (
    ADDITIONAL,
    CARD_VP,
    STANDARD,
    START_RANKS,
    assert_turn_over,
    caravans,
    current_player,
    deck,
    is_terminal,
    make_state,
    options,
    play,
    remaining_standard,
    res,
    resources_dict,
    solo,
    turn_player,
)

# --- increase caps and set --------------------------------------------------------------------


@pytest.mark.parametrize(
    "card,option,choices,start,expected",
    [
        ("marktfrau", "a", ("choose ginger",), {"ginger": 8}, {"ginger": 9}),
        ("marktfrau", "part", ("choose ginger",), {"ginger": 9}, {"ginger": 9}),
        ("nachtwaechter", "part", (), {"gold": 7}, {"gold": 9}),
        ("wagner", "a", (), {"mules": 5}, {"mules": 6}),
        ("recke", "part", (), {"mules": 3}, {"mules": 6}),
        ("korbmacher", "a", (), {"gold": 9, "mules": 6}, {"gold": 9, "mules": 6}),
        ("pflanzerin", "a", (), {"ginger": 7}, {"ginger": 9}),
    ],
)
def test_increase_caps(
    engine: Any, card: str, option: str, choices: tuple[str, ...], start: dict[str, int],
    expected: dict[str, int],
) -> None:
    """Spices and gold stop at 9, mules at 6; the excess is lost."""
    s = resources_dict(3, **start)
    g = engine.from_json(solo(card, res0=s))
    play(g, f"c0:{option}", *choices)
    assert res(g, 0) == {**s, **expected}


@pytest.mark.parametrize(
    "card,start,expected",
    [("schmied", {"gold": 9}, {"gold": 6}), ("schmied", {"gold": 6}, {"gold": 6}),
     ("schmied", {"gold": 0}, {"gold": 6}), ("wagner", {"mules": 6}, {"mules": 5}),
     ("mulihaendlerin", {"mules": 0}, {"mules": 6})],
)
def test_set_is_exact(engine: Any, card: str, start: dict[str, int], expected: dict[str, int]) -> None:
    """`=n` sets exactly: it may raise, lower or leave the value."""
    s = resources_dict(3, **start)
    g = engine.from_json(solo(card, res0=s))
    play(g, "c0:part")
    assert res(g, 0) == {**s, **expected}


# --- `!` and costs ------------------------------------------------------------------------------


def test_torwache_cannot_be_passed(engine: Any) -> None:
    g = engine.from_json(solo("torwache"))
    assert options(g, "c0:") == {"c0:a", "c0:part"}


def test_patriarch_and_matriarch_cannot_be_passed_nor_parted(engine: Any) -> None:
    g = engine.from_json(solo("patriarch", others=(("matriarch", "marktfrau"), ("recke", "bauer"))))
    assert options(g, "c0:") == {"c0:a", "c0:b"}
    assert options(g, "c1:") == {"c1:a"}
    assert options(g, "c2:") == {"c2:a", "c2:part", "c2:pass"}


@pytest.mark.parametrize(
    "card,option,resource,cost",
    [("adelige", "a", "gold", 1), ("graue_eminenz", "a", "gold", 1), ("quacksalber", "a", "gold", 1),
     ("schmied", "a", "gold", 1), ("gesandter", "a", "gold", 1), ("fahrender_haendler", "a", "gold", 1),
     ("bootsmann", "a", "gold", 2), ("hufschmied", "a", "mules", 1)],
)
def test_cost_must_be_payable(engine: Any, card: str, option: str, resource: str, cost: int) -> None:
    """An action whose cost cannot be paid in full is not legal; with exactly the cost it is."""
    g = engine.from_json(solo(card, res0=resources_dict(3, **{resource: cost - 1})))
    assert f"c0:{option}" not in options(g, "c0:")
    assert "c0:pass" in options(g, "c0:")
    with pytest.raises(ValueError):
        g.apply(f"c0:{option}")
    g = engine.from_json(solo(card, res0=resources_dict(3, **{resource: cost})))
    assert f"c0:{option}" in options(g, "c0:")


def test_illegal_decision_leaves_state_unchanged(engine: Any) -> None:
    g = engine.from_json(solo("adelige", res0=resources_dict(3, gold=0)))
    before = g.to_json()
    with pytest.raises(ValueError):
        g.apply("c0:a")
    assert g.to_json() == before


# --- Patriarch / Matriarch cycle -----------------------------------------------------------------


def test_patriarch_matriarch_cycle(engine: Any) -> None:
    p1 = [["korbmacher", "marktfrau"], ["pflanzerin", "recke"], ["bauer", "hoeker"]]
    g = engine.from_json(make_state(caravans=[[["patriarch", "knecht"], ["patriarch", "prophet"],
                                               ["patriarch", "wagner"]], p1],
                                    discard=["zuechter"]))
    play(g, "c0:b")
    assert caravans(g, 0)[0] == ["knecht", "matriarch"]
    play(g, "c0:pass")  # player 1
    play(g, "c0:pass")  # player 0: the Knecht goes back
    assert caravans(g, 0)[0] == ["matriarch", "knecht"]
    play(g, "c0:pass")  # player 1
    assert options(g, "c0:") == {"c0:a"}
    play(g, "c0:a")  # one card on the discard pile: the take is forced
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "zuechter"]
    assert_turn_over(g, 1)


# --- where cards go -----------------------------------------------------------------------------


def test_standard_reshuffle_from_discard_when_empty(engine: Any) -> None:
    """Standard deck empty: the discard pile is shuffled to form a new deck (docs/rules.md#when-a-deck-runs-out)."""
    doc = make_state(caravans=[[["patriarch", "knecht"], ["patriarch", "prophet"], ["patriarch", "wagner"]]],
                     discard=["bauer", "recke", "hoeker"])
    doc["removed"] = remaining_standard(doc)
    doc["decks"] = {"standard": {"count": 0, "known": []}}
    g = engine.from_json(doc)
    play(g, "c0:a")
    keeps = options(g, "keep ")
    assert keeps and keeps <= {"keep bauer", "keep recke", "keep hoeker"}
    play(g, sorted(keeps)[0])
    kept = caravans(g, 0)[0][-1]
    after = g.to_json()
    new_deck = deck(after, "standard")
    assert len(new_deck) == 1
    three = Counter(["bauer", "recke", "hoeker"])
    drawn = Counter([kept, *after["discard"]])
    assert sum(drawn.values()) == 2 and drawn <= three
    if new_deck[0] is not None:
        assert drawn + Counter(new_deck) == three
    assert_turn_over(g, 1)


def test_unselected_cards_destinations(engine: Any) -> None:
    """Standard rest face up on the discard pile; Special and Contract rest under their decks."""
    g = engine.from_json(solo("prophet", standard_top=["bauer", "recke", "hoeker"]))
    play(g, "c0:a", "keep recke")
    assert Counter(g.to_json()["discard"]) == Counter(["bauer", "hoeker"])
    g = engine.from_json(solo("kraeuterfrau", special_top=["schneider", "bootsmann"]))
    play(g, "c0:part", "keep schneider")
    assert deck(g.to_json(), "special")[-1] == "bootsmann"
    assert g.to_json()["discard"] == []
    g = engine.from_json(solo("bauer", contract_top=[30, 2, 3]))
    play(g, "c0:a", "fulfil 30")
    assert sorted(deck(g.to_json(), "contract")[-2:]) == [2, 3]
    assert g.to_json()["discard"] == []


def test_empty_caravan_offers_no_turn(engine: Any) -> None:
    cars = [[["recke", "bauer"], [], ["patriarch", "knecht"]]]
    g = engine.from_json(make_state(caravans=cars))
    assert options(g, "c1:") == set()
    assert options(g, "c0:") and options(g, "c2:")


def test_player_without_cards_passes_automatically(engine: Any) -> None:
    cars = [[["recke", "bauer"], ["patriarch", "knecht"]], [[], [], []]]
    g = engine.from_json(make_state(caravans=cars))
    play(g, "c0:pass")
    assert current_player(g) == 0
    assert turn_player(g) == 0
    assert options(g, "c0:") == {"c0:a", "c0:part", "c0:pass"}


def test_turn_order_clockwise(engine: Any) -> None:
    p = [["korbmacher", "marktfrau"], ["pflanzerin", "quacksalber"], ["bauer", "hoeker"]]
    g = engine.from_json(make_state(players=3, caravans=[p, p, p], turn_player=1, start_player=1))
    seen = []
    for _ in range(4):
        seen.append(turn_player(g))
        turn_before = g.to_json()["turn"]
        play(g, "c0:pass")
        assert g.to_json()["turn"] == turn_before + 1
    assert seen == [1, 2, 0, 1]


# --- game end, tie-break, turn limit -------------------------------------------------------------

PASSABLE = [["korbmacher", "patriarch"], ["marktfrau", "patriarch"], ["pflanzerin", "patriarch"]]
SCHREIBER = [["schreiber", "korbmacher"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
VP23 = [21, 22, 23, 24, 9]  # 4 x 5 + 3


def test_game_ends_after_round_in_which_25_reached(engine: Any) -> None:
    doc = make_state(caravans=[SCHREIBER, PASSABLE], contracts=[VP23, [2]], display=[1, 17, 29, 30],
                     contract_top=[5])
    g = engine.from_json(doc)
    assert g.vp(0) == 23
    play(g, "c0:part", "fulfil 1")
    assert g.vp(0) == 25
    assert g.to_json()["end_triggered"] is True
    assert not is_terminal(g)
    assert current_player(g) == 1  # the round is played to its end
    play(g, "c0:pass")
    assert is_terminal(g)
    assert g.to_json()["game_over"] is True
    assert g.winner() == 0
    assert current_player(g) == -1
    assert g.legal() == []


def test_game_ends_at_once_when_last_player_of_round_reaches_25(engine: Any) -> None:
    doc = make_state(caravans=[SCHREIBER, PASSABLE], contracts=[VP23, [2]], display=[1, 17, 29, 30],
                     contract_top=[5], start_player=1, turn_player=0, turn=1)
    g = engine.from_json(doc)
    play(g, "c0:part", "fulfil 1")
    assert is_terminal(g)
    assert g.winner() == 0


def test_game_end_three_players_round_completes(engine: Any) -> None:
    """Player 1 reaches 25 in a round started by player 0: player 2 still moves, then it ends."""
    doc = make_state(players=3, caravans=[PASSABLE, SCHREIBER, PASSABLE], contracts=[[], VP23, []],
                     display=[1, 17, 29, 30], contract_top=[5], turn_player=1, turn=1)
    g = engine.from_json(doc)
    play(g, "c0:part", "fulfil 1")
    assert not is_terminal(g)
    assert current_player(g) == 2
    play(g, "c0:pass")
    assert is_terminal(g)
    assert g.winner() == 1


def test_below_25_does_not_trigger_end(engine: Any) -> None:
    doc = make_state(caravans=[SCHREIBER, PASSABLE], contracts=[[21, 22, 23, 24], [2]],
                     display=[1, 17, 29, 30], contract_top=[5])
    g = engine.from_json(doc)
    play(g, "c0:part", "fulfil 1")
    assert g.vp(0) == 22
    assert g.to_json()["end_triggered"] is False
    play(g, "c0:pass")
    assert not is_terminal(g)


@pytest.mark.parametrize("p0_scores_now,winner", [(True, 0), (False, 1)])
def test_tie_break_last_to_reach_total_wins(engine: Any, p0_scores_now: bool, winner: int) -> None:
    """Start player 1 reached 25 on turn 8; player 0 (last in the round) now moves on turn 9.
    - player 0 fulfils contract 1 (2 VP) to reach 25 too: tied, player 0 reached it last and wins;
    - player 0 has 25 since turn 5 and passes: tied, player 1 reached it last and wins."""
    p1 = [25, 26, 27, 28, 10]  # 5 + 5 + 6 + 6 + 3 = 25
    contracts = [VP23 if p0_scores_now else [*VP23, 2], p1]
    doc = make_state(caravans=[SCHREIBER, PASSABLE], contracts=contracts, display=[1, 17, 29, 30],
                     contract_top=[5], start_player=1, turn_player=0, turn=9, end_triggered=True,
                     last_scored=[5, 8])
    g = engine.from_json(doc)
    assert g.vp(1) == 25
    if p0_scores_now:
        assert g.vp(0) == 23
        play(g, "c0:part", "fulfil 1")
    else:
        assert g.vp(0) == 25
        play(g, "c0:pass")
    assert g.vp(0) == 25
    assert is_terminal(g)
    assert g.winner() == winner


def test_tie_break_counts_a_vp_loss_as_reaching_the_total(engine: Any) -> None:
    """The tie-break looks at when a player reached their final total, also by losing VP: player 0
    (25 from contracts + the Recke's 3) parts with the Recke on turn 9 and ends at 25, after
    player 1 reached 25 on turn 8: player 0 reached the final total last and wins."""
    p0 = [["recke", "korbmacher"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
    doc = make_state(caravans=[p0, PASSABLE], contracts=[[*VP23, 2], [25, 26, 27, 28, 10]],
                     start_player=1, turn_player=0, turn=9, end_triggered=True, last_scored=[3, 8])
    g = engine.from_json(doc)
    assert g.vp(0) == 28 and g.vp(1) == 25
    play(g, "c0:part")
    assert g.vp(0) == 25
    assert is_terminal(g)
    assert g.winner() == 0


def test_card_vp_can_trigger_game_end(engine: Any) -> None:
    """VP from a person card count: drawing a Recke (3 VP) to reach 25 triggers the end."""
    p0 = [["patriarch", "korbmacher"], ["patriarch", "marktfrau"], ["patriarch", "pflanzerin"]]
    doc = make_state(caravans=[p0, PASSABLE], contracts=[[21, 22, 23, 24, 2], []],
                     standard_top=["recke", "recke"])
    g = engine.from_json(doc)
    assert g.vp(0) == 22
    play(g, "c0:a")  # two Recken: keeping one is forced
    assert g.vp(0) == 25
    assert g.to_json()["end_triggered"] is True
    play(g, "c0:pass")
    assert is_terminal(g)
    assert g.winner() == 0


def test_display_stays_short_when_contract_deck_is_empty(engine: Any) -> None:
    """Contract deck empty: the display cannot be refilled and stays at 3 (docs/rules.md#when-a-deck-runs-out)."""
    display = [1, 17, 29, 30]
    rest = [n for n in range(2, 41) if n not in display]
    doc = make_state(caravans=[SCHREIBER, PASSABLE], contracts=[rest[:18], rest[18:]], display=display,
                     decks={"contract": []}, end_triggered=True, turn_player=0, start_player=0)
    g = engine.from_json(doc)
    play(g, "c0:part", "fulfil 1")
    doc2 = g.to_json()
    assert sorted(doc2["display"]) == [17, 29, 30]
    assert deck(doc2, "contract") == []
    assert 1 in doc2["seats"][0]["contracts"]
    assert current_player(g) == 1


def test_most_vp_wins(engine: Any) -> None:
    doc = make_state(caravans=[PASSABLE, PASSABLE], contracts=[[21, 22, 23, 24, 25], [9]], turn=3,
                     turn_player=1, start_player=0, end_triggered=True, last_scored=[1, 2])
    g = engine.from_json(doc)
    play(g, "c0:pass")
    assert is_terminal(g)
    assert g.winner() == 0


@pytest.mark.parametrize("p1_contracts,winner", [([9], 0), ([21], 1)])
def test_turn_limit_ends_game_scored_by_vp(engine: Any, p1_contracts: list[int], winner: int) -> None:
    doc = make_state(caravans=[PASSABLE, PASSABLE], contracts=[[1, 2], p1_contracts], turn=4, turn_limit=5,
                     last_scored=[0, 1])
    g = engine.from_json(doc)
    assert not is_terminal(g)
    play(g, "c0:pass")
    assert is_terminal(g)
    assert g.winner() == winner


def test_default_turn_limit_is_400(engine: Any) -> None:
    g = engine.new_game(players=2, seed=1)
    assert g.to_json()["turn_limit"] == 400


# --- setup --------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_setup(engine: Any, players: int, seed: int) -> None:
    g = engine.new_game(players=players, seed=seed)
    doc = g.to_json()
    assert doc["schema"] == "kashgar/state@1"
    assert doc["players"] == players
    assert len(doc["seats"]) == players
    starts: list[str] = []
    for s in doc["seats"]:
        assert s["resources"] == resources_dict(3)
        assert len(s["caravans"]) == 3
        for car in s["caravans"]:
            assert len(car) == 2 and car[0] == "patriarch"
            assert car[1] in START_RANKS
            starts.append(car[1])
        assert s["contracts"] == []
    assert len(set(starts)) == 3 * players
    lowest = min(range(players),
                 key=lambda p: min(START_RANKS[c[1]] for c in doc["seats"][p]["caravans"]))
    assert doc["start_player"] == lowest
    assert doc["turn_player"] == lowest
    assert current_player(g) == lowest
    assert doc["turn"] == 0
    if "aristokratin" in starts:
        assert doc["spare_patriarch"] is True
    assert doc["discard"] == [] and doc["removed"] == []
    assert len(doc["display"]) == 4 and len(set(doc["display"])) == 4
    assert all(1 <= n <= 40 for n in doc["display"])
    assert len(deck(doc, "contract")) == 36
    assert len(deck(doc, "special")) == 12
    assert len(deck(doc, "standard")) == 76
    assert doc["variant"]["additional"] == []
    assert doc["game_over"] is False and doc["end_triggered"] is False
    assert all(g.vp(p) == sum(_start_vp(c[1]) for c in doc["seats"][p]["caravans"]) for p in range(players))


def _start_vp(card: str) -> int:
    return CARD_VP[card]


@pytest.mark.parametrize("players", [2, 3])
def test_setup_spare_patriarch_back_in_box_without_aristokratin(engine: Any, players: int) -> None:
    """Card index (docs/rules.md#aristokratin-aristocrat): "In games with fewer than four players it can be that the
    Aristocrat is not distributed. Then during this match no one can add a caravan and the extra
    Patriarch is returned to the box." So `spare_patriarch` is false in such a deal."""
    checked = 0
    for seed in range(12):
        doc = engine.new_game(players=players, seed=seed).to_json()
        starts = {car[1] for s in doc["seats"] for car in s["caravans"]}
        if "aristokratin" not in starts:
            assert doc["spare_patriarch"] is False, f"seed {seed}: Aristokratin not dealt, spare kept"
            checked += 1
    assert checked > 0


def test_setup_four_players_deals_aristokratin(engine: Any) -> None:
    """With 4 players all 12 Start cards are dealt, so the spare Patriarch is available."""
    doc = engine.new_game(players=4, seed=5).to_json()
    starts = {car[1] for s in doc["seats"] for car in s["caravans"]}
    assert starts == set(START_RANKS)
    assert doc["spare_patriarch"] is True
    assert doc["start_player"] == next(p for p, s in enumerate(doc["seats"])
                                       if any(c[1] == "kraemerin" for c in s["caravans"]))


def test_derived_standard_deck_is_not_in_manifest_order(engine: Any) -> None:
    """Decks left out of a state are derived from the manifest; their hidden order must be a
    (seeded) shuffle, not the manifest's sorted order: a Patriarch draw from such a state must not
    always show the first two cards of the sorted manifest."""
    seen = set()
    for rng in range(8):
        g = engine.from_json(solo("patriarch", rest=("knecht",), rng=rng))
        play(g, "c0:a")
        keeps = sorted(options(g, "keep "))
        if keeps:
            play(g, keeps[0])
        doc = g.to_json()
        seen.add((doc["seats"][0]["caravans"][0][-1], *sorted(doc["discard"])))
    assert len(seen) > 1, f"every derived deck starts with the same cards: {seen}"


def test_derived_contract_deck_is_not_in_sorted_order(engine: Any) -> None:
    """Same for the Contract deck: the Gildenherr's four new contracts from a derived deck must
    depend on the state's rng, not always be the four lowest numbers left."""
    seen = set()
    for rng in range(8):
        g = engine.from_json(solo("gildenherr", res0=resources_dict(0), rng=rng))
        play(g, "c0:a")
        seen.add(tuple(sorted(g.to_json()["display"])))
    assert len(seen) > 1, f"every derived Contract deck starts with the same contracts: {seen}"


def test_setup_is_seeded(engine: Any) -> None:
    a = engine.new_game(players=3, seed=42).to_json()
    b = engine.new_game(players=3, seed=42).to_json()
    assert a == b
    deals = {str(engine.new_game(players=3, seed=s).to_json()["seats"]) for s in range(6)}
    assert len(deals) > 1


def test_setup_start_player_varies_with_deal(engine: Any) -> None:
    """Over a few seeds, the start player is always the holder of the lowest rank (not always seat 0)."""
    starts = set()
    for seed in range(12):
        doc = engine.new_game(players=4, seed=seed).to_json()
        starts.add(doc["start_player"])
    assert len(starts) > 1


# --- Cut-and-Thrust variant -----------------------------------------------------------------------


def _standard_contents(doc: dict[str, Any]) -> Counter[str] | None:
    cards = deck(doc, "standard")
    if any(c is None for c in cards):
        return None
    return Counter(cards)


def test_variant_off(engine: Any) -> None:
    doc = engine.new_game(players=2, seed=3, variant=None).to_json()
    assert doc["variant"]["additional"] == []
    assert len(deck(doc, "standard")) == 76
    contents = _standard_contents(doc)
    if contents is not None:
        assert contents == Counter(STANDARD)


def test_variant_all(engine: Any) -> None:
    doc = engine.new_game(players=2, seed=3, variant="all").to_json()
    assert Counter(doc["variant"]["additional"]) == Counter(ADDITIONAL)
    assert len(deck(doc, "standard")) == 88
    contents = _standard_contents(doc)
    if contents is not None:
        assert contents == Counter(STANDARD) + Counter(ADDITIONAL)


def test_variant_subset(engine: Any) -> None:
    chosen = ["hirte", "hirte", "torwache"]
    doc = engine.new_game(players=2, seed=3, variant={"additional": chosen}).to_json()
    assert Counter(doc["variant"]["additional"]) == Counter(chosen)
    assert len(deck(doc, "standard")) == 79
    contents = _standard_contents(doc)
    if contents is not None:
        assert contents == Counter(STANDARD) + Counter(chosen)


def test_additional_card_outside_variant_rejected(engine: Any) -> None:
    doc = make_state(caravans=[[["hirte", "korbmacher"], ["patriarch", "marktfrau"]]], variant="off")
    with pytest.raises(ValueError):
        engine.from_json(doc)


def test_additional_cards_drawn_as_standard_in_variant(engine: Any) -> None:
    g = engine.from_json(solo("patriarch", rest=("knecht",), standard_top=["torwache", "bettler"],
                              variant="all"))
    play(g, "c0:a")
    assert options(g, "keep ") == {"keep torwache", "keep bettler"}
    play(g, "keep torwache")
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "torwache"]
    assert g.to_json()["discard"] == ["bettler"]


# --- who knows the cards put under a deck -----------------------------------------------------------


def _known(view: dict[str, Any], name: str) -> dict[int, Any]:
    return {int(i): c for i, c in view["decks"][name].get("known", [])}


def test_special_rest_under_deck_known_only_to_drawer(engine: Any) -> None:
    g = engine.from_json(solo("adelige", special_top=["schneider", "bootsmann", "gildenherr"]))
    play(g, "c0:a", "keep bootsmann")
    n = len(deck(g.to_json(), "special"))
    assert _known(g.to_json(observer=0), "special") == {n - 1: "schneider"}
    assert _known(g.to_json(observer=1), "special") == {}


def test_contract_rest_under_deck_known_only_to_drawer(engine: Any) -> None:
    g = engine.from_json(solo("bauer", contract_top=[30, 2, 3]))
    play(g, "c0:a", "fulfil 30")
    n = len(deck(g.to_json(), "contract"))
    mine = _known(g.to_json(observer=0), "contract")
    assert set(mine) == {n - 2, n - 1} and set(mine.values()) == {2, 3}
    assert _known(g.to_json(observer=1), "contract") == {}


def test_gesandter_shuffle_forgets_known_positions(engine: Any) -> None:
    """After the Gesandter shuffles the Special deck nobody knows where any card is, not even the
    card the player just put under it."""
    g = engine.from_json(solo("gesandter", special_top=["schneider", "bootsmann"]))
    play(g, "c0:a", "keep bootsmann")
    assert _known(g.to_json(observer=0), "special") == {}
    assert _known(g.to_json(observer=1), "special") == {}


def test_standard_deck_runs_out_mid_draw(engine: Any) -> None:
    """One card left, a Patriarch draws 2: the last card, then the discard pile is shuffled into a
    new deck and the second card comes from it."""
    doc = make_state(caravans=[[["patriarch", "knecht"], ["patriarch", "prophet"], ["patriarch", "wagner"]]],
                     discard=["recke", "hoeker"])
    doc["removed"] = remaining_standard(doc, keep_out=["bauer"])
    doc["decks"] = {"standard": ["bauer"]}
    g = engine.from_json(doc)
    play(g, "c0:a")
    keeps = options(g, "keep ")
    assert "keep bauer" in keeps and len(keeps) == 2
    assert keeps - {"keep bauer"} <= {"keep recke", "keep hoeker"}
    play(g, "keep bauer")
    after = g.to_json()
    assert caravans(g, 0)[0] == ["knecht", "patriarch", "bauer"]
    assert len(after["discard"]) == 1 and after["discard"][0] in ("recke", "hoeker")
    rest = deck(after, "standard")
    assert len(rest) == 1
    if rest[0] is not None:
        assert {rest[0], after["discard"][0]} == {"recke", "hoeker"}


def test_discarded_standard_cards_are_public(engine: Any) -> None:
    """The Standard rest goes face up on the discard pile: every player's view shows it."""
    g = engine.from_json(solo("prophet", standard_top=["bauer", "recke", "hoeker"]))
    play(g, "c0:a", "keep recke")
    for observer in (0, 1):
        assert Counter(g.to_json(observer=observer)["discard"]) == Counter(["bauer", "hoeker"])


def test_gildenherr_display_under_deck_known_to_all(engine: Any) -> None:
    """The four contracts the Gildenherr puts under the deck were face up: every player knows they
    are the bottom four."""
    g = engine.from_json(solo("gildenherr", display=[1, 9, 17, 29], contract_top=[2, 10, 18, 30]))
    play(g, "c0:a", "skip")
    n = len(deck(g.to_json(), "contract"))
    for observer in (0, 1):
        known = _known(g.to_json(observer=observer), "contract")
        assert sorted(c for i, c in known.items() if i >= n - 4) == [1, 9, 17, 29], (observer, known)
