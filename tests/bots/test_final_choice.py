"""The final choice of a search at a temperature: its draw depends on the position as the player
knows it, not on the seed alone."""

from __future__ import annotations

import copy
import random
from typing import Any

import engine_ext
from bots.base import position_key
from lab.bots import make_bot


def _positions(n: int, players: int = 2) -> list[engine_ext.Game]:
    """`n` positions with at least two legal decisions, from seeded random games."""
    out = []
    seed = 0
    while len(out) < n:
        g = engine_ext.new_game(players, seed=seed)
        rng = random.Random(seed)
        for _ in range(rng.randrange(40)):
            if g.is_terminal:
                break
            g.state.apply_unchecked(rng.choice(g.legal_codes()))
        if not g.is_terminal and len(g.legal_codes()) > 1:
            out.append(g)
        seed += 1
    return out


def _key(an: Any) -> tuple[Any, ...]:
    return an.code, tuple((a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives), an.iterations


def test_with_one_seed_a_temperature_level_does_not_always_draw_the_same_quantile() -> None:
    """The draw came from the seed alone: with the service's default seed 0 novice took the most
    visited move at 0 of 40 positions (the same draw, 0.857, every time)."""
    novice = make_bot("novice")
    top = 0
    games = _positions(30)
    for g in games:
        an = novice.analyse(g, seed=0)
        top += an.code == an.alternatives[0].code
        assert _key(novice.analyse(g, seed=0)) == _key(an)  # same state and seed, same answer
    assert 3 <= top <= 27


def test_the_position_key_is_what_the_player_knows(engine: Any) -> None:
    """Equal for the full state, the player's view and another hidden order, in both builds (so a
    temperature draw cannot peek); different for different positions."""
    keys = set()
    for g in _positions(8, players=3):
        doc = g.to_json()
        other = copy.deepcopy(doc)
        random.Random(1).shuffle(other["decks"]["standard"])
        view = g.to_json(observer=g.current_player)
        same = {position_key(e.from_json(d).state) for d in (doc, other, view)
                for e in (engine, engine_ext.get_engine(False))}
        assert len(same) == 1
        keys |= same
    assert len(keys) == 8
