"""`/suggest` answers pinned on recorded positions: the decision and every alternative's visits.

The positions (2, 3 and 4 players; the opening, the midgame, a decision within a turn) are seat
views recorded in `tests/data/suggest_pins.json` with the answers of every level and of an
explicit iteration budget, for a fixed seed. A change that means to keep the search's behaviour
(a refactoring, a faster loop) must keep every answer; a change that means to alter it records
the positions again (`KASHGAR_REPIN=1 pytest tests/test_suggest_pinned.py`) and says why.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from service import create_app

PINS = Path(__file__).parent / "data" / "suggest_pins.json"
SEED = 12345
BUDGET = {"iterations": 150}  # the explicit budget, beside every level's own


def _walk(players: int, seed: int, decisions: int, mid_turn: bool) -> dict[str, Any]:
    """The view of the seat to move after `decisions` random decisions (then, with `mid_turn`,
    on to the first decision within a turn)."""
    game = engine_ext.new_game(players, seed)
    rng = random.Random(seed)
    for _ in range(decisions):
        game.apply(rng.choice(game.legal_codes()))
    while mid_turn and game.turn_player == game.current_player and game.to_json().get("pending") is None:
        game.apply(rng.choice(game.legal_codes()))
    assert not game.is_terminal
    return game.view(game.current_player)


def _positions() -> dict[str, dict[str, Any]]:
    return {
        "2p-opening": _walk(2, 101, 0, False),
        "2p-midgame": _walk(2, 102, 40, False),
        "2p-mid-turn": _walk(2, 103, 20, True),
        "3p-midgame": _walk(3, 104, 45, False),
        "3p-mid-turn": _walk(3, 105, 12, True),
        "4p-opening": _walk(4, 106, 0, False),
        "4p-midgame": _walk(4, 107, 60, False),
    }


def _answer(client: Any, state: dict[str, Any], ask: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/suggest", json={"state": state, "seed": SEED, "mode": "sync", **ask})
    assert r.status_code == 200, r.get_json()
    a = r.get_json()
    return {"decision": a["decision_text"],
            "visits": {alt["decision_text"]: alt["visits"] for alt in a["alternatives"]}}


def _asks(client: Any) -> dict[str, dict[str, Any]]:
    # the levels answered now (a level beyond the synchronous limits is answered as a job)
    levels = [lv["name"] for lv in client.get("/levels").get_json()["levels"] if not lv["asynchronous"]]
    asks: dict[str, dict[str, Any]] = {f"level:{name}": {"level": name} for name in levels}
    asks["iterations:150"] = dict(BUDGET)
    return asks


@pytest.fixture(scope="module")
def client() -> Any:
    return create_app({"TESTING": True}).test_client()


def _record(client: Any) -> None:
    positions = _positions()
    doc = {"seed": SEED, "positions": {}}
    for name, state in positions.items():
        doc["positions"][name] = {"state": state, "answers": {
            ask: _answer(client, state, body) for ask, body in _asks(client).items()}}
    PINS.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if os.environ.get("KASHGAR_REPIN"):
    _record(create_app({"TESTING": True}).test_client())

_DOC = json.loads(PINS.read_text())
_CASES = [(pos, ask) for pos, rec in sorted(_DOC["positions"].items()) for ask in sorted(rec["answers"])]


@pytest.mark.parametrize(("position", "ask"), _CASES, ids=[f"{p}-{a}" for p, a in _CASES])
def test_suggest_keeps_its_pinned_answer(client: Any, position: str, ask: str) -> None:
    rec = _DOC["positions"][position]
    asks = _asks(client)
    assert ask in asks, f"{ask} is no longer offered"
    assert _answer(client, rec["state"], asks[ask]) == rec["answers"][ask]


def test_every_level_is_pinned(client: Any) -> None:
    """A new level gets pinned answers too (record again)."""
    pinned = {ask for rec in _DOC["positions"].values() for ask in rec["answers"]}
    assert set(_asks(client)) <= pinned
