"""Properties of the engine along random legal decision sequences (hypothesis)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import engine_ext
from engine_ext import Engine
from engine_ext.checks import problems
from tests.engine_helpers import random_walk, require_compiled

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def check_invariants(g: engine_ext.Game) -> None:
    assert problems(g) == []


@SETTINGS
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4), steps=st.integers(0, 400))
@example(seed=978, players=2, steps=309)  # a Geldeintreiber parting drew 9 Special cards (the buffer held 8)
def test_invariants_along_random_play(engine: Engine, seed: int, players: int, steps: int) -> None:
    g = engine.new_game(players, seed=seed, variant="all" if seed % 2 else None)
    rnd = random.Random(seed)
    for i in range(steps):
        if g.is_terminal:
            break
        g.state.apply(rnd.choice(g.legal_codes()))
        if i % 25 == 0:
            check_invariants(g)
    check_invariants(g)


@SETTINGS
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4))
def test_every_game_ends_with_a_winner(engine: Engine, seed: int, players: int) -> None:
    g = engine.new_game(players, seed=seed, variant="all")
    steps = g.state.playout(seed)
    assert g.is_terminal and steps > 0
    doc = g.to_json()
    assert doc["game_over"] and (doc["turn"] >= doc["turn_limit"] or max(g.scores()) >= 25)
    w = g.winner()
    assert g.vp(w) == max(g.scores())
    assert g.legal() == []


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4))
def test_compiled_and_interpreted_play_identically(seed: int, players: int) -> None:
    require_compiled()
    a = engine_ext.get_engine(True).new_game(players, seed=seed, variant="all")
    b = engine_ext.get_engine(False).new_game(players, seed=seed, variant="all")
    rnd = random.Random(seed)
    while not a.is_terminal:
        la, lb = a.legal_codes(), b.legal_codes()
        assert la == lb
        code = rnd.choice(la)
        a.state.apply(code)
        b.state.apply(code)
        assert a.state.fingerprint() == b.state.fingerprint()
    assert b.is_terminal and a.to_json() == b.to_json() and a.winner() == b.winner()


@SETTINGS
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4), steps=st.integers(0, 300))
@example(seed=602, players=2, steps=118)  # seat 1 scored mid-turn: its last_scored is set when the turn ends
@example(seed=40, players=3, steps=227)  # a Hirte routed itself into another caravan: pending.moved_to
def test_json_round_trips_and_plays_on_identically(engine: Engine, seed: int, players: int, steps: int) -> None:
    g = random_walk(engine, players, seed, steps)
    doc = g.to_json()
    g2 = engine.from_json(doc)
    assert g2.to_json() == doc
    assert [str(d) for d in g2.legal()] == [str(d) for d in g.legal()]
    g.state.playout(seed)
    g2.state.playout(seed)
    assert g.to_json() == g2.to_json()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4))
@example(seed=40, players=3)  # turn 227: a Hirte routed itself into another caravan (pending.moved_to)
def test_every_state_of_a_game_round_trips(engine: Engine, seed: int, players: int) -> None:
    """The whole game, not one state of it: each state after each decision reads back as itself
    (mid-turn states are where the rare documents are)."""
    g = engine.new_game(players, seed=seed, variant="all")
    rnd = random.Random(seed)
    for _ in range(300):
        if g.is_terminal:
            break
        g.state.apply(rnd.choice(g.legal_codes()))
        doc = g.to_json()
        assert engine.from_json(doc).to_json() == doc


@SETTINGS
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4), steps=st.integers(0, 300))
def test_decisions_round_trip(engine: Engine, seed: int, players: int, steps: int) -> None:
    g = random_walk(engine, players, seed, steps)
    for d in g.legal():
        assert engine_ext.Decision.parse(str(d)) == d
        assert eval(repr(d), {"Decision": engine_ext.Decision}) == d
        assert engine_ext.Decision.from_json(d.to_json()) == d
        assert g.decision(g.code(d)) == d


@SETTINGS
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4), steps=st.integers(0, 300),
       dseed=st.integers(0, 2**40))
def test_determinization_is_consistent_with_the_view(engine: Engine, seed: int, players: int, steps: int,
                                                     dseed: int) -> None:
    g = random_walk(engine, players, seed, steps)
    if g.is_terminal:
        return
    me = g.current_player
    det = g.determinize(me, dseed)
    assert det.view(me) == g.view(me)
    check_invariants(det)
    # the same seed from the view alone gives the same determinization: nothing hidden leaks
    from_view = engine.from_json(g.view(me)).determinize(me, dseed)
    assert from_view.to_json() == det.to_json()


def test_points_scored_mid_turn_are_credited_to_this_turn_after_a_round_trip(engine: Engine) -> None:
    g = random_walk(engine, 2, 602, 118)  # seat 1 is mid-turn and has scored on it
    doc = g.to_json()
    seat = doc["seats"][1]
    assert seat["last_scored"] < doc["turn"] and "vp_turn_start" in seat
    assert "vp_turn_start" not in doc["seats"][0]  # only a seat whose total changed on this turn
    for d in (doc, {**doc, "seats": [doc["seats"][0], {k: v for k, v in seat.items() if k != "vp_turn_start"}]}):
        g2 = engine.from_json(d)
        turn = g2.to_json()["turn"]
        while g2.to_json()["turn"] == turn:
            g2.state.apply(g2.legal_codes()[0])
        # with the turn-start total the change is scored on this turn; without it, it counts as old
        assert (g2.to_json()["seats"][1]["last_scored"] == turn) is (d is doc)
