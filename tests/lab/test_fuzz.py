"""`lab.fuzz` and `kashgar fuzz`: games are checked as they go, and a failure can be replayed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import lab.fuzz as fuzz
from engine_ext import Engine, Game
from kashgar_cli.main import main
from lab.fuzz import GameSetup, fuzz_game


def test_setups_follow_the_seed_and_cover_the_game() -> None:
    setups = [GameSetup.from_seed(s) for s in range(60)]
    assert setups == [GameSetup.from_seed(s) for s in range(60)]
    assert {s.players for s in setups} == {2, 3, 4}
    assert {s.policy for s in setups} == {"random", "greedy"}
    assert {s.variant for s in setups} == {"all", None}


@pytest.mark.parametrize("seed", [3, 4])
def test_fuzz_games_play_to_the_end_with_every_check(engine: Engine, seed: int) -> None:
    res = fuzz_game(engine, seed)
    assert res.failure is None, res.failure and res.failure.summary()
    assert res.finished and res.decisions > 50
    assert res.checks["round_trip"] == res.decisions + 1
    assert res.checks["reload"] == res.decisions  # a reloaded game goes on writing the same documents
    assert res.checks["bookkeeping"] >= res.decisions // 5
    assert res.checks["view"] >= res.decisions // 5 - 1


def test_a_broken_bookkeeping_check_is_reported_where_it_happened(monkeypatch: pytest.MonkeyPatch,
                                                                  engine: Engine) -> None:
    def planted(g: Game) -> list[str]:
        return ["planted"] if g.to_json()["turn"] >= 4 else []

    monkeypatch.setattr(fuzz, "problems", planted)
    res = fuzz_game(engine, 5, check_every=1)
    f = res.failure
    assert f is not None and f.check == "bookkeeping" and f.message == "planted"
    assert f.step == res.decisions and f.before is not None and f.before["turn"] <= 4
    # the failure replays: the state before it, then its decision, reaches turn 4
    g = engine.from_json(f.before)
    g.apply(f.decision)
    assert g.to_json()["turn"] == 4


class LossyEngine(Engine):
    """An engine whose JSON reader loses a gold piece from turn 3 on: a round-trip bug."""

    def from_json(self, doc: Any) -> Game:
        if isinstance(doc, dict) and doc.get("turn", 0) >= 3 and doc["seats"][0]["resources"]["gold"] > 0:
            doc = json.loads(json.dumps(doc))
            doc["seats"][0]["resources"]["gold"] -= 1
        return super().from_json(doc)


def test_a_round_trip_bug_is_found(engine: Engine) -> None:
    lossy = LossyEngine(engine.core, engine.data)
    res = fuzz_game(lossy, 6)
    f = res.failure
    assert f is not None and f.check == "round_trip"
    assert f.message == "the state document reads back differently at ['seats']"


def test_both_builds_play_a_fuzz_game_alike(compiled_engine: Engine, interpreted_engine: Engine) -> None:
    res = fuzz_game(compiled_engine, 8, twin=interpreted_engine)
    assert res.failure is None and res.finished
    assert res.checks["builds"] == res.decisions + 1


class OtherDeal(Engine):
    """An engine that deals another game for the same seed: a twin that cannot stay alike."""

    def new_game(self, players: int = 2, seed: int = 0, variant: Any = None, turn_limit: int = 400) -> Game:
        return super().new_game(players, seed + 1, variant, turn_limit)


def test_a_twin_that_differs_is_found(compiled_engine: Engine) -> None:
    twin = OtherDeal(compiled_engine.core, compiled_engine.data)
    res = fuzz_game(compiled_engine, 8, twin=twin)
    f = res.failure
    assert f is not None and f.check == "builds" and f.step == 0
    assert f.message == "the compiled and the interpreted engine reached different states"


def test_the_command_passes_clean_games_and_writes_failures(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "-n", "2", "--seed", "7", "-j", "1", "--no-progress", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 2 and summary["failed"] == 0 and summary["seeds"] == [7, 8]
    assert summary["decisions"] > 100 and summary["checks"]["bookkeeping"] > 20
    assert main(["fuzz", "-n", "1", "--seed", "9", "-j", "1", "--no-progress", "--json", "--both-builds"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["failed"] == 0 and summary["checks"]["builds"] == summary["decisions"] + 1

    monkeypatch.setattr(fuzz, "problems", lambda g: ["planted"] if g.to_json()["turn"] >= 2 else [])
    out = tmp_path / "failures"
    assert main(["fuzz", "-n", "2", "--seed", "7", "-j", "1", "--no-progress", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "FAILED seed 7 (" in text and "bookkeeping: planted" in text and "2 failed" in text
    saved = json.loads((out / "fuzz-7.json").read_text())
    assert saved["setup"]["seed"] == 7 and saved["check"] == "bookkeeping" and saved["before"]["schema"]

    # a failure in every game: stop after --max-failures of them
    assert main(["fuzz", "-n", "6", "--seed", "7", "-j", "1", "--no-progress", "--json", "--max-failures", "2"]) == 1
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["games"] == 2 and summary["failed"] == 2 and "stopped" in summary


def test_a_chooser_plays_every_decision(engine: Engine) -> None:
    seen: list[tuple[int, int]] = []

    def last_legal(g: Game, seed: int) -> int:
        seen.append((g.current_player, seed))
        return int(g.legal_codes()[-1])

    res = fuzz_game(engine, 11, chooser=last_legal, policy="last")
    assert res.failure is None and res.finished and res.setup.policy == "last"
    assert len(seen) == res.decisions and len({p for p, _ in seen}) == res.setup.players
    assert len({s for _, s in seen}) == res.decisions  # each decision its own seed
    again: list[tuple[int, int]] = []
    fuzz_game(engine, 11, chooser=lambda g, s: again.append((g.current_player, s)) or int(g.legal_codes()[-1]))
    assert again == seen  # the same game again: reproducible from the seed


def test_an_illegal_choice_is_a_failure(engine: Engine) -> None:
    res = fuzz_game(engine, 12, chooser=lambda g, s: -1 if g.to_json()["turn"] >= 3 else int(g.legal_codes()[0]))
    f = res.failure
    assert f is not None and f.check == "policy" and f.before is not None and f.before["turn"] == 3
    assert f.decision == "" and engine.from_json(f.before).to_json() == f.before  # the state it failed on
    assert f.message == "the policy chose -1, not a legal decision"


def test_the_command_plays_with_a_bot(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "-n", "2", "--seed", "3", "-j", "1", "--no-progress", "--json",
                 "--bot", "ismcts:iterations=20"]) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["failed"] == 0 and summary["decisions"] > 50
    assert main(["fuzz", "-n", "1", "--no-progress", "--bot", "ismcts:bogus=1"]) == 2
    assert "bogus" in capsys.readouterr().out


def test_the_command_rejects_a_bad_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fuzz", "-n", "0", "--no-progress"]) == 2
    assert "--games" in capsys.readouterr().out
    assert main(["fuzz", "-n", "1", "--max-failures", "-1", "--no-progress"]) == 2
    assert "--max-failures" in capsys.readouterr().out
