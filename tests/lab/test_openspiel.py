"""OpenSpiel's own Python ISMCTSBot plays Kashgar (and the toy game) through our adapter."""

from __future__ import annotations

import pyspiel  # noqa: F401  (installed with the test extra: the adapter is tested, never skipped)

from lab import arena
from lab.bots import make_bot
from lab.openspiel_adapter import KashgarSpielGame, OpenSpielISMCTS


def test_resample_keeps_the_information_state() -> None:
    import numpy as np

    g = KashgarSpielGame({"players": 2, "seed": 3})
    s = g.new_initial_state()
    for _ in range(5):
        s.apply_action(s.legal_actions()[0])
    p = s.current_player()
    rng = np.random.RandomState(0)
    r = s.resample_from_infostate(p, rng.uniform)
    assert r.information_state_string(p) == s.information_state_string(p)
    assert r.legal_actions() == s.legal_actions()


def test_openspiel_ismcts_plays_kashgar_legally() -> None:
    import engine_ext

    g = engine_ext.new_game(players=2, seed=5)
    an = OpenSpielISMCTS(iterations=10).analyse(g, seed=1)
    assert an.code in g.legal_codes()
    assert sum(a.visits for a in an.alternatives) >= 9


def test_openspiel_ismcts_on_a_clock_keeps_every_simulation_in_one_tree() -> None:
    import engine_ext

    g = engine_ext.new_game(players=2, seed=5)
    # the spec's clock, as the arena plays it; a second, so that a busy machine still runs more
    # than the 16 simulations below (300 ms gave exactly 16 beside a calibration run on 2 cores)
    bot = make_bot("openspiel:time_ms=1000")
    assert (bot.iterations, bot.time_ms) == (0, 1000)  # type: ignore[attr-defined]
    an = bot.analyse(g, seed=2)
    assert an.code in g.legal_codes()
    # every simulation it reports is in the root's counts, none thrown away with an earlier tree
    # (their first simulation only expands the root, so it visits no child)
    assert an.iterations > 16
    assert sum(a.visits for a in an.alternatives) == an.iterations - 1


def test_a_setting_openspiel_does_not_have_is_an_error() -> None:
    import pytest

    with pytest.raises(ValueError, match="bogus"):
        make_bot("openspiel:bogus=1")


def test_arena_against_openspiel_on_the_toy_game() -> None:
    rep = arena.run_arena(["ismcts:iterations=40,evaluator=vp", "openspiel:iterations=40"], games=4, game="toy")
    assert rep.games == 4 and sum(rep.wins.values()) == 4
