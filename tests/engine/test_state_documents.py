"""What a state document must hold and how it is read: a `pending` step must be one the acting card's action can be at
(with the registers, drawn cards and decider that step has), a finished game pends nothing, the
Start cards and Patriarchs add up, a document writes only the registers its step reads (so a
reloaded game writes the same documents as the live one), bad decision codes and hand-made
Decisions are DecisionErrors, a large wrong document is refused quickly, and what no JSON text
holds is a StateError. Every test that takes `engine` runs on both builds."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
import tracemalloc
from functools import cache
from typing import Any

import pytest

import engine_ext
from engine_ext import Decision, DecisionError, Engine, Game, IllegalDecision, StateError
from engine_ext.document.schema import MAX_DOC_BYTES, WAIT_CODES
from tests.builders import resources_dict, solo
from tests.engine_helpers import require_compiled

Doc = dict[str, Any]


@cache
def _first_with(wait: str, players: int = 0, parting: bool = False) -> str:
    """The first full state (JSON text) waiting for `wait` (in a parting action) in seeded random
    games with every card."""
    eng = engine_ext.get_engine()
    for seed in range(300):
        n = players or 2 + seed % 3
        g = eng.new_game(n, seed=seed, variant="all")
        rnd = random.Random(seed)
        while not g.is_terminal:
            if g.state.pending() == WAIT_CODES[wait] and (not parting or g.to_json()["pending"]["action"] == "part"):
                return json.dumps(g.to_json())
            g.state.apply(rnd.choice(g.legal_codes()))
    raise AssertionError(f"no state waiting for {wait} in 300 games")


def waiting(wait: str, players: int = 0, parting: bool = False) -> Doc:
    doc: Doc = json.loads(_first_with(wait, players, parting))
    return doc


def rejected(engine: Engine, doc: Any) -> StateError:
    with pytest.raises(StateError) as info:
        engine.from_json(doc)
    return info.value


# ---- the pending step -------------------------------------------------------------------------

@pytest.mark.parametrize("wait", ["wheat", "contracts_free", "choose", "zimt"])
def test_a_draw_relabelled_as_another_wait(engine: Engine, wait: str) -> None:
    """A Patriarch's draw relabelled as the Bauer's wheat field (its drawn person cards read as
    contracts: the compiled build offered `fulfil 92` and wrote past the contract table)."""
    doc = waiting("keep")
    engine.from_json(doc)
    doc["pending"]["wait"] = wait
    err = rejected(engine, doc)
    assert err.pointer == "/pending/wait" and "keep" in err.message, err


def test_a_step_that_asks_nothing(engine: Engine) -> None:
    """A Patriarch's second caravan action turns it over: it never waits (the document was
    refused only as a state without a decision, on /pending)."""
    doc = engine.new_game(2, seed=0).to_json()
    doc["pending"] = {"wait": "keep", "card": "patriarch", "caravan": 0, "position": 0, "action": "b", "step": 0}
    err = rejected(engine, doc)
    assert err.pointer == "/pending/step", err


@pytest.mark.parametrize("wait,register,value", [
    ("zimt", "last", -1), ("trade", "last", -1), ("trade", "last", 5), ("trade", "n", 0),
    ("fulfil", "flags", 31), ("choose", "n", 127), ("set_distinct", "reg2", 127), ("remove_any", "n", 3),
])
def test_registers_out_of_what_the_engine_makes(engine: Engine, wait: str, register: str, value: int) -> None:
    """A Zimtfürst's or Fahrender Händler's `last` of -1 made a legal decision code -1 (Game.legal:
    "unknown decision code -1"); fulfil flags 31 made every contract free."""
    doc = waiting(wait)
    engine.from_json(doc)
    doc["pending"]["registers"][register] = value
    err = rejected(engine, doc)
    assert err.pointer == f"/pending/registers/{register}", err


def test_hirte_registers_and_decider(engine: Engine) -> None:
    doc = waiting("route", players=3)
    engine.from_json(doc)
    bad = copy.deepcopy(doc)
    bad["pending"]["registers"]["hirte_left"] = 4  # a 3-player game has 3 to route
    assert rejected(engine, bad).pointer == "/pending/registers/hirte_left"
    bad = copy.deepcopy(doc)
    bad["pending"]["decider"] = (doc["pending"]["decider"] + 1) % 3
    assert rejected(engine, bad).pointer in ("/pending/decider", "/pending/registers/hirte_next")


def test_only_the_hirte_lets_another_player_decide(engine: Engine) -> None:
    doc = waiting("choose")
    doc["pending"]["decider"] = (doc["turn_player"] + 1) % doc["players"]
    assert rejected(engine, doc).pointer == "/pending/decider"


def test_a_caravan_action_keeps_its_card_in_play(engine: Engine) -> None:
    """`position: null` put the acting card of a caravan action out of play; play then reached a
    state that was not over and offered nothing (and a playout divided by zero)."""
    doc = waiting("keep")
    assert doc["pending"]["action"] != "part"
    doc["pending"]["position"] = None
    err = rejected(engine, doc)
    assert err.pointer == "/pending/position", err


def test_a_parted_card_has_no_position(engine: Engine) -> None:
    doc = waiting("take", parting=True)
    engine.from_json(doc)
    doc["pending"]["position"] = 0
    assert rejected(engine, doc).pointer == "/pending/position"


def test_drawn_cards_of_the_right_kind_and_deck(engine: Engine) -> None:
    wheat = waiting("wheat")
    engine.from_json(wheat)
    bad = copy.deepcopy(wheat)
    bad["pending"]["drawn"][0] = "marktfrau"  # a person card among drawn contracts
    assert rejected(engine, bad).pointer == "/pending/drawn/0"
    bad = copy.deepcopy(wheat)
    bad["pending"]["drawn_from"] = "standard"
    assert rejected(engine, bad).pointer == "/pending/drawn_from"
    keep = waiting("keep")
    keep["pending"]["drawn_from"] = "contract"
    assert rejected(engine, keep).pointer == "/pending/drawn_from"
    choose = waiting("choose")
    card = next(c for c in choose["decks"]["standard"])
    choose["decks"]["standard"].remove(card)
    choose["pending"]["drawn"] = [card]  # nothing is drawn while choosing a resource
    assert rejected(engine, choose).pointer == "/pending/drawn"


def test_a_finished_game_pends_nothing(engine: Engine) -> None:
    """Accepted: the drawn cards vanished and the game's own document was then refused."""
    doc = waiting("keep")
    doc["game_over"] = True
    assert rejected(engine, doc).pointer == "/pending"


# ---- a playout on a state with no decision ----------------------------------------------------

@pytest.mark.parametrize("compiled", [True, False])
def test_playout_without_a_decision_raises(compiled: bool) -> None:
    """A state not over with no legal decision (only reachable by writing the core's array): the
    compiled playout died of SIGFPE (a modulo by zero), the interpreted raised ZeroDivisionError."""
    if compiled:
        require_compiled()
    code = f"""
import engine_ext
from engine_ext import core as L
eng = engine_ext.get_engine({compiled})
d = eng.new_game(2, seed=0).state.export()
for car in range(8):
    d[L.O_CAR + car * 3 + 2] = 0  # every caravan empty: nothing to select
st = eng.core.State(eng.rules)
st.load(d, 5)
assert not st.is_terminal() and st.gen_legal() == 0
for call in (lambda: st.playout(3), lambda: st.playout_limit(3, 10)):
    try:
        call()
    except ValueError as exc:
        print("ValueError", exc)
"""
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.count("ValueError no legal decision") == 2, out.stdout


# ---- Start cards and Patriarchs ---------------------------------------------------------------

@pytest.mark.parametrize("mutate,pointer", [
    (lambda d: d["seats"][0]["caravans"][0].extend(["patriarch"] * 5), "/seats/0/caravans/0/4"),
    (lambda d: d["seats"][0]["caravans"][0].pop(0), "/removed"),
    (lambda d: d.update(spare_patriarch=True), "/spare_patriarch"),
    (lambda d: d["seats"][0]["caravans"].append(["schreiber"]), "/seats/0/caravans/3/0"),
    (lambda d: d["removed"].append("patriarch"), "/removed/0"),
    # a caravan emptied: its Patriarch and Start card are nowhere (not removed)
    (lambda d: d["seats"][0]["caravans"].__setitem__(0, []), "/seats/0/caravans/0"),
    (lambda d: d["seats"][1]["caravans"][2].pop(1), "/seats/1/caravans"),
])
def test_start_cards_and_patriarchs_add_up(engine: Engine, mutate: Any, pointer: str) -> None:
    """Seed 0 deals no Aristokratin to 2 players: 6 Start cards, 6 Patriarchs, no spare."""
    doc = engine.new_game(2, seed=0).to_json()
    assert doc["spare_patriarch"] is False
    mutate(doc)
    assert rejected(engine, doc).pointer == pointer


def test_a_lost_start_card_is_found_in_a_view_too_and_a_lost_deck_card_is_named(engine: Engine) -> None:
    """A view hides the decks' order, not the caravans or the removed cards, where every Start card is."""
    g = engine.new_game(2, seed=0)
    view = g.view(1)
    view["seats"][0]["caravans"][0] = []
    err = rejected(engine, view)
    assert err.pointer == "/seats/0/caravans/0" and "Start card is missing" in err.message
    doc = g.to_json()
    lost = doc["decks"]["standard"].pop(3)
    err = rejected(engine, doc)
    assert err.pointer == "/decks/standard" and f"{lost} is nowhere" in err.message


def test_the_aristokratins_spare_patriarch(engine: Engine) -> None:
    seed = next(s for s in range(50) if engine.new_game(2, seed=s).to_json()["spare_patriarch"])
    doc = engine.new_game(2, seed=seed).to_json()
    engine.from_json(doc)
    doc["spare_patriarch"] = False  # her Patriarch is neither spare nor in a caravan
    assert rejected(engine, doc).pointer == "/spare_patriarch"


# ---- documents from live and reloaded games ---------------------------------------------------

@pytest.mark.parametrize("players,variant,seed", [(2, None, 0), (3, "all", 1), (4, "all", 2)])
def test_reloaded_games_write_the_same_documents(engine: Engine, players: int, variant: Any, seed: int) -> None:
    """The same position gave another document after a reload (the Bauer's wheat step wrote `n`
    31, left over from an earlier choice, where a reloaded game wrote 0): reload the live game
    now and then, play both on, and compare after every decision; every seat's view of a
    mid-turn state reads back as itself too."""
    rnd = random.Random(seed)
    g = engine.new_game(players, seed=seed, variant=variant)
    h = engine.from_json(g.to_json())
    step = 0
    while not g.is_terminal and step < 400:
        doc = g.to_json()
        assert h.to_json() == doc, f"step {step}: {doc['pending']} vs {h.to_json()['pending']}"
        if doc["pending"] and step % 5 == 0:
            for p in range(players):
                view = g.view(p)
                assert engine.from_json(view).view(p) == view, (step, p)
        if step % 3 == 0:
            h = engine.from_json(doc)
        code = rnd.choice(g.legal_codes())
        g.apply(code)
        h.apply(code)
        step += 1


def test_a_document_writes_only_the_registers_its_step_reads(engine: Engine) -> None:
    keep = waiting("keep")
    assert keep["pending"]["registers"] == {} and keep["pending"]["contract"] is None
    trade = waiting("trade")
    assert set(trade["pending"]["registers"]) == {"n", "last"}
    # documents written before keep loading: their leftover registers are not read
    keep["pending"]["registers"] = {"reg": -1, "reg2": -1, "n": 31, "last": 0, "flags": 8, "hirte_next": 1,
                                    "hirte_left": 0}
    assert engine.from_json(keep).to_json()["pending"]["registers"] == {}


# ---- decisions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("code", [519, 520, 2559, 2 ** 31, 2 ** 40, -1, (5 << 8) | 1, (8 << 8)])
def test_bad_integer_codes_are_decision_errors(engine: Engine, code: int) -> None:
    """519 (choose resource 7) raised IndexError building the message; 2**31 OverflowError in
    the compiled build."""
    g = engine.new_game(2, seed=0)
    before = g.to_json()
    with pytest.raises((DecisionError, IllegalDecision)):
        g.apply(code)
    assert g.to_json() == before
    with pytest.raises(DecisionError):
        Decision.from_code(code, g.state, engine.data)


@pytest.mark.parametrize("decision,pointer", [
    (Decision("bogus", (1,)), "/kind"),
    (Decision("select", ()), ""),
    (Decision("select", ("x", "a")), ""),
    (Decision("select", (0, "fly")), "/option"),
    (Decision("choose", ("dust",)), "/resource"),
    (Decision("fulfil", (1.5,)), ""),
    (Decision("skip", (1,)), ""),
    (Decision("route", ((1, 0), 5)), "/to"),
])
def test_hand_made_decisions_are_checked(engine: Engine, decision: Decision, pointer: str) -> None:
    """A Decision of an unknown kind was applied as `skip`; bad arguments raised TypeError,
    IndexError or KeyError."""
    doc = waiting("fulfil")
    g = engine.from_json(doc)
    with pytest.raises(DecisionError) as info:
        g.apply(decision)
    assert info.value.pointer == pointer
    assert g.to_json() == engine.from_json(doc).to_json()


# ---- documents no JSON text holds, and large ones ----------------------------------------------

def _nested(depth: int) -> list[Any]:
    top: list[Any] = []
    node = top
    for _ in range(depth):
        node.append([])
        node = node[0]
    return top


@pytest.mark.parametrize("mutate,pointer", [
    (lambda d: d.update(turn=10 ** 5000), "/turn"),
    (lambda d: d.update({("tuple",): 1}), ""),
    (lambda d: d.update(display=_nested(3000)), "/display" + "/0" * 32),
    (lambda d: d["seats"][0].update(resources={1, 2}), "/seats/0/resources"),
])
def test_what_no_json_holds_is_a_state_error(engine: Engine, mutate: Any, pointer: str) -> None:
    """From Python callers: RecursionError, ValueError and TypeError escaped without a pointer."""
    doc = engine.new_game(2, seed=1).to_json()
    mutate(doc)
    assert rejected(engine, doc).pointer == pointer


def test_a_large_document_is_refused_by_its_size(engine: Engine) -> None:
    doc = engine.new_game(4, seed=3, variant="all").to_json()
    doc["display"] = [1.5] * 50000  # 253 KB: 15 s and 184 MB to list every error
    err = rejected(engine, doc)
    assert err.pointer == "" and str(MAX_DOC_BYTES) in err.message


def test_a_wrong_document_under_the_limit_stops_at_its_first_errors(engine: Engine) -> None:
    doc = engine.new_game(4, seed=3, variant="all").to_json()
    room = MAX_DOC_BYTES - len(json.dumps(doc, separators=(",", ":")))
    doc["display"] = [1.5] * (room // 4 - 10)  # thousands of wrong items
    tracemalloc.start()
    try:
        err = rejected(engine, doc)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert err.pointer == "/display/0" and "integer" in err.message
    assert peak < 8_000_000, f"{peak} bytes to find the first wrong field"


# ---- other impossible documents -----------------------------------------------------------------

def test_a_view_has_no_rng(engine: Engine) -> None:
    view = engine.new_game(2, seed=1).view(0)
    view["rng"] = 12345
    assert rejected(engine, view).pointer == "/rng"


def test_known_by(engine: Engine) -> None:
    doc = engine.new_game(2, seed=1).to_json()
    special = doc["decks"]["special"]
    bad = copy.deepcopy(doc)
    bad["decks"]["special"] = {"cards": special, "known_by": [4] + [0] * (len(special) - 1)}  # seat 2 of 2
    assert rejected(engine, bad).pointer == "/decks/special/known_by/0"
    bad = copy.deepcopy(doc)
    bad["decks"]["special"] = {"count": len(special), "known_by": [1] * len(special)}
    assert rejected(engine, bad).pointer == "/decks/special/known_by"
    bad = copy.deepcopy(doc)
    bad["decks"]["special"] = {"cards": special, "known_by": [1]}
    assert rejected(engine, bad).pointer == "/decks/special/known_by"


def test_last_scored_and_game_over_follow_the_turns(engine: Engine) -> None:
    doc = engine.new_game(2, seed=1).to_json()
    bad = copy.deepcopy(doc)
    bad["seats"][0]["last_scored"] = 0  # turn 0 has not ended
    assert rejected(engine, bad).pointer == "/seats/0/last_scored"
    bad = copy.deepcopy(doc)
    bad["game_over"] = True
    assert rejected(engine, bad).pointer == "/game_over"


def test_finished_games_still_load(engine: Engine) -> None:
    g: Game = engine.new_game(3, seed=4)
    g.state.playout(4)
    assert g.is_terminal
    assert engine.from_json(g.to_json()).to_json() == g.to_json()


# ---- drawn cards, views and finished games -----------------------------------------------------

def _adelige_draw(engine: Engine) -> tuple[Game, int]:
    """A 2-player game right after its turn player's Adelige drew Bootsmann and Schneider (two
    Special cards only it sees), and that player."""
    doc = engine.new_game(2, seed=0).to_json()
    tp = doc["turn_player"]
    doc["decks"]["standard"].remove("adelige")
    doc["seats"][tp]["caravans"][0].insert(0, "adelige")
    special = doc["decks"]["special"]
    for card in ("bootsmann", "schneider"):
        special.remove(card)
    doc["decks"]["special"] = ["bootsmann", "schneider"] + special
    g = engine.from_json(doc)
    g.apply("c0:a")
    return g, tp


def test_a_step_play_carries_out_itself_is_never_asked(engine: Engine) -> None:
    """A pending step with one possible outcome is carried out by play, never asked: a Patriarch's
    draw of two Marktfrauen, or a Hochstapler's parting removal from a caravan it left empty (there
    the loaded empty caravan pointed at card 0, and `remove c2 0` and `remove c2 1` were offered)."""
    doc = engine.new_game(2, seed=0).to_json()
    tp = doc["turn_player"]
    for _ in range(2):
        doc["decks"]["standard"].remove("marktfrau")
    doc["pending"] = {"wait": "keep", "card": "patriarch", "caravan": 0, "position": 1, "action": "a", "step": 0,
                      "drawn": ["marktfrau", "marktfrau"]}
    doc["seats"][tp]["caravans"][0] = doc["seats"][tp]["caravans"][0][1:] + ["patriarch"]
    err = rejected(engine, doc)
    assert err.pointer == "/pending" and "keep marktfrau" in err.message
    doc = engine.new_game(2, seed=0).to_json()
    tp = doc["turn_player"]
    doc["removed"] = list(doc["seats"][tp]["caravans"][2])
    doc["seats"][tp]["caravans"][2] = []
    doc["decks"]["standard"].remove("hochstapler")
    doc["pending"] = {"wait": "remove", "card": "hochstapler", "caravan": 2, "position": None,
                      "action": "part", "step": 0}
    err = rejected(engine, doc)
    assert err.pointer == "/pending" and "(skip)" in err.message


def test_a_view_with_made_up_drawn_cards_may_offer_one_decision(engine: Engine) -> None:
    """Another seat's view of a choice among cards it has not seen is loaded with made-up cards,
    which may leave one decision (contracts it cannot fulfil: only `skip`); about a quarter of such
    views in random play do. They are not refused as a step play would carry out itself."""
    g = engine.new_game(2, seed=0)
    rnd = random.Random(0)
    while not g.is_terminal:
        g.apply(rnd.choice(g.legal()))
        other = 1 - g.turn_player
        if g.hidden_from(other):
            view = engine.from_json(g.to_json(observer=other))
            if len(view.legal_codes()) == 1:
                assert engine.from_json(g.to_json()).legal_codes() == g.legal_codes()  # the real one loads too
                return
    raise AssertionError("no view with one made-up decision in game 0")


def test_drawn_cards_are_unnamed_only_where_the_document_does_not_show_them(engine: Engine) -> None:
    """`{"count": n}` in a full state or in the drawer's own view made the engine invent the drawn
    cards, and a search then suggested keeping a card never drawn."""
    g, tp = _adelige_draw(engine)
    assert engine.from_json(g.to_json(observer=1 - tp)).hidden_from(1 - tp)
    for doc in (g.to_json(), g.to_json(observer=tp)):
        bad = copy.deepcopy(doc)
        bad["pending"]["drawn"] = {"count": 2}
        err = rejected(engine, bad)
        assert err.pointer == "/pending/drawn" and "list them" in err.message


@pytest.mark.parametrize("observer", [-1, 2, 2**31, True, 0.0])
def test_determinize_refuses_a_seat_not_in_the_game(engine: Engine, observer: Any) -> None:
    """The builds read an out-of-range seat differently (one sampled, the other raised)."""
    with pytest.raises(ValueError, match="observer must be a seat"):
        engine.new_game(2, seed=1).determinize(observer, 7)


def test_the_hufschmied_pauses_alike_whatever_it_put_back(engine: Engine) -> None:
    """The Hufschmied takes 2 of its 3 drawn contracts free. It paused only when the third could
    have been taken free too, so the other seat, seeing no pause, knew the contract put back was a
    large one. Now its view and events read alike for a small (9) or a large (21) third contract,
    at every step of the turn."""
    seen = {}
    for third in (9, 21):
        doc = solo("hufschmied", rest=("korbmacher",), res0=resources_dict(0, mules=2),
                   contract_top=[3, 12, third, 5])
        g = engine.from_json(doc)
        steps = []
        for d in ("c0:a", "fulfil 3", "fulfil 12"):
            events = g.apply(d, observer=1)
            view = g.to_json(observer=1)
            steps.append((view["pending"], view["decks"]["contract"], [e for e in events if e["event"] == "card"]))
        assert g.to_json()["seats"][0]["contracts"] == [3, 12]
        seen[third] = steps
    assert seen[9] == seen[21]


def test_a_private_choice_is_asked_even_when_forced(engine: Engine) -> None:
    """The Adelige draws two Bootsmaenner (Special cards only its player sees): keeping one is
    forced, but was carried out without a decision, so the other seat saw no pending keep and
    knew the card put back under the Special deck was a Bootsmann. It is asked now, and the other
    seat's view and events read as for two different cards."""
    seen = {}
    for pair in (("bootsmann", "bootsmann"), ("bootsmann", "schneider")):
        doc = engine.new_game(2, seed=0).to_json()
        tp = doc["turn_player"]
        doc["decks"]["standard"].remove("adelige")
        doc["seats"][tp]["caravans"][0].insert(0, "adelige")
        special = doc["decks"]["special"]
        for card in pair:
            special.remove(card)
        doc["decks"]["special"] = list(pair) + special
        g = engine.from_json(doc)
        events = g.apply("c0:a", observer=1 - tp)
        view = g.to_json(observer=1 - tp)
        seen[pair] = (view["pending"] and view["pending"]["wait"], view["pending"]["drawn"],
                      [e["card"] for e in events if e["event"] == "card"])
        assert len(g.legal_codes()) == len(set(pair))
        assert engine.from_json(g.to_json()).legal_codes() == g.legal_codes()  # the loader takes it
    assert seen[("bootsmann", "bootsmann")] == seen[("bootsmann", "schneider")] == ("keep", {"count": 2},
                                                                                    [None, None])
