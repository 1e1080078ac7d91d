"""Bad input: malformed, inconsistent or oversized states and decisions are rejected with a
StateError / DecisionError naming the field (a JSON pointer), never a crash. Strictly: an integer
field of a state is a JSON integer (not 3.0, not true), a wrong field is named by its own pointer
(also inside `oneOf` alternatives), an inconsistent display says so, and a decision's text or JSON
is read exactly (ASCII digits, no surrounding whitespace, no unknown keys). Every test runs on both
builds (the `engine` fixture)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

import engine_ext
from engine_ext import Decision, DecisionError, Engine, IllegalDecision, StateError

Doc = dict[str, Any]


@pytest.fixture
def doc(engine: Engine) -> Doc:
    return engine.new_game(2, seed=3).to_json()


def rejected(engine: Engine, doc: Any) -> StateError:
    with pytest.raises(StateError) as info:
        engine.from_json(doc)
    return info.value


@pytest.mark.parametrize("mutate,pointer", [
    (lambda d: d.pop("seats"), "/seats"),
    (lambda d: d.update(schema="kashgar/state@9"), "/schema"),
    (lambda d: d.update(players="two"), "/players"),
    (lambda d: d.update(players=5), "/players"),
    (lambda d: d["seats"][0]["resources"].update(gold=10), "/seats/0/resources/gold"),
    (lambda d: d["seats"][1]["resources"].update(mules=7), "/seats/1/resources/mules"),
    (lambda d: d["seats"][0]["resources"].update(ginger=-1), "/seats/0/resources/ginger"),
    (lambda d: d["seats"][0]["resources"].pop("pepper"), "/seats/0/resources/pepper"),
    (lambda d: d["seats"][0]["caravans"][0].append("dragon"), "/seats/0/caravans/0/2"),
    (lambda d: d["seats"][0]["caravans"][1].append("Recke!"), "/seats/0/caravans/1/2"),
    (lambda d: d.update(display=[1, 2, 3, 41]), "/display/3"),
    (lambda d: d.update(unknown_field=1), "/unknown_field"),
    (lambda d: d.update(turn_player=7), "/turn_player"),
    (lambda d: d.update(seats=d["seats"][:1]), "/seats"),
    (lambda d: d.update(turn=405, turn_limit=400), "/turn"),
])
def test_malformed_states_name_the_field(engine: Engine, doc: dict[str, Any], mutate: Any, pointer: str) -> None:
    bad = copy.deepcopy(doc)
    mutate(bad)
    err = rejected(engine, bad)
    assert err.pointer == pointer, err
    assert err.message


def test_not_an_object(engine: Engine) -> None:
    for bad in (None, [], "state", 3):
        assert rejected(engine, bad).pointer == ""


def test_more_copies_than_the_game_has(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][0]["caravans"][0] += ["recke", "recke", "recke"]
    err = rejected(engine, doc)
    assert err.pointer == "/seats/0/caravans/0/4" and "more Warrior cards" in err.message  # recke, in English


def test_counts_that_do_not_add_up(engine: Engine, doc: dict[str, Any]) -> None:
    doc["decks"]["standard"] = doc["decks"]["standard"][:-1]  # one card lost
    err = rejected(engine, doc)
    assert err.pointer == "/decks/standard" and "add up" in err.message


def test_contract_twice(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][1]["contracts"] = [doc["display"][0]]
    err = rejected(engine, doc)
    assert err.pointer.startswith("/display/") or err.pointer.startswith("/seats/1/contracts")
    assert "twice" in err.message


def test_additional_card_outside_the_variant(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][0]["caravans"][0].append("torwache")
    err = rejected(engine, doc)
    assert err.pointer == "/seats/0/caravans/0/2"


def test_start_card_in_the_discard(engine: Engine, doc: dict[str, Any]) -> None:
    start = doc["seats"][0]["caravans"][0].pop()
    doc["discard"].append(start)
    assert rejected(engine, doc).pointer == "/discard/0"


def test_oversized_state(engine: Engine, doc: dict[str, Any]) -> None:
    doc["seats"][0]["caravans"][0] = ["marktfrau"] * 60000
    err = rejected(engine, doc)
    assert err.pointer == "" and "larger" in err.message


def test_a_state_without_any_decision(engine: Engine, doc: dict[str, Any]) -> None:
    for seat in doc["seats"]:
        seat["caravans"] = [[], [], []]
    doc["decks"] = {}
    err = rejected(engine, doc)
    assert err.pointer == "/turn_player"


def test_bad_pending(engine: Engine, doc: dict[str, Any]) -> None:
    doc["pending"] = {"wait": "keep", "card": "patriarch", "caravan": 0, "position": 0, "action": "a", "step": 5}
    assert rejected(engine, doc).pointer == "/pending/step"
    doc["pending"] = {"wait": "keep", "card": "recke", "caravan": 0, "position": 0, "action": "a", "step": 0}
    assert rejected(engine, doc).pointer == "/pending/position"


@pytest.mark.parametrize("bad", ["", "c9:a", "c0:fly", "choose gold dust", "remove c0", {"kind": "x"},
                                 {"kind": "select", "caravan": "0", "option": "a"}, {"kind": "fulfil"}, 42.5])
def test_malformed_decisions(engine: Engine, bad: Any) -> None:
    g = engine.new_game(2, seed=1)
    with pytest.raises((DecisionError, IllegalDecision)):
        g.apply(bad)
    assert g.to_json() == engine.new_game(2, seed=1).to_json()  # nothing changed


def test_illegal_decision_lists_the_legal_ones(engine: Engine) -> None:
    g = engine.new_game(2, seed=1)
    with pytest.raises(IllegalDecision) as info:
        g.apply("c0:pass")  # a Patriarch cannot be passed
    assert "c0:a" in info.value.message


def test_validate_is_the_loader() -> None:
    doc = engine_ext.new_game(3, seed=9).to_json()
    engine_ext.validate(doc)
    doc["seats"][2]["resources"]["gold"] = 99
    with pytest.raises(StateError):
        engine_ext.validate(doc)


@pytest.fixture
def view(engine: Engine) -> Doc:
    return engine.new_game(2, seed=3).to_json(observer=0)


@pytest.fixture
def pending_doc(engine: Engine) -> Doc:
    """A full state mid-turn (a drawn card to keep), reached by first legal decisions."""
    g = engine.new_game(2, seed=0)
    for _ in range(40):
        doc = g.to_json()
        if doc["pending"] and doc["pending"]["position"] is not None and doc["pending"].get("drawn"):
            return doc
        g.apply(g.legal()[0])
    raise AssertionError("no mid-turn state with drawn cards in 40 decisions")




def _set(path: str, value: Any) -> Callable[[Doc], None]:
    """A mutation that sets the field at JSON pointer `path` (list indices as numbers)."""
    parts = [int(p) if p.lstrip("-").isdigit() else p for p in path.strip("/").split("/")]

    def mutate(d: Doc) -> None:
        node: Any = d
        for p in parts[:-1]:
            node = node[p]
        node[parts[-1]] = value(node[parts[-1]]) if callable(value) else value
    return mutate


def as_float(v: Any) -> Any:
    return float(v)


def as_bool(v: Any) -> Any:
    return bool(v)


# every integer field of a full state at the start of a game, written as x.0 (and as a bool)
FULL_INT_FIELDS = [
    "/players", "/turn", "/turn_player", "/start_player", "/turn_limit", "/rng",
    "/seats/0/resources/ginger", "/seats/0/resources/gold", "/seats/1/resources/mules",
    "/seats/0/last_scored", "/display/0", "/display/3", "/decks/contract/0", "/decks/contract/35",
]


@pytest.mark.parametrize("path", FULL_INT_FIELDS)
def test_whole_floats_are_not_integers(engine: Engine, doc: Doc, path: str) -> None:
    bad = copy.deepcopy(doc)
    _set(path, as_float)(bad)
    err = rejected(engine, bad)
    assert err.pointer == path, err
    assert "integer" in err.message, err


@pytest.mark.parametrize("path", [p for p in FULL_INT_FIELDS if p != "/players"])
def test_bools_are_not_integers(engine: Engine, doc: Doc, path: str) -> None:
    bad = copy.deepcopy(doc)
    _set(path, as_bool)(bad)
    assert rejected(engine, bad).pointer == path


def test_rng_as_a_float_is_refused(engine: Engine, doc: Doc) -> None:
    """5532687545945103299.0 is 5532687545945103360 as a float: loading it would silently change
    the state's shuffles (and break determinism)."""
    doc["rng"] = 5532687545945103299.0
    err = rejected(engine, doc)
    assert err.pointer == "/rng" and "integer" in err.message
    doc["rng"] = 5532687545945103299
    assert engine.from_json(doc).state.get_rng() == 5532687545945103299


@pytest.mark.parametrize("mutate,path", [
    (_set("/seats/0/contracts", [17.0]), "/seats/0/contracts/0"),
    (_set("/seats/1/vp_turn_start", 3.0), "/seats/1/vp_turn_start"),
    (_set("/seats/1/vp_turn_start", False), "/seats/1/vp_turn_start"),
    (lambda d: d["decks"].update(special={"cards": d["decks"]["special"],
                                          "known_by": [1.0] + [0] * (len(d["decks"]["special"]) - 1)}),
     "/decks/special/known_by/0"),
])
def test_other_integer_fields_of_a_full_state(engine: Engine, doc: Doc, mutate: Any, path: str) -> None:
    if path.startswith("/seats/0/contracts"):  # contract 17 moves to seat 0 (as 17.0)
        doc["decks"]["contract"] = [c for c in doc["decks"]["contract"] if c != 17]
        doc["display"] = [c for c in doc["display"] if c != 17]
    mutate(doc)
    assert rejected(engine, doc).pointer == path


@pytest.mark.parametrize("path", ["/decks/contract/count", "/decks/standard/count", "/decks/special/count"])
def test_deck_counts_of_a_view(engine: Engine, view: Doc, path: str) -> None:
    engine.from_json(view)  # the view as it is loads
    for value in (as_float, as_bool):
        bad = copy.deepcopy(view)
        _set(path, value)(bad)
        err = rejected(engine, bad)
        assert err.pointer == path, err


def test_known_positions_of_a_view(engine: Engine, view: Doc) -> None:
    view["decks"]["contract"]["known"] = [[0.0, 5]]
    view["display"] = [c for c in view["display"] if c != 5]
    err = rejected(engine, view)
    assert err.pointer == "/decks/contract/known/0/0", err


@pytest.mark.parametrize("path", ["/pending/caravan", "/pending/position", "/pending/step", "/pending/decider",
                                  "/pending/registers/reg", "/pending/registers/n", "/pending/registers/flags"])
def test_pending_integer_fields(engine: Engine, pending_doc: Doc, path: str) -> None:
    # a keep step reads none of the registers (the document leaves them out): written, they are ignored
    pending_doc["pending"]["registers"].update(reg=-1, n=0, flags=0)
    engine.from_json(pending_doc)
    for value in (as_float, as_bool):
        bad = copy.deepcopy(pending_doc)
        _set(path, value)(bad)
        assert rejected(engine, bad).pointer == path


def test_drawn_count_of_a_view(engine: Engine, pending_doc: Doc) -> None:
    pending_doc["pending"]["drawn"] = {"count": 2.0}
    assert rejected(engine, pending_doc).pointer == "/pending/drawn/count"


@pytest.mark.parametrize("observer", [0.0, 1.0, True, False, 1.5, "0"])
def test_observer_must_be_a_seat_number(engine: Engine, view: Doc, observer: Any) -> None:
    """Once a TypeError ("unsupported operand type(s) for <<") with no pointer."""
    view["observer"] = observer
    err = rejected(engine, view)
    assert err.pointer == "/observer", err
    assert "operand" not in err.message and "integer" in err.message, err


def test_observer_out_of_range(engine: Engine, view: Doc) -> None:
    view["observer"] = 2
    err = rejected(engine, view)
    assert err.pointer == "/observer" and "no seat of index 2" in err.message


@pytest.mark.parametrize("observer", [0.0, True, 1.5])
def test_to_json_observer_must_be_a_seat_number(engine: Engine, observer: Any) -> None:
    g = engine.new_game(2, seed=1)
    with pytest.raises(ValueError, match="observer"):
        g.to_json(observer=observer)


# ---- the display ---------------------------------------------------------------------------

@pytest.mark.parametrize("keep", [0, 3])
def test_a_short_display_is_named(engine: Engine, doc: Doc, keep: int) -> None:
    """The display shows 4 contracts while the deck has any (it is refilled at once): a display
    with fewer, and its contracts nowhere else, is reported on /display, not on the deck."""
    doc["display"] = doc["display"][:keep]
    err = rejected(engine, doc)
    assert err.pointer == "/display", err
    assert "display" in err.message and "deck" in err.message


def test_a_short_display_in_a_view(engine: Engine, view: Doc) -> None:
    view["display"].pop()
    err = rejected(engine, view)
    assert err.pointer == "/display", err


def test_a_contract_lost_from_the_deck_is_named(engine: Engine, doc: Doc) -> None:
    lost = doc["decks"]["contract"].pop(7)
    err = rejected(engine, doc)
    assert err.pointer == "/decks/contract", err
    assert str(lost) in err.message and "add up" in err.message


# ---- decisions -----------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "c\uff10:a",            # FULLWIDTH DIGIT ZERO
    "c\u0660:a",            # ARABIC-INDIC DIGIT ZERO
    "fulfil \uff11\uff17", "pay \u0663", "remove c0 \u0661", "remove c\uff10 1",
    "route \uff11 0", "route 1 0 order \uff10 1",
    " c0:a", "c0:a ", " c0:a ", "c0:a\n", "\tskip", "skip\n",
    "route 1 0 order 0  1", "route 1 0 order 0\t1", "route 1 0 order 1 0 ",
    pytest.param("fulfil " + "1" * 5000, id="fulfil-5000-digits"), "pay 0003", "fulfil 017",
])
def test_loose_decision_texts_are_refused(engine: Engine, text: str) -> None:
    with pytest.raises(DecisionError):
        Decision.parse(text)
    g = engine.new_game(2, seed=1)
    with pytest.raises(DecisionError):
        g.apply(text)


def test_decision_text_must_be_a_string() -> None:
    for bad in (None, b"c0:a", 0.5):
        with pytest.raises(DecisionError):
            Decision.parse(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("obj,pointer", [
    ({"kind": "select", "caravan": 0, "option": "a", "extra": 1}, "/extra"),
    ({"kind": "skip", "caravan": 0}, "/caravan"),
    ({"kind": "choose", "resource": "gold", "amount": 1}, "/amount"),
    ({"kind": "keep", "card": "marktfrau", "caravan": 0}, "/caravan"),
    ({"kind": "take", "card": "marktfrau", "Card": "x"}, "/Card"),
    ({"kind": "fulfil", "contract": 17, "free": True}, "/free"),
    ({"kind": "remove", "caravan": 0, "position": 1, "option": "a"}, "/option"),
    ({"kind": "pay", "amount": 2, "resource": "gold"}, "/resource"),
    ({"kind": "route", "to": [1, 0], "orders": [0, 1]}, "/orders"),
    ({"kind": ["select"], "caravan": 0, "option": "a"}, "/kind"),
    ({"kind": {"select": 1}}, "/kind"),
    ({"kind": "fulfil", "contract": 17.0}, "/contract"),
    ({"kind": "select", "caravan": True, "option": "a"}, "/caravan"),
])
def test_loose_decision_json_is_refused(engine: Engine, obj: dict[str, Any], pointer: str) -> None:
    with pytest.raises(DecisionError) as info:
        Decision.from_json(obj)
    assert info.value.pointer == pointer, info.value
    g = engine.new_game(2, seed=1)
    with pytest.raises(DecisionError):
        g.apply(obj)


def test_legal_decisions_still_round_trip(engine: Engine, pending_doc: Doc) -> None:
    for g in (engine.new_game(3, seed=2), engine.from_json(pending_doc)):
        for d in g.legal():
            assert Decision.parse(str(d)) == d
            assert Decision.from_json(d.to_json()) == d
            assert g.code(str(d)) == g.code(d.to_json())


def test_errors_survive_pickling_with_their_pointer() -> None:
    """Arena workers and root-parallel parts send errors back across processes; a StateError was
    rebuilt from its one-string args and failed (TypeError: missing 'message')."""
    import pickle

    from engine_ext.decisions import DecisionError
    from engine_ext.document.schema import StateError

    e = pickle.loads(pickle.dumps(StateError("/seed", "the seed is an integer")))
    assert isinstance(e, StateError) and (e.pointer, e.message) == ("/seed", "the seed is an integer")
    assert str(e) == "/seed: the seed is an integer"
    d = pickle.loads(pickle.dumps(DecisionError("unknown field", "/extra")))
    assert isinstance(d, DecisionError) and (d.message, d.pointer) == ("unknown field", "/extra")


def test_an_unknown_field_is_pointed_at_itself(engine: Engine) -> None:
    """The pointer named the object holding it (`/` or `/seats/0`), the message the key."""
    doc = engine.new_game(players=2, seed=1).to_json(observer=0)
    doc["bogus"] = 1
    with pytest.raises(StateError) as info:
        engine.from_json(doc)
    assert info.value.pointer == "/bogus"
    del doc["bogus"]
    doc["seats"][0]["x/y"] = 2
    with pytest.raises(StateError) as info:
        engine.from_json(doc)
    assert info.value.pointer == "/seats/0/x~1y"
