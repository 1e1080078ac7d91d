"""No peeking: for a fixed seed, a search from a player's information gives the same answer
whatever the true hidden deck order is (and the same as from that player's view)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from bots import build_for, suggest
from bots.ismcts_bot import ISMCTSBot, ISMCTSConfig, make_value, new_search, search_game
from lab.determinized import DeterminizedBot, OneWorld


def _midgame_doc(engine: Any, players: int, seed: int, moves: int, between_turns: bool = True) -> dict[str, Any]:
    g = engine.new_game(players=players, seed=seed)
    rng = random.Random(seed)
    k = 0
    while k < moves or (g.state.pending() != 0) == between_turns:  # between turns, or mid-turn
        codes = g.legal_codes()
        g.state.apply(codes[rng.randrange(len(codes))])
        k += 1
    return g.to_json()


def _reshuffled(doc: dict[str, Any], seed: int) -> dict[str, Any]:
    """Another true state that the player to move cannot tell from `doc`: every hidden thing
    sampled again (the order of every deck, Special included, the random stream of future
    reshuffles, what the other seats have seen), as the engine's determinization does."""
    import engine_ext

    g = engine_ext.from_json(doc)
    other = dict(g.determinize(g.current_player, seed).to_json())
    assert other["rng"] != doc["rng"]
    for deck in ("standard", "special", "contract"):
        assert other["decks"][deck] != doc["decks"][deck], deck
    assert engine_ext.from_json(other).to_json(observer=g.current_player) == g.to_json(observer=g.current_player)
    return other


@pytest.mark.parametrize("players", [2, 3])
@pytest.mark.parametrize("settings", [{}, {"macro": 1, "rollout": "turn"}, {"macro": 2, "rollout": "turn"}])
@pytest.mark.parametrize("between_turns", [True, False])
def test_same_answer_whatever_the_hidden_order(
    engine: Any, players: int, settings: dict[str, Any], between_turns: bool
) -> None:
    doc = _midgame_doc(engine, players, 5 + players, 24 if between_turns else 27, between_turns)
    other = _reshuffled(doc, 1)
    answers = []
    for d in (doc, other):
        g = engine.from_json(d)
        an = ISMCTSBot(iterations=150, **settings).analyse(g, seed=9)
        answers.append((an.code, [(a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives]))
    assert answers[0] == answers[1]


def test_view_and_full_state_give_the_same_answer(engine: Any) -> None:
    doc = _midgame_doc(engine, 2, 3, 30)
    g = engine.from_json(doc)
    me = g.current_player
    view = g.to_json(observer=me)
    assert "rng" not in view or view.get("observer") == me
    a = ISMCTSBot(iterations=120).analyse(g, seed=4)
    b = ISMCTSBot(iterations=120).analyse(engine.from_json(view), seed=4)
    assert a.code == b.code
    assert [(x.code, x.visits) for x in a.alternatives] == [(x.code, x.visits) for x in b.alternatives]


def test_suggest_does_not_peek() -> None:
    import engine_ext

    doc = _midgame_doc(engine_ext.get_engine(), 2, 17, 20)
    a = suggest.analyse_state(doc, iterations=100, seed=2)
    b = suggest.analyse_state(_reshuffled(doc, 3), iterations=100, seed=2)
    assert a["decision_text"] == b["decision_text"]
    assert a["alternatives"] == b["alternatives"]


def _det_stats(engine: Any, doc: dict[str, Any], **kw: Any) -> list[tuple[int, int, float]]:
    an = DeterminizedBot(iterations=120, **kw).analyse(engine.from_json(doc), seed=3)
    return [(a.code, a.visits, round(a.mean_reward, 9)) for a in an.alternatives]


def test_the_baseline_does_not_peek_and_its_oracle_does(engine: Any) -> None:
    """`det` samples its worlds from the player's information; `det:oracle=1` (a diagnostic of what
    the hidden order is worth) searches the state as given, so a reshuffled deck changes its answer."""
    doc = _midgame_doc(engine, 2, 11, 24)
    other = _reshuffled(doc, 2)
    assert _det_stats(engine, doc, worlds=3) == _det_stats(engine, other, worlds=3)
    assert _det_stats(engine, doc, oracle=1) != _det_stats(engine, other, oracle=1)
    # the oracle's one world is the state itself: the same as a search of it whose every iteration
    # starts from that state
    st = engine.from_json(doc).state
    cfg = ISMCTSConfig(iterations=120)
    ev = make_value(cfg.evaluator, st, cfg.scale)
    s = new_search(build_for(st), cfg, search_game(ev, st, cfg, OneWorld), random.Random(3).getrandbits(31), 120)
    s.run(st, st.current_player(), 120, 0.0, None, None)
    want = sorted((c, v, round(r / v, 9)) for c, v, r, _ in s.root_stats() if v)
    assert sorted(x for x in _det_stats(engine, doc, oracle=1) if x[1]) == want
    with pytest.raises(ValueError, match="oracle"):
        _det_stats(engine, doc, oracle=2)
