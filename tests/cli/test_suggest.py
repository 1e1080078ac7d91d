"""`kashgar suggest FILE`: a state file in, the answer of POST /suggest out (the same document,
the same search)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine_ext
from kashgar_cli import main
from service import create_app

VOLATILE = {"elapsed_ms", "request_id", "mode", "workers", "parts"}


def test_a_state_file_gets_the_answer_the_service_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    view = engine_ext.new_game(players=3, seed=4).to_json(observer=1)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(view))
    assert main.main(["suggest", str(path), "--iterations", "60", "--seed", "9", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    r = create_app({"TESTING": True, "log_level": "WARNING"}).test_client().post(
        "/suggest", json={"state": view, "iterations": 60, "seed": 9, "mode": "sync"})
    assert r.status_code == 200, r.get_json()
    http = r.get_json()
    assert {k: v for k, v in cli.items() if k not in VOLATILE and k != "level"} == {
        k: v for k, v in http.items() if k not in VOLATILE and k != "level" and k in cli}
    # the text form names the decision and every alternative
    assert main.main(["suggest", str(path), "--iterations", "60", "--seed", "9"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(cli["decision_text"]) and all(a["decision_text"] in text for a in cli["alternatives"])


def test_bad_files_are_clear_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"players": 2}')
    assert main.main(["suggest", str(bad)]) == 2
    assert "/schema" in capsys.readouterr().err
    bad.write_text("not json")
    assert main.main(["suggest", str(bad)]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert main.main(["suggest", str(tmp_path / "missing.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    for text in ("1" * 5000, "[" * 100_000 + "]" * 100_000):  # a ValueError and a RecursionError
        bad.write_text(text)
        assert main.main(["suggest", str(bad)]) == 2
        assert "not JSON" in capsys.readouterr().err


def test_an_elo_gets_the_answer_the_service_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    view = engine_ext.new_game(players=2, seed=6).to_json(observer=0)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(view))
    client = create_app({"TESTING": True, "log_level": "WARNING"}).test_client()
    drawn = set()
    for seed in range(6):  # the level drawn at 530 is one of the two around it, as the service draws it
        assert main.main(["suggest", str(path), "--elo", "530", "--seed", str(seed), "--json"]) == 0
        cli = json.loads(capsys.readouterr().out)
        http = client.post("/suggest", json={"state": view, "elo": 530, "seed": seed}).get_json()
        assert cli["elo"] == http["elo"] == 530 and cli["level"] == http["level"]
        assert cli["decision_text"] == http["decision_text"]
        drawn.add(cli["level"])
    assert len(drawn) == 2
    for extra, said in ((["--elo", "99999"], "--elo"), (["--elo", "530", "--level", "club"], "not both"),
                        (["--elo", "530", "--iterations", "50"], "budget")):
        assert main.main(["suggest", str(path), *extra]) == 2
        assert said in capsys.readouterr().err
