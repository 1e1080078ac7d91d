"""Every bot returns a legal decision on many random states, mid-turn states included, on both
engine builds (the `engine` fixture)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from lab.bots import make_bot


def random_states(engine: Any, count: int, seed: int) -> list[Any]:
    """`count` states reached by random play from random deals (2-4 players), mid-turn included."""
    rng = random.Random(seed)
    out: list[Any] = []
    while len(out) < count:
        g = engine.new_game(players=rng.choice((2, 3, 4)), seed=rng.randrange(10**6))
        st = g.state
        stops = sorted(rng.sample(range(400), 12))
        k = 0
        for stop in stops:
            while k < stop and not st.is_terminal():
                codes = st.legal_codes()
                st.apply_unchecked(codes[rng.randrange(len(codes))])
                k += 1
            if st.is_terminal():
                break
            out.append(st.clone())
    return out[:count]


def _count(engine: Any) -> int:
    return 600 if engine.COMPILED else 150


def test_random_states_include_mid_turn(engine: Any) -> None:
    states = random_states(engine, 200, 1)
    assert sum(1 for s in states if s.pending() != 0) >= 10
    assert len({s.players for s in states}) == 3


@pytest.mark.parametrize("spec,factor", [("random", 1.0), ("greedy:samples=1", 0.5),
                                         ("ismcts:iterations=24", 0.5), ("det:iterations=24,worlds=3", 0.25),
                                         ("ismcts:iterations=24,macro=1,rollout=turn,evaluator=tuned", 0.25),
                                         ("novice", 0.25)])
def test_bot_returns_legal_decision(engine: Any, spec: str, factor: float) -> None:
    bot = make_bot(spec)
    states = random_states(engine, int(_count(engine) * factor), 7)
    for i, st in enumerate(states):
        legal = set(st.legal_codes())
        before = st.fingerprint() if hasattr(st, "fingerprint") else None
        code = bot.choose(st, seed=i)
        assert code in legal, (spec, i, code, legal)
        if before is not None:
            assert st.fingerprint() == before, "a bot must not change the state it analyses"


def test_analysis_of_a_mid_turn_state(engine: Any) -> None:
    st = next(s for s in random_states(engine, 200, 3) if s.pending() != 0 and len(s.legal_codes()) > 1)
    an = make_bot("ismcts:iterations=60").analyse(st, seed=1)
    assert an.code in st.legal_codes()
    assert sum(a.visits for a in an.alternatives) == 60
    assert {a.code for a in an.alternatives} == set(st.legal_codes())
    from engine_ext.game import Game

    g = Game(engine, st)
    assert all(str(g.decision(a.code)) for a in an.alternatives)
