"""Bad input to `kashgar` is one line on stderr (`kashgar SUB: error: ...`) and exit status 2, found
before any game is played; output paths are checked up front; `tune --verify` changes no level
file and fails when the ladder does; Ctrl-C stops a pool cleanly; benchmark JSON says where it
came from."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pytest

import engine_ext
from bots.ismcts_bot import ISMCTSConfig
from bots.levels import Level, dump_levels
from kashgar_cli.main import main
from tests.cli_helpers import refused, sigint_as_at_a_terminal

PROVENANCE = {"command", "date", "cores", "python"}




def toy_levels(path: Path, *presets: tuple[str, int, float]) -> str:
    """A level file of toy-game presets (name, iterations, temperature); returns its path."""
    base = ISMCTSConfig(evaluator="vp")
    path.write_text(dump_levels([Level(name, "", base.with_(iterations=it, temperature=t))
                                 for name, it, t in presets]))
    return str(path)


@pytest.fixture
def state_file(tmp_path: Path) -> str:
    path = tmp_path / "state.json"
    path.write_text(json.dumps(engine_ext.new_game(players=2, seed=1).to_json()))
    return str(path)


# ---- values refused up front -----------------------------------------------------------------

@pytest.mark.parametrize(("argv", "names"), [
    (["selfplay", "--seed", "-1", "--games", "1"], "--seed"),
    (["selfplay", "--games", "-1"], "--games"),
    (["fuzz", "--seed", "-5", "-n", "1", "-j", "1", "--no-progress"], "--seed"),
    (["fuzz", "-j", "0", "-n", "1", "--no-progress"], "--workers"),
    (["bench", "engine", "--players", "5", "--seconds", "0.01"], "--players"),
    (["bench", "engine", "--players", "x", "--seconds", "0.01"], "--players"),
    (["bench", "search", "--bot", "nosuch", "--no-openspiel"], "--bot"),
    (["bench", "search", "--bot", "greedy", "--no-openspiel"], "--bot"),
    (["bench", "search", "--os-iterations", "1", "--search-iterations", "5", "--tree-iterations", "5"],
     "--os-iterations"),
    (["bench", "search", "--search-iterations", "-5", "--no-openspiel", "--tree-iterations", "5"],
     "--search-iterations"),
    (["fit-eval", "--policy", "nosuch", "-n", "2", "-j", "1", "--out", "{tmp}/w.json"], "--policy"),
    (["fit-eval", "-n", "1", "-j", "1", "--out", "{tmp}/w.json"], "--games"),
    (["tune-eval", "--start", "/nonexistent.json", "--out", "{tmp}/w.json"], "--start"),
    (["tune", "--levels", "/nonexistent.toml", "--out", "{tmp}/l.toml"], "--levels"),
    (["tune", "-n", "0", "--out", "{tmp}/l.toml"], "--games"),
    (["tune", "--from-top", "--grow", "0", "--game", "toy", "-n", "1", "--levels", "{toy}", "--out",
      "{tmp}/l.toml", "--report-dir", "{tmp}/rep"], "--grow"),
    (["tune", "--max-rounds", "-1", "--game", "toy", "-n", "1", "--levels", "{toy}", "--out", "{tmp}/l.toml",
      "--report-dir", "{tmp}/rep"], "--max-rounds"),
    (["suggest", "{state}", "--iterations", "99999999999999", "--time-ms", "50"], "--iterations: want 1..10000000"),
    (["arena", "random", "greedy", "-n", "1", "-j", "0"], "--workers"),
    (["arena", "random", "greedy", "-n", "1", "-j", "-3"], "--workers"),
    (["arena", "random", "nosuch", "-n", "1", "-j", "1"], "unknown bot 'nosuch'"),
    (["arena", "random", "-n", "1", "-j", "1", "--sprt"], "SPRT"),  # printed on stdout before
    (["arena", "greedy:samples=0", "random", "-n", "1", "-j", "1"], "samples"),  # ZeroDivisionError before
    (["arena", "openspiel:iterations=1", "random", "-n", "1", "-j", "1"], "at least 2"),  # an assertion before
    # the toy game cannot play a search with Kashgar's evaluators: an AttributeError once the games ran
    (["arena", "--game", "toy", "master", "random", "-n", "2", "-j", "1", "--no-progress"],
     "the toy game plays only bots whose search has evaluator default or vp, not 'master'"),
    (["arena", "--game", "toy", "random", "ismcts:evaluator=kashgar,iterations=4", "level:novice:evaluator=tuned",
      "-p", "3", "-n", "2", "-j", "1", "--no-progress"],
     "not 'ismcts:evaluator=kashgar,iterations=4', 'level:novice:evaluator=tuned'"),
    (["tune", "--from-top", "--max-temperature", "1.5", "--out", "{tmp}/l.toml"], "--max-temperature"),
])
def test_bad_values_are_one_line_errors(argv: list[str], names: str, tmp_path: Path, state_file: str,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    toy = toy_levels(tmp_path / "toy.toml", ("low", 2, 1.0), ("high", 4, 0.0))
    argv = [a.format(tmp=tmp_path, toy=toy, state=state_file) for a in argv]
    assert names in refused(argv, capsys)
    assert not (tmp_path / "rep").exists()  # refused before any game


@pytest.mark.parametrize("argv", [
    ["arena", "random", "greedy", "-n", "1"], ["tune", "--out", "{tmp}/l.toml"], ["fuzz", "-n", "1"],
    ["calibrate", "-n", "10"], ["fit-eval", "-n", "2", "--out", "{tmp}/w.json"],
    ["tune-eval", "--out", "{tmp}/w.json"], ["suggest", "{state}"],
])
@pytest.mark.parametrize("workers", ["0", "100000"])
def test_process_counts_are_bounded(argv: list[str], workers: str, tmp_path: Path, state_file: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """`-j 100000` forked a pool of 100,000 processes, whatever the number of games; now every
    command with `-j` takes 1 to 4 per core (at least 64)."""
    from kashgar_cli.errors import most_processes

    argv = [a.format(tmp=tmp_path, state=state_file) for a in argv]
    line = refused([*argv, "-j", workers], capsys)
    assert "--workers" in line
    if workers != "0":
        assert f"want at most {most_processes()} processes" in line
    assert list(tmp_path.iterdir()) == [Path(state_file)]


def test_a_level_file_that_is_not_toml_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("not [ toml")
    line = refused(["tune", "--levels", str(bad), "--out", str(tmp_path / "l.toml")], capsys)
    assert str(bad) in line


def test_the_toy_game_names_the_presets_it_cannot_play(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(["tune", "--game", "toy", "-n", "1", "-j", "1", "--out", str(tmp_path / "l.toml"),
                    "--report-dir", str(tmp_path / "rep")], capsys)  # the shipped levels: master's is "tuned"
    assert "master" in line and "evaluator default or vp" in line
    assert not (tmp_path / "l.toml").exists()


def test_an_error_during_tune_games_is_not_called_a_usage_error(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the up-front checks are usage errors (exit 2, one line); a ValueError raised while the
    games run is a bug and keeps its traceback."""
    import lab.tune

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise ValueError("a bug inside a game")

    monkeypatch.setattr(lab.tune, "place_levels", broken)
    levels = toy_levels(tmp_path / "toy.toml", ("a", 4, 0.0), ("b", 8, 0.0))
    with pytest.raises(ValueError, match="a bug inside a game"):
        main(["tune", "--game", "toy", "-n", "1", "-j", "1", "--levels", levels, "--out", str(tmp_path / "l.toml"),
              "--report-dir", str(tmp_path / "rep")])


def test_play_names_itself_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--seat" in refused(["play", "--seat", "5"], capsys)


def test_the_real_command_exits_2_with_one_line() -> None:
    proc = subprocess.run([sys.executable, "-m", "kashgar_cli.main", "selfplay", "--seed", "-1"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == ["kashgar selfplay: error: argument --seed: want 0..9223372036854775805 "
                                                "(game k plays seed + k), not -1"]


# ---- output paths, before any game -----------------------------------------------------------

@pytest.mark.parametrize(("argv", "option"), [
    (["tune", "--game", "toy", "-n", "1", "-j", "1", "--max-rounds", "0", "--levels", "{toy}",
      "--report-dir", "{tmp}/rep", "--out", "{tmp}/nodir/levels.toml"], "--out"),
    (["tune-eval", "-n", "1", "--batch", "1", "-j", "1", "--out", "missing/x.json"], "--out"),
    (["tune-eval", "-n", "1", "--batch", "1", "-j", "1", "--out", "{tmp}/w.json", "--log", "missing/log"], "--log"),
    (["fit-eval", "--policy", "random", "-n", "2", "-j", "1", "--out", "missing/w.json"], "--out"),
    (["arena", "random", "greedy", "-n", "1", "-j", "1", "--no-progress", "--json", "missing/dir/x.json"], "--json"),
    (["arena", "random", "greedy", "-n", "1", "-j", "1", "--no-progress", "--json", "{tmp}"], "--json"),
])
def test_output_paths_are_checked_before_any_game(argv: list[str], option: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    toy = toy_levels(tmp_path / "toy.toml", ("low", 2, 1.0), ("high", 4, 0.0))
    argv = [a.format(tmp=tmp_path, toy=toy) for a in argv]
    line = refused(argv, capsys)
    assert f"argument {option}:" in line or f"/{option}:" in line
    assert not (tmp_path / "rep").exists() and not (tmp_path / "w.json").exists()


# ---- tune --verify ---------------------------------------------------------------------------

def test_verify_writes_no_level_file_and_fails_a_bad_ladder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)  # the default --out is bots/data/levels.toml, here
    (tmp_path / "bots").mkdir()
    shipped = tmp_path / "bots" / "levels.toml"
    shipped.write_text("# hand-written header\n" + Path(toy_levels(tmp_path / "x.toml", ("a", 2, 1.0))).read_text())
    before = shipped.read_text()
    good = toy_levels(tmp_path / "good.toml", ("weak", 1, 1.0), ("strong", 64, 0.0))
    upside_down = toy_levels(tmp_path / "bad.toml", ("strong", 64, 0.0), ("weak", 1, 1.0))
    common = ["tune", "--verify", "--game", "toy", "-n", "8", "-j", "1", "--report-dir", "rep"]
    assert main([*common, "--levels", upside_down]) == 1
    assert "failed the check" in capsys.readouterr().err
    assert json.loads((tmp_path / "rep" / "ladder.json").read_text())["monotone"] is False
    assert shipped.read_text() == before
    # passed; a level file only where --out names one
    assert main([*common, "--levels", good, "--out", "rated.toml"]) == 0
    assert "strong" in (tmp_path / "rated.toml").read_text() and shipped.read_text() == before


# ---- benchmark JSON and the service benchmark ------------------------------------------------

def test_arena_json_says_where_it_came_from(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "arena.json"
    assert main(["arena", "random", "greedy", "-n", "2", "-j", "1", "--seed", "7", "--no-progress",
                 "--json", str(out)]) == 0
    made = json.loads(out.read_text())["provenance"]
    assert PROVENANCE | {"seed", "engine", "workers"} <= set(made)
    assert made["seed"] == 7 and made["workers"] == 1 and made["engine"] in ("compiled", "interpreted")
    assert made["date"].endswith("+00:00") and made["cores"] == os.cpu_count()


def test_bench_json_says_where_it_came_from(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "engine", "--players", "2", "--seconds", "0.02", "--json"]) == 0
    assert PROVENANCE <= set(json.loads(capsys.readouterr().out)["provenance"])
    assert main(["bench", "search", "--json", "--no-openspiel", "--search-iterations", "5",
                 "--tree-iterations", "5"]) == 0
    assert PROVENANCE <= set(json.loads(capsys.readouterr().out)["provenance"])


def test_bench_service_counts_only_the_cores_its_workers_use(service_url: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "service", "--url", service_url, "--levels", "novice", "--duration", "0.1",
                 "--positions", "2", "--workers", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    r = report["results"][0]
    assert r["limit_rps"] == pytest.approx(1000.0 / r["search_ms"], rel=0.01)  # one worker: one search at a time
    # the open loop is paced by what the server serves one request at a time (search and HTTP), not
    # by the search alone: that pace overloads the cheap levels and measures a growing queue
    assert r["serving_limit_rps"] == pytest.approx(1000.0 / r["serial_wall_ms"], rel=0.01)
    assert r["load_rps"] == pytest.approx(0.8 * r["serving_limit_rps"], rel=0.01)
    assert report["limit_cores"] == 1
    assert PROVENANCE <= set(report["provenance"])
    assert "unknown levels ['nosuch']" in refused(["bench", "service", "--url", service_url, "--levels", "nosuch"],
                                                  capsys)


def test_bench_service_stops_when_the_server_answers_no_search(capsys: pytest.CaptureFixture[str]) -> None:
    """A server that refuses every search (here: bodies over 200 bytes) was asked forever, waiting
    for five answered searches to time; now the benchmark stops with one line naming the answer."""
    from tests.service_helpers import serve_app

    with serve_app({"max_body_bytes": 200}) as url:
        line = refused(["bench", "service", "--url", url, "--levels", "novice", "--duration", "0.1",
                        "--positions", "2", "--workers", "1"], capsys, status=1)
    assert "answered 413 to every one of 20 searches" in line and "body_too_large" in line


@pytest.mark.parametrize("how", ["cancelled", "timeout"])
def test_play_names_a_bot_search_that_failed_on_the_server(how: str, service_url: str,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """A bot's search that the server ran as a job (202), then cancelled, failed or kept past the
    wait, was a JobFailed or JobTimeout traceback: now one line naming the job, exit status 1."""
    from kashgar_client import Answer, Job, JobTimeout, KashgarClient

    real = KashgarClient.request

    def asynchronous(self: KashgarClient, method: str, path: str, body: Any = None,
                     timeout: float | None = None, idempotency_key: str | None = None) -> Answer:
        if path == "/suggest":
            return Answer(202, {"Location": "/jobs/j123"}, {"job_id": "j123", "status": "queued"})
        return real(self, method, path, body, timeout, idempotency_key)

    def waits_too_long(self: KashgarClient, job: Any, *args: Any, **kwargs: Any) -> Job:
        raise JobTimeout("j123", "running", 3600.0)

    monkeypatch.setattr(KashgarClient, "request", asynchronous)
    monkeypatch.setattr(KashgarClient, "job", lambda self, job: Job.from_json(
        {"job_id": "j123", "status": "cancelled", "error": None, "progress": {"parts_done": 1, "parts_total": 1}}))
    if how == "timeout":
        monkeypatch.setattr(KashgarClient, "wait", waits_too_long)
    code = main(["play", "--url", service_url, "--auto", "--seed", "1", "--level", "novice", "--seat", "1"])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == {
        "cancelled": "kashgar play: error: the bot's search (job j123) cancelled",
        "timeout": "kashgar play: error: the bot's search: job j123 still running after 3600.0 s"}[how]


def test_bench_service_names_a_server_it_cannot_reach(capsys: pytest.CaptureFixture[str]) -> None:
    assert "cannot reach http://127.0.0.1:1" in refused(["bench", "service", "--url", "http://127.0.0.1:1"],
                                                        capsys, status=1)


# ---- Ctrl-C ----------------------------------------------------------------------------------

def ctrl_c(argv: list[str], ready: bytes, tty: bool = False) -> tuple[int, str, str]:
    """Run `kashgar ARGV` in its own process group, send SIGINT to the group (as Ctrl-C does) once
    its stderr matches `ready` (within 60 s), and check that no process of it outlives it. With
    `tty`, stderr is a terminal of 100 columns (progress bars are drawn only on one). Returns (exit
    status, stdout, stderr)."""
    if tty:
        reader, writer = pty.openpty()
        fcntl.ioctl(writer, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    else:
        reader, writer = os.pipe()
    proc = subprocess.Popen([sys.executable, "-m", "kashgar_cli.main", *argv], stdout=subprocess.PIPE,
                            stderr=writer, start_new_session=True,
                            preexec_fn=sigint_as_at_a_terminal)
    os.close(writer)
    assert proc.stdout is not None

    def read_err(until: float) -> bytes:
        got = b""
        while time.monotonic() < until and not (ready and re.search(ready, got)):
            if not select.select([reader], [], [], 0.1)[0]:
                if proc.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(reader, 4096)
            except OSError:  # a terminal whose other end closed
                break
            if not chunk:
                break
            got += chunk
        return got

    err = read_err(time.monotonic() + 60)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole process group
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # leave no process behind a failed test
        proc.wait()
        pytest.fail(f"still running 60 s after Ctrl-C: {err.decode()[-2000:]}")
    for _ in range(50):  # no worker outlives it (checked first: one left behind holds stdout open)
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        os.close(reader)
        pytest.fail("worker processes left behind")
    out = proc.stdout.read()
    ready, rest = b"", read_err(time.monotonic() + 5)
    os.close(reader)
    return proc.returncode, out.decode(), (err + rest).decode()


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def test_ctrl_c_in_any_command_is_one_line_and_status_130(tmp_path: Path) -> None:
    """Commands without worker processes (here a long `kashgar suggest`) ended on Ctrl-C with a
    traceback of the search and the signal's status; now as the others do: one line, 130."""
    state = tmp_path / "state.json"
    state.write_text(json.dumps(engine_ext.new_game(players=2, seed=1).to_json()))
    proc = subprocess.Popen([sys.executable, "-m", "kashgar_cli.main", "suggest", str(state), "--time-ms", "60000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=sigint_as_at_a_terminal)
    try:
        deadline = time.monotonic() + 60
        while _cpu_seconds(proc.pid) < 2.0 and time.monotonic() < deadline:  # loaded, and searching
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err.decode() == "kashgar suggest: interrupted\n" and out == b""


@pytest.mark.parametrize("argv", [["arena", "random", "greedy", "-n", "2000"], ["fuzz", "-n", "2000"]])
def test_ctrl_c_stops_the_pool_and_reports_what_was_played(argv: list[str]) -> None:
    code, text, err_text = ctrl_c([*argv, "-j", "2"], rb"\| *[1-9]\d*/2000 \[", tty=True)  # the progress bar
    assert code == 130, err_text
    assert "Traceback" not in err_text and "KeyboardInterrupt" not in err_text
    assert f"kashgar {argv[0]}: interrupted after" in err_text
    played = re.search(r"(\d+) (?:of 2000 )?games", text)
    assert played and 0 < int(played.group(1)) < 2000, text
    if argv[0] == "arena":
        assert text.startswith("INTERRUPTED: partial report") and "win rate" in text


def test_ctrl_c_stops_tune_and_its_pool(tmp_path: Path) -> None:
    """Ctrl-C during `kashgar tune` printed a traceback from the command and one from each pool
    worker, and ended by the signal: now it stops as the arena does, exit 130, one line."""
    levels = toy_levels(tmp_path / "toy.toml", ("a", 2, 0.0), ("b", 4, 0.0), ("c", 8, 0.0))
    # quick lower steps, then a top step long enough to be under way when Ctrl-C comes
    argv = ["tune", "--game", "toy", "-n", "20", "--top-games", "100000", "-j", "2", "--levels", levels,
            "--out", str(tmp_path / "l.toml"), "--report-dir", str(tmp_path / "rep")]
    code, out, err = ctrl_c(argv, rb"b vs a \(round \d+.*\n")  # the log line of the first step
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines()[-1].startswith("kashgar tune: interrupted: no level file or report written")
    assert out == "" and not (tmp_path / "l.toml").exists()


def test_ctrl_c_stops_calibrate_and_keeps_the_fits_written(tmp_path: Path) -> None:
    """Ctrl-C during `kashgar calibrate` printed tracebacks and ended by the signal; the calibration
    file is written whole (a new file moved over it), so what was fitted before stays readable."""
    out_file = tmp_path / "cal.json"
    argv = ["calibrate", "--levels", "novice,beginner", "--players", "2", "-n", "20000", "-j", "2",
            "--out", str(out_file)]
    code, out, err = ctrl_c(argv, rb"novice 2p: 100/20000 games\n")
    assert code == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines()[-1].startswith("kashgar calibrate: interrupted")
    assert not out_file.exists() and not list(tmp_path.iterdir())  # nothing fitted yet, no partial file


def test_an_error_during_the_games_is_not_taken_for_a_bad_argument(monkeypatch: pytest.MonkeyPatch) -> None:
    """The arena turned every ValueError into a usage line and exit 2, a bug in game 6 as well
    (and the games played were lost): only the settings are checked that way now."""
    import lab.arena as arena_mod

    real = arena_mod.play_game

    def fails_on_the_second(task: Any) -> Any:
        if task[0] == 1:
            raise ValueError("illegal decision code 1283")
        return real(task)

    monkeypatch.setattr(arena_mod, "play_game", fails_on_the_second)
    with pytest.raises(ValueError, match="1283"):
        main(["arena", "random", "random:", "-n", "4", "-j", "1", "--no-progress", "--game", "toy"])


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8, 1.5])
def test_ctrl_c_however_early_stops_within_a_second_or_so(delay: float, tmp_path: Path) -> None:
    """Ctrl-C while the command starts, loads the engine or searches: one line, status 130, at once
    (a second is the promise; the bound here allows for a loaded machine). The delay counts from
    the interpreter's first line of Python: a Ctrl-C during the interpreter's own start (its `site`
    import, which takes longer on a loaded machine) is Python's fatal error, before any of ours."""
    state = tmp_path / "state.json"
    state.write_text(json.dumps(engine_ext.new_game(players=2, seed=1).to_json()))
    started_r, started_w = os.pipe()
    start = (f"import os, runpy, sys; os.write({started_w}, b'.'); "
             f"sys.argv = ['kashgar', 'suggest', {str(state)!r}, '--time-ms', '60000']; "
             "runpy.run_module('kashgar_cli.main', run_name='__main__')")
    proc = subprocess.Popen([sys.executable, "-c", start], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, pass_fds=(started_w,),
                            preexec_fn=sigint_as_at_a_terminal)
    os.close(started_w)
    try:
        assert os.read(started_r, 1) == b".", proc.communicate(timeout=30)
        time.sleep(delay)
        t0 = time.monotonic()
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        os.close(started_r)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert err.decode() in ("kashgar suggest: interrupted\n", "kashgar: interrupted\n") and out == b""
    assert took < 5.0, took


def test_ctrl_c_while_the_command_loads_is_one_line_and_status_130() -> None:
    """SIGINT before `main` runs (the command's modules still loading, as on a loaded machine): no
    traceback, the same line and status as later; a program that imports the package keeps
    Python's own handling."""
    loading = ("import os, signal, sys, time; sys.argv = [{argv0!r}]; import kashgar_cli; "
               "os.kill(os.getpid(), signal.SIGINT); time.sleep(30)")
    cmd = subprocess.run([sys.executable, "-c", loading.format(argv0="/usr/local/bin/kashgar")],
                         capture_output=True, text=True, timeout=60, preexec_fn=sigint_as_at_a_terminal)
    assert (cmd.returncode, cmd.stderr) == (130, "kashgar: interrupted\n")
    other = subprocess.run([sys.executable, "-c", loading.format(argv0="my-program")],
                           capture_output=True, text=True, timeout=60, preexec_fn=sigint_as_at_a_terminal)
    assert other.returncode == -signal.SIGINT and "KeyboardInterrupt" in other.stderr


def test_train_without_its_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """scikit-learn is in the `train` extra, not the base install: `kashgar train` says which to install."""
    monkeypatch.setitem(sys.modules, "sklearn", None)  # as after `pip install -e .` alone
    code = main(["train", "--quiet"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err
    said = "kashgar train: error: kashgar train needs scikit-learn: pip install -e '.[train]'"
    assert err.strip().splitlines()[-1] == said


def test_a_ctrl_c_swallowed_by_the_code_it_lands_in_still_ends_the_command() -> None:
    """Code that catches every exception (a library's import, a finalizer) can swallow the
    KeyboardInterrupt of a Ctrl-C: the command still ends, one line and status 130, within
    `kashgar_cli.GRACE_S`; a program that imports the package keeps Python's own handling."""
    swallowed = ("import os, signal, sys, time; sys.argv = [{argv0!r}]; import kashgar_cli\n"
                 "try:\n    os.kill(os.getpid(), signal.SIGINT); time.sleep(1)\nexcept BaseException:\n    pass\n"
                 "time.sleep(30)")
    t0 = time.monotonic()
    cmd = subprocess.run([sys.executable, "-c", swallowed.format(argv0="/usr/local/bin/kashgar")],
                         capture_output=True, text=True, timeout=60, preexec_fn=sigint_as_at_a_terminal)
    took = time.monotonic() - t0
    assert (cmd.returncode, cmd.stderr) == (130, "kashgar: interrupted\n") and took < 20, took
    other = subprocess.run([sys.executable, "-c", swallowed.format(argv0="my-program").replace("30", "0.1")],
                           capture_output=True, text=True, timeout=60, preexec_fn=sigint_as_at_a_terminal)
    assert (other.returncode, other.stderr) == (0, "")  # swallowed, as Python lets it be
