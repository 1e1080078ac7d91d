"""Game records: a game saved as JSON replays to the same final state; one that does not replay
names the move."""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path

import pytest

import engine_ext
from engine_ext import record as R
from engine_ext.carddata import load_file, load_text


def _moves(players: int, seed: int, n: int = 10_000) -> tuple[list[str], engine_ext.Game]:
    g = engine_ext.new_game(players=players, seed=seed, variant="all")
    rng = random.Random(seed)
    moves = []
    while not g.is_terminal and len(moves) < n:
        d = rng.choice(g.legal())
        moves.append(str(d))
        g.apply(d)
    return moves, g


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_record_round_trips_through_a_file_to_the_same_final_state(players: int, tmp_path: Path) -> None:
    moves, final = _moves(players, 40 + players)
    rec = R.record_from_moves(moves, players=players, seed=40 + players, variant="all",
                              levels=[None] + ["casual"] * (players - 1))
    assert rec["result"] == {"vp": final.scores(), "winner": final.winner(), "is_terminal": True}
    assert rec["seats"][0]["level"] is None and rec["seats"][1]["level"] == "casual"
    assert all(m["description"] for m in rec["moves"]) and any(m["events"] for m in rec["moves"])
    path = tmp_path / "game.json"
    R.save(rec, path)
    again = R.replay(R.load(path))
    assert again.to_json() == final.to_json()


def test_a_record_from_an_initial_state_replays() -> None:
    start = engine_ext.new_game(players=2, seed=3)
    for _ in range(7):
        start.apply(start.legal()[0])
    moves = [str(start.clone().legal()[-1])]
    rec = R.record_from_moves(moves, initial_state=start.to_json())
    assert rec["seed"] is None and rec["initial_state"] is not None
    after = start.clone()
    after.apply(moves[0])
    assert R.replay(rec).to_json() == after.to_json()


def test_a_tampered_record_names_the_move_and_the_decision() -> None:
    moves, _ = _moves(2, 9, n=30)
    rec = R.record_from_moves(moves, seed=9, variant="all")
    bad = json.loads(json.dumps(rec))
    legal_here = {str(d) for d in R.replay({**bad, "moves": bad["moves"][:11], "result": {}}).legal()}
    wrong = next(t for t in ("c0:a", "c1:a", "c2:a", "c0:b", "skip", "fulfil 1") if t not in legal_here)
    bad["moves"][11]["decision"] = wrong
    with pytest.raises(R.RecordError) as err:
        R.replay(bad)
    assert err.value.move == 12 and f"move 12 (seat {bad['moves'][11]['seat'] + 1}: `{wrong}`)" in err.value.message
    assert "not legal" in err.value.message
    # a seat that was not to move
    bad = json.loads(json.dumps(rec))
    bad["moves"][0]["seat"] = 1
    with pytest.raises(R.RecordError, match=r"move 1 \(seat 2: .*seat 1 is to move, not seat 2"):
        R.replay(bad)
    # the result edited
    bad = json.loads(json.dumps(rec))
    bad["result"]["vp"] = [99, 0]
    with pytest.raises(R.RecordError, match="not as recorded"):
        R.replay(bad)


def test_a_record_played_with_other_card_data_says_so() -> None:
    moves, _ = _moves(2, 5)
    rec = R.record_from_moves(moves, seed=5, variant="all")
    text = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
    changed = load_text(text.replace('caravan = [["draw standard 2"], ["turn_self"]]',
                                     'caravan = [["draw standard 3"], ["turn_self"]]'))
    with pytest.raises(R.RecordError, match="the card data differs from the record's") as err:
        R.replay(rec, changed)
    assert err.value.move >= 1 and f"move {err.value.move} (seat " in err.value.message


def test_a_record_names_its_card_file_by_name_and_sha256_never_by_path(tmp_path: Path) -> None:
    text = resources.files("engine_ext").joinpath("data/cards.toml").read_text(encoding="utf-8")
    path = tmp_path / "my-cards.toml"
    path.write_text(text)
    rec = R.record_from_moves(_moves(2, 4, n=3)[0], seed=4, variant="all", data=load_file(str(path)))
    assert rec["cards"] == {"name": "my-cards.toml", "sha256": load_text(text).sha256}
    assert str(tmp_path) not in json.dumps(rec)
    assert R.record_from_moves([], seed=4)["cards"]["name"] == "cards.toml"  # the package's


def test_what_is_not_a_record_is_refused_by_field(tmp_path: Path) -> None:
    with pytest.raises(R.RecordError, match="not a game record at /players"):
        R.check({"schema": R.SCHEMA_ID, "players": 9, "seed": 1, "moves": []})
    with pytest.raises(R.RecordError, match="at /moves/0") as err:
        R.check({"schema": R.SCHEMA_ID, "players": 2, "seed": 1, "moves": [{"seat": 0}]})
    assert err.value.move == 1
    path = tmp_path / "x.json"
    path.write_text("{nope")
    with pytest.raises(R.RecordError, match="is not JSON"):
        R.load(path)


def test_a_record_s_shuffles_are_made_again_when_it_replays() -> None:
    """A move's `shuffle` (what no seat knew, shuffled afresh before it, as the web table does) is
    made again by the replay: with it the record replays; without it the draws after it differ."""
    g = engine_ext.new_game(players=2, seed=4)
    moves: list[str] = []
    shuffles: list[int | None] = []
    while not g.is_terminal and len(moves) < 60:
        seed = 1000 + len(moves) if g.current_player == 0 else None
        if seed is not None:
            g.shuffle_unknown(seed)
        d = g.legal()[0]
        g.apply(d)
        moves.append(str(d))
        shuffles.append(seed)
    rec = R.record_from_moves(moves, players=2, seed=4, shuffles=shuffles)
    assert [m.get("shuffle") for m in rec["moves"]] == shuffles
    assert R.replay(rec).to_json() == g.to_json()
    R.check(rec)
    stripped = {**rec, "moves": [{k: v for k, v in m.items() if k != "shuffle"} for m in rec["moves"]]}
    with pytest.raises(R.RecordError, match="events differ|not as recorded|not legal|is to move"):
        R.replay(stripped)


@pytest.mark.parametrize("players", [2, 3])
def test_a_step_keeps_the_game_before_its_move_and_makes_what_is_asked_from_it(players: int) -> None:
    """A replayed step carries a copy of the game before its move: its full document, a seat's view
    and the count of legal decisions are those of that game, as a dump loaded back gives them."""
    moves, _ = _moves(players, 5, 40)
    steps = list(R.Replay(R.record_from_moves(moves, players=players, seed=5, variant="all")))
    assert [s.number for s in steps] == list(range(1, len(moves) + 1))
    for step in steps:
        loaded = engine_ext.from_json(step.before)
        seat = int(step.move["seat"])
        assert loaded.current_player == seat and step.start is not step.game
        assert step.view() == step.view(seat) == loaded.to_json(observer=seat)
        assert step.legal_count == len(loaded.legal())
    assert steps[0].before != steps[-1].before  # each step its own game, not the one that moved on
