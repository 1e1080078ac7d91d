"""`kashgar review RECORD.json`: a game review in this process or on a service (`--url`), the same
figures either way; a table in words, JSON, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from engine_ext import record as records
from engine_ext.decisions import Decision
from kashgar_cli import main
from tests.cli_helpers import one_line_error
from tests.service_helpers import serve_app

LEVEL = "advanced"


@pytest.fixture(scope="module")
def record_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bots.levels import make_bot

    bots = [make_bot("club"), make_bot("novice")]
    game = engine_ext.new_game(players=2, seed=31)
    moves: list[str] = []
    while not game.is_terminal and len(moves) < 30:
        an = bots[game.current_player].analyse(game.state, seed=len(moves))
        text = str(Decision.from_code(an.code, game.state, game.engine.data))
        game.apply(text)
        moves.append(text)
    path = tmp_path_factory.mktemp("review") / "game.json"
    records.save(records.record_from_moves(moves, players=2, seed=31), path)
    return path


def _json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, Any]:
    assert main.main(argv) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_the_review_here_and_on_a_service_give_the_same_figures(record_file: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    here = _json(capsys, ["review", str(record_file), "--level", LEVEL, "--json"])
    with serve_app() as url:
        there = _json(capsys, ["review", str(record_file), "--level", LEVEL, "--json", "--url", url])
    there.pop("elapsed_ms")
    assert here == there
    assert here["reviewed"] > 10 and {s["seat"] for s in here["seats"]} == {0, 1}


def test_the_table_names_the_seats_and_the_lost_chances_in_words(record_file: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["review", str(record_file), "--level", LEVEL, "--seats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Review at {LEVEL}: ")
    assert "accuracy" in out and "mean loss" in out
    review = _json(capsys, ["review", str(record_file), "--level", LEVEL, "--seats", "1", "--json"])
    assert [s["seat"] for s in review["seats"]] == [1]
    for d in review["decisions"]:
        if d["class"]:
            assert f"move {d['move']:>3}, seat 2" in out and d["played_words"] in out  # the JSON's seat 1


@pytest.mark.parametrize(("content", "says"), [
    ("not json", "is not JSON"),
    (json.dumps({"schema": "kashgar/record@1", "players": 2, "seed": 1,
                 "moves": [{"seat": 0, "decision": "fulfil 9"}]}), "move 1"),
])
def test_a_bad_record_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, says: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main.main(["review", str(path), "--level", LEVEL]) == 2
    assert says in one_line_error(capsys)


def test_a_missing_file_and_an_unknown_level_are_one_line(record_file: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["review", "/nonexistent/game.json"]) == 2
    assert "cannot read" in one_line_error(capsys)
    assert main.main(["review", str(record_file), "--level", "nobody"]) == 2
    assert "unknown level 'nobody'" in one_line_error(capsys)
