"""`kashgar rating RECORD...` on real record files (`kashgar play --record`, and records of random
play with the seats' levels named): the rating as POST /rating gives it, and the files it cannot
use named."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from engine_ext import record as records
from kashgar_cli import main, play
from service import create_app
from tests.builders import random_record


def played(tmp_path: Path, seed: int, level: str) -> Path:
    """A game `kashgar play --auto --record` played (the person's seat played at random, recorded as
    level `random`)."""
    path = tmp_path / f"play-{seed}.json"
    args = {"players": 2, "seat": 0, "level": level, "seed": seed, "url": None, "auto": True,
            "max_decisions": 0, "record": str(path)}
    assert play.play(play.argparse.Namespace(**args), play.LocalTable(), input, io.StringIO()) == 0
    return path


def person_record(tmp_path: Path, seed: int, levels: list[str | None]) -> Path:
    rec = random_record(seed=seed, moves=10_000, rng_seed=seed, players=len(levels))
    rec["seats"] = [{"seat": p, "level": lv} for p, lv in enumerate(levels)]
    path = tmp_path / f"game-{seed}.json"
    records.save(rec, path)
    return path


def served(recs: list[dict[str, Any]]) -> dict[str, Any]:
    resp = create_app({"TESTING": True, "log_level": "WARNING"}).test_client().post("/rating", json={"records": recs})
    assert resp.status_code == 200, resp.get_json()
    return dict(resp.get_json())


def test_records_of_the_person_are_rated_as_the_service_rates_them(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    paths = [person_record(tmp_path, 11, [None, "novice"]), person_record(tmp_path, 12, ["casual", None, "club"]),
             person_record(tmp_path, 13, [None, "novice", "beginner", "expert"])]
    assert main.main(["rating", *map(str, paths), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == served([json.loads(p.read_text()) for p in paths])
    assert answer["games"] == 3
    assert main.main(["rating", *map(str, paths)]) == 0
    low, high = answer["interval"]
    text = capsys.readouterr().out
    assert text.startswith(f"rating {answer['elo']} [{low}, {high}] after 3 games (95% interval; prior 516 +- 350")
    assert f"nearest level: {answer['nearest_level']} (" in text


def test_a_record_of_a_bot_at_an_elo_is_rated(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A seat `elo:N` (the web table's bot at Elo N): an opponent of Elo N, as POST /rating has it."""
    paths = [person_record(tmp_path, 14, [None, "elo:640"]), person_record(tmp_path, 15, ["elo:120.5", None])]
    assert main.main(["rating", *map(str, paths), "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer == served([json.loads(p.read_text()) for p in paths]) and answer["games"] == 2
    bad = person_record(tmp_path, 16, [None, "elo:strong"])
    assert main.main(["rating", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: 'elo:strong': elo:N takes a finite number" in err and "(at /seats/1/level)" in err


def test_kashgar_play_records_with_the_persons_seat_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`kashgar play --auto` records the person's seat as level `random`, which has no Elo: `--seat 0`
    names it as the person's."""
    paths = [str(played(tmp_path, 21, "novice")), str(played(tmp_path, 22, "beginner"))]
    assert main.main(["rating", *paths]) == 1
    err = capsys.readouterr().err
    assert f"kashgar rating: error: {paths[0]}: " in err and "/seats" in err
    assert main.main(["rating", "--seat", "0", "--json", *paths]) == 0
    answer = json.loads(capsys.readouterr().out)
    recs = [json.loads(Path(p).read_text()) for p in paths]
    for rec in recs:
        rec["seats"][0]["level"] = None
    assert answer == served(recs) and answer["games"] == 2
    assert main.main(["rating", "--seat", "2", *paths]) == 2
    assert "--seat 2: the game has seat indexes 0 to 1" in capsys.readouterr().err


def test_a_record_that_does_not_replay_or_is_not_over_is_named(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    good = person_record(tmp_path, 31, [None, "club"])
    rec = json.loads(good.read_text())
    rec["moves"][2]["decision"] = "c9:a"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(rec))
    assert main.main(["rating", str(good), str(broken)]) == 1
    assert f"{broken}: move 3" in capsys.readouterr().err
    short = random_record(seed=31, moves=5, rng_seed=31)
    short["seats"] = [{"seat": 0, "level": None}, {"seat": 1, "level": "club"}]
    unfinished = tmp_path / "unfinished.json"
    records.save(short, unfinished)
    assert main.main(["rating", str(unfinished)]) == 1
    assert "not over (at /result/is_terminal)" in capsys.readouterr().err
    assert main.main(["rating", str(tmp_path / "none.json")]) == 1
    assert "cannot read" in capsys.readouterr().err
