"""`kashgar calibrate` and its calibration file (kashgar_cli/calibrate.py): malformed files, runs
writing one file at once, failed writes and read-only files. No game is played here: the fits are
stand-ins."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bots import win_prob
from kashgar_cli import calibrate as cli_calibrate
from kashgar_cli.main import main
from lab import calibrate
from tests.cli_helpers import one_line_error


def entry(tag: float) -> dict[str, Any]:
    """A stand-in fit (only its weights tell it apart)."""
    return {"weights": [tag, 1.0, 0.0, 0.0], "model": win_prob.MODEL}


def no_games(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kw: Any) -> Any:
        raise AssertionError("a game was played")

    monkeypatch.setattr(calibrate, "collect", refuse)


MALFORMED = {
    "levels a list": ('{"levels": []}', "levels is not a JSON object"),
    "level a list": ('{"levels": {"novice": []}}', "levels.novice is not a JSON object"),
    "entry a list": ('{"levels": {"novice": {"2": [0, 1, 0, 0]}}}', "levels.novice.2 is not a JSON object"),
    "levels a number": ('{"levels": 3}', "levels is not a JSON object"),
    "a list": ("[1, 2]", "not a calibration file (a JSON object)"),
    "truncated": ('{"levels": {"novice": ', "cannot read"),
    "nested too deep": ('{"levels": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep"),
}


@pytest.mark.parametrize(("text", "why"), MALFORMED.values(), ids=MALFORMED.keys())
def test_a_malformed_file_is_a_one_line_error_naming_it_before_any_game(
        text: str, why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """`{"levels": []}` was an AttributeError traceback, with --table at once and when writing
    only after every game was played."""
    no_games(monkeypatch)
    out = tmp_path / "cal.json"
    out.write_text(text)
    for argv in (["calibrate", "--table", "--out", str(out)],
                 ["calibrate", "--levels", "novice", "--players", "2", "-n", "4", "-j", "1", "--out", str(out)]):
        assert main(argv) == 2
        line = one_line_error(capsys)
        assert str(out) in line and why in line, line
    assert out.read_text() == text  # left as it was


def test_the_table_shows_a_measure_an_entry_lacks_as_a_dash(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """An entry without held-out measures (one written by hand) was a KeyError traceback."""
    shipped = json.loads(win_prob.CALIBRATION_FILE.read_text())
    doc = {"levels": {"master": {"2": {"weights": [0, 1, 0, 0]}},
                      "club": {"2": shipped["levels"]["club"]["2"],
                               "3": {"games": 10, "held_out": {"decisions": 7, "raw": {"brier": 0.25}}}}}}
    out = tmp_path / "cal.json"
    out.write_text(json.dumps(doc))
    assert main(["calibrate", "--table", "--out", str(out)]) == 0
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:2]): line
            for line in capsys.readouterr().out.splitlines()[2:]}
    assert rows[("master", "2")] == "| master | 2 | - | - | - | - | - | - | - | - | - |"
    assert rows[("club", "3")] == "| club | 3 | 10 | 7 | 0.2500 | - | - | - | - | - | - |"
    club, h = shipped["levels"]["club"]["2"], shipped["levels"]["club"]["2"]["held_out"]
    assert rows[("club", "2")].startswith(f"| club | 2 | {club['games']} | {h['decisions']} | "
                                          f"{h['raw']['brier']:.4f} | {h['calibrated']['brier']:.4f} |")


def test_the_largest_bin_gap_of_a_fit_on_few_decisions_is_a_dash(capsys: pytest.CaptureFixture[str]) -> None:
    """grandmaster's fits hold a few hundred decisions: no bin reaches 500, and the gap read 0.000
    (a perfect fit) where there is no figure."""
    assert main(["calibrate", "--table"]) == 0
    rows = {tuple(c.strip() for c in line.strip("|").split("|")[:2]): line.strip("|").split("|")
            for line in capsys.readouterr().out.splitlines()[2:]}
    for players in ("2", "3", "4"):
        assert [c.strip() for c in rows[("grandmaster", players)][8:10]] == ["-", "-"]
    assert rows[("master", "2")][9].strip().startswith("0.088 [")


def test_two_runs_writing_one_file_keep_each_other_s_fits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Each run read the file once at its start and wrote its whole document after each fit: a fit
    another run wrote in between was lost. Here another run writes club 3p while this one fits."""
    out = tmp_path / "cal.json"
    out.write_text(json.dumps({"levels": {"master": {"2": entry(9.0)}}}))

    def fit(args: argparse.Namespace, level: Any, players: int) -> dict[str, Any]:
        if players == 2:  # the other run finishes its fit meanwhile (written whole, as both do)
            doc = json.loads(out.read_text())
            doc["levels"].setdefault("club", {})["3"] = entry(3.0)
            tmp = tmp_path / "other.json"
            tmp.write_text(json.dumps(doc))
            os.replace(tmp, out)
        return entry(float(players))

    monkeypatch.setattr(cli_calibrate, "_fit", fit)
    assert main(["calibrate", "--levels", "novice", "--players", "2,4", "-n", "4", "-j", "1", "--out", str(out)]) == 0
    levels = json.loads(out.read_text())["levels"]
    assert levels["master"]["2"] == entry(9.0)
    assert levels["club"]["3"] == entry(3.0)
    assert levels["novice"] == {"2": entry(2.0), "4": entry(4.0)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cal.json", "cal.json.lock"]  # no temporary file left


def test_a_write_waits_for_the_lock_and_merges_into_what_is_there_then(tmp_path: Path) -> None:
    out = tmp_path / "cal.json"
    out.write_text(json.dumps({"levels": {}}))
    lock = os.open(f"{out}.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # another run is writing
    done = threading.Event()
    writer = threading.Thread(target=lambda: (cli_calibrate._store(str(out), "novice", 2, entry(2.0)), done.set()))
    writer.start()
    try:
        time.sleep(0.3)
        assert not done.is_set()  # it waits
        out.write_text(json.dumps({"levels": {"club": {"2": entry(7.0)}}}))  # what the other run wrote
    finally:
        os.close(lock)
    writer.join(10)
    assert done.is_set()
    assert json.loads(out.read_text())["levels"] == {"club": {"2": entry(7.0)}, "novice": {"2": entry(2.0)}}


def test_a_failed_write_leaves_the_file_and_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The `.tmp-PID` file stayed behind when the write failed (and the error was a traceback); the
    new file is synced before it is moved over the old one."""
    out = tmp_path / "cal.json"
    before = json.dumps({"levels": {"club": {"2": entry(7.0)}}})
    out.write_text(before)
    calls: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    def replace(src: str, dst: str) -> None:
        calls.append("replace")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(SystemExit) as err:
        cli_calibrate._store(str(out), "novice", 2, entry(2.0))
    assert "cannot write" in str(err.value) and "No space left" in str(err.value)
    assert calls == ["fsync", "replace"]
    assert out.read_text() == before
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]


def test_the_table_reads_a_file_it_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """`--table` only reads --out, yet refused a file it could not write (the packaged file, for a
    user other than its owner). Tests run as root, where chmod stops no write: os.access stands in."""
    no_games(monkeypatch)
    out = tmp_path / "cal.json"
    out.write_text(win_prob.CALIBRATION_FILE.read_text())
    out.chmod(0o444)
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode & os.W_OK else real_access(p, mode, **kw))
    assert main(["calibrate", "--table", "--out", str(out)]) == 0
    assert "| master | 4 |" in capsys.readouterr().out
    assert main(["calibrate", "--levels", "novice", "--players", "2", "-n", "4", "-j", "1", "--out", str(out)]) == 2
    assert "argument --out: cannot write" in one_line_error(capsys)


def test_a_directory_it_cannot_write_in_is_refused_before_any_game(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The new file is made beside --out: a writable file in a read-only directory failed after
    every game."""
    no_games(monkeypatch)
    out = tmp_path / "cal.json"
    out.write_text("{}")
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(tmp_path) and mode & os.W_OK
                        else real_access(p, mode, **kw))
    assert main(["calibrate", "--levels", "novice", "--players", "2", "-n", "4", "-j", "1", "--out", str(out)]) == 2
    assert f"cannot write in directory {str(tmp_path)!r}" in one_line_error(capsys)
    for argv in (["--out", str(tmp_path / "none" / "cal.json")], ["--out", str(tmp_path)]):
        assert main(["calibrate", "--levels", "novice", "--players", "2", "-n", "4", "-j", "1", *argv]) == 2
        assert "argument --out" in one_line_error(capsys)


def made_up_records(games: int = 40) -> list[calibrate.Record]:
    """Records of made-up games in which a higher mean reward wins more often (what a fit needs)."""
    import random

    rnd = random.Random(5)
    out = []
    for g in range(games):
        winner_reward = rnd.uniform(0.3, 0.9)
        for k in range(10):
            r = min(0.99, max(0.01, winner_reward + rnd.gauss(0, 0.2)))
            out.append(calibrate.Record(g, k / 10, round(r, 6), int(rnd.random() < r), k % 2))
    return out


def test_records_are_written_and_read_back_whole(tmp_path: Path) -> None:
    recs = made_up_records(3)
    calibrate.write_records(tmp_path / "r.jsonl", {"level": "club", "players": 3}, recs)
    header, back = calibrate.read_records(tmp_path / "r.jsonl")
    assert back == recs and header == {"format": calibrate.RECORDS_FORMAT, "level": "club", "players": 3,
                                       "records": len(recs)}
    assert {r.order for r in back} == {0, 1}


def test_records_saved_before_the_turn_order_was_kept_read_without_it(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text(f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[4, 0.25, 0.5, 1]\n')
    assert calibrate.read_records(tmp_path / "r.jsonl")[1] == [calibrate.Record(4, 0.25, 0.5, 1, None)]
    calibrate.write_records(tmp_path / "again.jsonl", {}, [calibrate.Record(4, 0.25, 0.5, 1, None)])
    assert (tmp_path / "again.jsonl").read_text().splitlines()[1] == "[4, 0.25, 0.5, 1]"


@pytest.mark.parametrize(("text", "where"), [
    ("", "line 1"), ('{"level": "club"}\n[1, 0.5, 0.5, 1]\n', "line 1"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, 1]\n[1, 0.5, 1.5, 1]\n', "line 3"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, true]\n', "line 2"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5]\n', "line 2"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, 1, 0]\n[1, 0.5, 0.5, 1, -1]\n', "line 3"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, 1, false]\n', "line 2"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, 1, 0, 0]\n', "line 2"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n{{"game": 1}}\n', "line 2"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n', "no records"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[true, 0.5, 0.5, 1]\n', "line 2"),
    pytest.param(f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, 1]\n' + "[" * 100000 + "]" * 100000 + "\n",
                 "line 3", id="a record nested too deep"),
    pytest.param("[" * 100000 + "]" * 100000 + "\n", "line 1", id="a header nested too deep"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}"}}\n[1, 0.5, 0.5, 1, 0]\n[2, 0.5, 0.5, 1]\n',
     "1 of 2 records name their place"),
    (f'{{"format": "{calibrate.RECORDS_FORMAT}", "records": 3}}\n[1, 0.5, 0.5, 1]\n[2, 0.5, 0.5, 1]\n',
     "the header says 3 records, the file holds 2"),
])
def test_malformed_records_name_the_line(tmp_path: Path, text: str, where: str) -> None:
    (tmp_path / "r.jsonl").write_text(text)
    with pytest.raises(ValueError, match=where):
        calibrate.read_records(tmp_path / "r.jsonl")


def test_a_records_file_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    """A run stopped while it writes its records (Ctrl-C, a full disk) leaves the file it had, not a
    file cut after some games that a later --from-records would fit as if it were whole."""
    path = tmp_path / "club-2p.jsonl"
    old = made_up_records(4)
    calibrate.write_records(path, {"games": 4}, old)

    class Stop(Exception):
        pass

    class CutShort(list[calibrate.Record]):  # stopped after some games' records are written
        def __iter__(self) -> Iterator[calibrate.Record]:
            yield from self[:25]
            raise Stop

    with pytest.raises(Stop):
        calibrate.write_records(path, {"games": 8}, CutShort(made_up_records(8)))
    assert calibrate.read_records(path) == ({"format": calibrate.RECORDS_FORMAT, "games": 4, "records": 40}, old)
    assert sorted(os.listdir(tmp_path)) == ["club-2p.jsonl"]  # no temporary file left


def test_a_fit_from_saved_records_is_the_fit_of_the_games_played(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """--records saves what was played; --from-records fits it again without playing: the same
    weights and held-out measures (without --seed, the records' own seed holds out the same games;
    -n does not apply)."""
    recs = made_up_records()
    monkeypatch.setattr(calibrate, "collect", lambda *a, **kw: list(recs))
    (tmp_path / "rec").mkdir()
    played, again = tmp_path / "played.json", tmp_path / "again.json"
    common = ["calibrate", "--levels", "club", "--players", "3"]
    assert main([*common, "--seed", "7", "-n", "40", "-j", "1", "--records", str(tmp_path / "rec"),
                 "--out", str(played)]) == 0
    assert calibrate.read_records(tmp_path / "rec" / "club-3p.jsonl")[1] == recs
    no_games(monkeypatch)
    assert main([*common, "-n", "1", "--from-records", str(tmp_path / "rec"), "--out", str(again)]) == 0
    a, b = (json.loads(p.read_text())["levels"]["club"]["3"] for p in (played, again))
    assert a["weights"] == b["weights"] and a["held_out"] == b["held_out"] and a["preset"] == b["preset"]
    assert "--from-records" in b["command"] and "--records" in a["command"]


def test_records_of_another_preset_or_none_are_refused_before_any_fit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from bots.levels import load_levels

    no_games(monkeypatch)
    club = next(lv for lv in load_levels() if lv.name == "club")
    preset = dict(win_prob.preset_of(club), iterations=1)  # the level was changed since
    calibrate.write_records(tmp_path / "club-2p.jsonl", {"level": "club", "players": 2, "preset": preset},
                            made_up_records())
    out = tmp_path / "cal.json"
    argv = ["calibrate", "--levels", "club", "--from-records", str(tmp_path), "--out", str(out)]
    assert main([*argv, "--players", "2"]) != 0
    assert "another level, seat count or preset" in one_line_error(capsys)
    calibrate.write_records(tmp_path / "club-2p.jsonl",
                            {"level": "club", "players": 2, "preset": win_prob.preset_of(club)}, made_up_records())
    assert main([*argv, "--players", "2,3"]) != 0  # club-3p.jsonl is missing: nothing fitted, not even 2p
    assert "club-3p.jsonl" in one_line_error(capsys)
    assert not out.exists()
    assert main([*argv, "--players", "2", "--records", str(tmp_path)]) != 0
    assert "not with --from-records" in one_line_error(capsys)


@pytest.mark.parametrize(("suffix", "kind"), [(".xz", "xz"), (".gz", "gzip")])
def test_records_kept_compressed_are_fitted_as_the_plain_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str], suffix: str,
                                                              kind: str) -> None:
    import gzip
    import lzma

    from bots.levels import get_level

    compress = lzma.compress if suffix == ".xz" else gzip.compress
    no_games(monkeypatch)
    header = {"level": "club", "players": 2, "preset": win_prob.preset_of(get_level("club")), "seed": 3}
    calibrate.write_records(tmp_path / "club-2p.jsonl", header, made_up_records())
    text = (tmp_path / "club-2p.jsonl").read_bytes()
    argv = ["calibrate", "--levels", "club", "--players", "2", "--from-records", str(tmp_path)]
    assert main([*argv, "--out", str(tmp_path / "plain.json")]) == 0
    (tmp_path / "club-2p.jsonl").unlink()
    packed = tmp_path / f"club-2p.jsonl{suffix}"
    packed.write_bytes(compress(text))
    assert main([*argv, "--out", str(tmp_path / "packed.json")]) == 0
    a, b = (json.loads((tmp_path / f).read_text())["levels"]["club"]["2"] for f in ("plain.json", "packed.json"))
    assert a["weights"] == b["weights"] and a["held_out"] == b["held_out"]
    packed.write_bytes(compress(text)[:-40])  # cut short
    assert main([*argv, "--out", str(tmp_path / "cut.json")]) != 0
    assert f"club-2p.jsonl{suffix}: not a whole {kind} file" in one_line_error(capsys)
    packed.write_bytes(compress(b"")[:6] + bytes(range(60)))  # damaged inside
    assert main([*argv, "--out", str(tmp_path / "bad.json")]) != 0
    assert f"club-2p.jsonl{suffix}" in one_line_error(capsys)
    assert not (tmp_path / "cut.json").exists() and not (tmp_path / "bad.json").exists()


def test_saved_records_of_a_place_in_turn_order_the_game_lacks_are_refused_before_any_fit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from bots.levels import get_level

    no_games(monkeypatch)
    recs = made_up_records()
    recs[7] = calibrate.Record(recs[7].game, recs[7].progress, recs[7].reward, recs[7].won, 2)
    calibrate.write_records(tmp_path / "club-2p.jsonl",
                            {"level": "club", "players": 2, "preset": win_prob.preset_of(get_level("club"))}, recs)
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--levels", "club", "--players", "2", "--from-records", str(tmp_path),
                 "--out", str(out)]) != 0
    assert f"place 2 in turn order (game {recs[7].game}) in a 2-seat game" in one_line_error(capsys)
    assert not out.exists()


def test_saved_records_of_too_few_games_are_a_one_line_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """One saved game cannot be split into games to fit and games to hold out: a ZeroDivisionError
    traceback, before --held-out was checked against the games in the file (not -n)."""
    from bots.levels import get_level

    no_games(monkeypatch)
    one_game = [r for r in made_up_records() if r.game == 0]
    calibrate.write_records(tmp_path / "novice-2p.jsonl",
                            {"level": "novice", "players": 2, "preset": win_prob.preset_of(get_level("novice"))},
                            one_game)
    out = tmp_path / "cal.json"
    assert main(["calibrate", "--levels", "novice", "--players", "2", "--from-records", str(tmp_path),
                 "--out", str(out)]) != 0
    assert "novice-2p.jsonl holds 1 games" in one_line_error(capsys)
    assert not out.exists()


def test_runs_on_consecutive_deal_seeds_merge_into_the_file_one_run_writes(tmp_path: Path) -> None:
    """Self-play games depend only on their deal seeds, so two runs of 2 games (seeds 31000-31001,
    then 31002-31003) joined by --merge are, to the byte, the records file of one run of 4 games."""
    for folder in ("one", "a", "b", "merged"):
        (tmp_path / folder).mkdir()
    common = ["calibrate", "--levels", "novice", "--players", "2", "-j", "1"]
    for folder, games, seed in (("one", 4, 31000), ("a", 2, 31000), ("b", 2, 31002)):
        assert main([*common, "-n", str(games), "--seed", str(seed), "--records", str(tmp_path / folder),
                     "--out", str(tmp_path / f"{folder}.json")]) == 0
    assert main([*common, "--merge", f"{tmp_path / 'a'},{tmp_path / 'b'}", "--records", str(tmp_path / "merged"),
                 "--out", str(tmp_path / "unused.json")]) == 0
    one = (tmp_path / "one" / "novice-2p.jsonl").read_bytes()
    assert (tmp_path / "merged" / "novice-2p.jsonl").read_bytes() == one
    header, records = calibrate.read_records(tmp_path / "merged" / "novice-2p.jsonl")
    assert header["games"] == 4 and header["seed"] == 31000 and {r.game for r in records} == set(range(31000, 31004))
    assert not (tmp_path / "unused.json").exists()  # nothing fitted


def test_runs_that_do_not_follow_on_are_refused_and_nothing_is_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from bots.levels import get_level

    no_games(monkeypatch)
    preset = win_prob.preset_of(get_level("club"))
    recs = made_up_records(4)  # games 0..3

    def run(folder: str, seed: int, games: int, records: list[calibrate.Record], **header: Any) -> str:
        (tmp_path / folder).mkdir(exist_ok=True)
        calibrate.write_records(tmp_path / folder / "club-2p.jsonl",
                                {"level": "club", "players": 2, "preset": preset, "games": games, "seed": seed,
                                 **header}, records)
        return str(tmp_path / folder)

    def shifted(by: int) -> list[calibrate.Record]:
        return [calibrate.Record(r.game + by, r.progress, r.reward, r.won, r.order) for r in recs]

    first = run("first", 0, 4, recs)
    out = tmp_path / "out"
    out.mkdir()
    argv = ["calibrate", "--levels", "club", "--players", "2", "--records", str(out), "--merge"]
    cases = {
        run("gap", 5, 4, shifted(5)): "starts at deal seed 5, not 4",
        run("outside", 4, 4, shifted(5)): "game 8 is not one of its deal seeds 4..7",
        run("preset", 4, 4, shifted(4), preset=dict(preset, iterations=1)): "another preset",
        run("seats", 4, 4, shifted(4), players=3): "another seat count",
    }
    for second, why in cases.items():
        assert main([*argv, f"{first},{second}"]) != 0
        assert why in one_line_error(capsys)
    assert main([*argv, first]) != 0
    assert "at least two directories" in one_line_error(capsys)
    assert main(["calibrate", "--levels", "club", "--players", "2", "--merge", f"{first},{first}"]) != 0
    assert "wants --records DIR" in one_line_error(capsys)
    assert os.listdir(out) == []
    assert main([*argv, f"{first},{run('next', 4, 4, shifted(4))}"]) == 0
    header, merged = calibrate.read_records(out / "club-2p.jsonl")
    assert merged == recs + shifted(4) and header["games"] == 8 and header["seed"] == 0

