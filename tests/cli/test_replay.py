"""`kashgar play --record FILE` writes a game record; `kashgar replay FILE` steps through it, and
names the move of a record that does not replay."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import engine_ext
from engine_ext import record as R
from kashgar_cli import main, play, replay


def _record(tmp_path: Path, **kw: object) -> Path:
    path = tmp_path / "game.json"
    base: dict[str, object] = {"players": 2, "seat": 0, "level": "novice", "seed": 21, "url": None, "auto": True,
                               "max_decisions": 0, "record": str(path)}
    base.update(kw)
    out = io.StringIO()
    assert play.play(play.argparse.Namespace(**base), play.LocalTable(), input, out) == 0
    assert f"written to {path}" in out.getvalue()
    return path


def test_a_played_game_is_recorded_and_replays_to_its_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path)
    rec = json.loads(path.read_text())
    assert rec["schema"] == R.SCHEMA_ID and rec["seed"] == 21 and rec["players"] == 2
    assert [s["level"] for s in rec["seats"]] == ["random", "novice"]
    assert rec["result"]["is_terminal"] and {m["seat"] for m in rec["moves"]} == {0, 1}
    assert rec["cards"] == {"name": "cards.toml", "sha256": engine_ext.get_engine().data.sha256}  # not its path
    final = R.replay(rec)
    assert final.is_terminal and final.scores() == rec["result"]["vp"]
    assert main.main(["replay", str(path), "--all"]) == 0
    text = capsys.readouterr().out
    # `kashgar play` named the seats "you" and "seat 2" (the JSON's seat 1)
    assert text.startswith(f"2 players (you (random), seat 2 (novice)), seed 21, {len(rec['moves'])} moves")
    assert "   1. seat 2 (novice): Patriarch, caravan " in text and "game over; winner: " in text
    assert "Patriarch" in text and "c0:" not in text.split("[")[0]
    assert "[keep " not in text and "[take " not in text  # a code naming a card by its slug is not shown


def test_replay_waits_for_enter_and_stops_on_q(tmp_path: Path) -> None:
    path = _record(tmp_path)
    answers: Iterator[str] = iter(["", "", "q"])
    out = io.StringIO()
    assert replay.replay(str(path), False, lambda prompt: next(answers), out) == 0
    lines = [line for line in out.getvalue().splitlines() if line[:5].strip().rstrip(".").isdigit()]
    assert len(lines) == 3 and out.getvalue().endswith("stopped\n")


def test_a_record_quit_early_replays_as_far_as_it_went(tmp_path: Path) -> None:
    path = _record(tmp_path, max_decisions=9)
    rec = R.load(path)
    assert len(rec["moves"]) == 9 and rec["result"]["is_terminal"] is False
    game = engine_ext.new_game(players=2, seed=21)
    for m in rec["moves"]:
        game.apply(m["decision"])
    assert R.replay(rec).to_json() == game.to_json()


def test_a_tampered_record_is_one_line_naming_the_move(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _record(tmp_path, max_decisions=12)
    rec = json.loads(path.read_text())
    rec["moves"][4]["decision"] = "fulfil 40"
    path.write_text(json.dumps(rec))
    assert main.main(["replay", str(path), "--all"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("kashgar replay: error: ") and "move 5 (seat " in err and "fulfil 40" in err
    assert "\n" not in err
    path.write_text('{"schema": "kashgar/record@1"}')
    assert main.main(["replay", str(path)]) == 1
    assert "a game record gives its seed or its initial_state" in capsys.readouterr().err  # what it lacks
