"""The tempo term of the leaf evaluation: a leaf after some seats' turns of a round values the
seats still to play that round `tempo` more (ISMCTSConfig.tempo), in both search builds."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from bots import matched_search, win_prob
from bots.ismcts_bot import ISMCTSConfig, make_evaluator, new_search
from bots.levels import get_level, make_bot
from engine_ext.core import S_START


def _at_place(engine: Any, players: int, place: int, seed: int) -> Any:
    """A state of a fresh deal at the start of the turn of the seat `place` after the start player."""
    rng = random.Random(seed)
    st = engine.new_game(players=players, seed=seed).state
    start = st.export()[S_START]
    while (st.turn_player() - start) % players != place:
        codes = st.legal_codes()
        st.apply(codes[rng.randrange(len(codes))])
    return st


def _search(st: Any, tempo: float) -> tuple[Any, Any]:
    mod, st = matched_search(st)
    ev = make_evaluator("tuned", st, 1.0)
    s = new_search(mod, ISMCTSConfig(evaluator="tuned", tempo=tempo), ev, 1, 16)
    s.set_weights(ev.engine_weights(), ev.rollout_weights())
    return s, st


def _softmax(vals: list[float]) -> list[float]:
    m = max(vals)
    ex = [math.exp(v - m) for v in vals]
    return [e / sum(ex) for e in ex]


@pytest.mark.parametrize("players,place", [(2, 1), (3, 1), (3, 2), (4, 1), (4, 3)])
def test_seats_still_to_play_the_round_are_valued_tempo_more(engine: Any, players: int, place: int) -> None:
    st = _at_place(engine, players, place, seed=7 + place)
    s, st = _search(st, 0.6)
    start = st.export()[S_START]
    later = [(p - start) % players >= place for p in range(players)]
    assert any(later) and not all(later)
    vals = [s.scale * (s.heuristic(st, p) + (0.6 if later[p] else 0.0)) for p in range(players)]
    got = s.leaf_rewards(st)
    assert got == pytest.approx(_softmax(vals), abs=1e-12)
    plain, _ = _search(st, 0.0)
    before = plain.leaf_rewards(st)
    for p in range(players):  # the seats still to play gain, the others lose
        assert (got[p] > before[p]) == later[p]


@pytest.mark.parametrize("players", [2, 4])
def test_tempo_changes_nothing_at_the_start_of_a_round(engine: Any, players: int) -> None:
    st = _at_place(engine, players, 0, seed=3)
    with_tempo, st = _search(st, 0.8)
    plain, _ = _search(st, 0.0)
    assert with_tempo.leaf_rewards(st) == pytest.approx(plain.leaf_rewards(st), abs=1e-12)


def test_tempo_is_a_setting_of_specs_and_levels() -> None:
    bot = make_bot("level:master:tempo=0.25")
    assert bot.config.tempo == 0.25  # type: ignore[attr-defined]
    assert get_level("master").config.tempo == 0.0
    with pytest.raises(ValueError, match="tempo"):
        make_bot("ismcts:tempo=abc")


def test_a_fit_saved_before_a_setting_existed_holds_for_it_at_its_default() -> None:
    """A preset stored without a setting added since is the same search with that setting at its
    default; with another value, the fit does not hold."""
    master = get_level("master")
    stored = {k: v for k, v in win_prob.preset_of(master).items() if k != "tempo"}
    assert win_prob.same_preset(stored, master)
    assert not win_prob.same_preset({**stored, "tempo": 0.3}, master)
    assert not win_prob.same_preset({**stored, "iterations": 1}, master)
    assert not win_prob.same_preset(None, master)


def test_tempo_changes_a_whole_search_s_answer(engine: Any) -> None:
    """Through `run` (not only the leaf): the start player, searched with tempo, reads its
    alternatives lower (after its turn, the other seat's turn of the round is still to come)."""
    st = _at_place(engine, 2, 0, seed=5)
    means = {}
    for tempo in (0.0, 2.0):
        bot = make_bot(f"ismcts:iterations=200,evaluator=tuned,macro=1,rollout=turn,tempo={tempo}")
        s, n, _ = bot.search(st, iterations=200, seed=9)  # type: ignore[attr-defined]
        assert n == 200
        stats = s.root_stats()  # (decision, visits, reward sum, VP sum)
        means[tempo] = sum(r for _c, _v, r, _vp in stats) / sum(v for _c, v, _r, _vp in stats)
    assert means[2.0] < means[0.0] - 0.05


def test_tempo_is_refused_where_it_would_do_nothing() -> None:
    """Only the engine's fast leaf applies tempo: with the VP evaluator (or on a state that is not
    Kashgar's) a setting other than 0 is a ValueError, not a search that silently ignores it."""
    from bots.ismcts_bot import ISMCTSBot
    from lab.toygame import ToyState

    with pytest.raises(ValueError, match="tempo"):
        ISMCTSConfig(evaluator="vp", tempo=1.0)
    with pytest.raises(ValueError, match="tempo"):
        make_bot("ismcts:evaluator=vp,tempo=0.5")
    assert ISMCTSConfig(evaluator="vp", tempo=0.0).tempo == 0.0
    with pytest.raises(ValueError, match="tempo=1.0 does nothing here"):
        ISMCTSBot(ISMCTSConfig(tempo=1.0)).search(ToyState(2, seed=3), iterations=10)
    _s, n, _ = ISMCTSBot(ISMCTSConfig(tempo=0.0)).search(ToyState(2, seed=3), iterations=10)
    assert n == 10
