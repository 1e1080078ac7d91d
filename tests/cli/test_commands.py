"""`kashgar serve`, `kashgar worker`, `kashgar play` and `kashgar bench service`, for real."""

from __future__ import annotations

import argparse
import io
import json
import os
import stat
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from gunicorn.workers.gthread import ThreadWorker

from kashgar_cli import bench_service, bench_state, main, play
from lab.serving import Gunicorn, free_port, http_json


def test_serve_runs_gunicorn_with_cpu_bound_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    assert main.main(["serve", "--dry-run", "--port", "8123", "--workers", "3"]) == 0
    cmd = capsys.readouterr().out
    assert "gunicorn -c python:service.gunicorn_conf" in cmd  # gunicorn's script: a USR2 upgrade re-runs it
    assert "--bind 127.0.0.1:8123" in cmd and "--workers 3" in cmd
    from service.gunicorn_worker import DeadlineThreadWorker

    # loading the config sets up a server's environment (a job database, multi-process metrics):
    # not for the rest of this test process
    with mock.patch.dict(os.environ):
        from service import gunicorn_conf

    # gunicorn's threaded worker: threads read requests (a deadline on each), one search at a time in the app
    assert gunicorn_conf.worker_class == "service.gunicorn_worker.DeadlineThreadWorker"
    assert issubclass(DeadlineThreadWorker, ThreadWorker) and gunicorn_conf.threads > 1
    assert gunicorn_conf.workers == gunicorn_conf.cpu_count()
    assert gunicorn_conf.timeout > 20 and gunicorn_conf.wsgi_app == "service:create_app()"


def test_worker_needs_redis(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("KASHGAR_REDIS_URL", raising=False)
    assert main.main(["worker", "--burst"]) == 2
    assert "KASHGAR_REDIS_URL" in capsys.readouterr().err


def play_args(**kw: Any) -> argparse.Namespace:
    base = {"players": 2, "seat": 0, "level": "novice", "seed": 5, "url": None, "api_key": None, "auto": False,
            "max_decisions": 0}
    base.update(kw)
    return argparse.Namespace(**base)


def test_play_local_scripted() -> None:
    answers = iter(["?", "nonsense", "0", "0", "0", "q"])
    out = io.StringIO()
    rc = play.play(play_args(), play.LocalTable(), lambda prompt: next(answers), out)
    text = out.getvalue()
    assert rc == 0 and "hint:" in text and "not a legal decision" in text and "bye" in text
    hint = next(line for line in text.splitlines() if "hint:" in line)
    assert "%" in hint and ": " in hint.split("hint:")[1]  # the chance in percent, the move in words
    assert "seat 2 (novice)" in text  # the bot at the JSON's seat 1


def test_play_auto_stops() -> None:
    out = io.StringIO()
    assert play.play(play_args(auto=True, max_decisions=6, players=3), play.LocalTable(), input, out) == 0
    assert "stopped after 6 decisions" in out.getvalue()


def test_play_shows_another_seat_s_private_draw_unnamed() -> None:
    """`kashgar play` printed every event of the full state: the bots' Special draws and the cards
    they put back under, which the human's seat does not see."""
    import engine_ext
    from tests.builders import private_draw

    full, decision, drawer, other = private_draw()
    for seat, named in ((other, False), (drawer, True)):
        result = play.LocalTable().apply(full, decision, seat)
        drawn = [e["card"] for e in result["events"] if e["event"] == "card" and e["to"] == "drawn"]
        assert drawn and all(bool(c) == named for c in drawn), result["events"]
        assert result["state"].get("observer") is None  # the table plays on with the full state
        assert engine_ext.from_json(result["state"]).hidden_from(other) is True


def test_play_deals_at_random_without_a_seed_and_says_it_at_the_end() -> None:
    seeds: list[int] = []

    class Recording(play.LocalTable):
        def new(self, players: int, seed: int) -> dict[str, Any]:
            seeds.append(seed)
            return super().new(players, seed)

    for _ in range(2):
        out = io.StringIO()
        assert play.play(play_args(seed=None, auto=True, max_decisions=2), Recording(), input, out) == 0
    assert len(set(seeds)) == 2 and min(seeds) >= 0


def test_bench_state_reports_each_part_of_reading_a_state() -> None:
    report = bench_state.bench_state(0.05)
    assert report["documents"] == 24 and report["mean_bytes"] > 500
    assert set(report["ms_per_document"]) == {"schema check (compiled, as loaded)", "schema check (jsonschema, before)",
                                              "whole load (from_json)"}
    assert all(ms > 0 for ms in report["ms_per_document"].values())


@pytest.mark.slow
def test_bench_service_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser()
    bench_service.add_arguments(parser)
    args = parser.parse_args(
        ["--levels", "novice", "--duration", "0.6", "--positions", "3", "--workers", "1", "--json"]
    )
    assert bench_service.run(args) == 0
    report = json.loads(capsys.readouterr().out)
    r = report["results"][0]
    assert report["cores"] >= 1 and r["level"] == "novice" and r["errors"] == 0
    assert r["throughput_rps"] > 0 and r["p50_ms"] <= r["p99_ms"]
    # the three positions are a 2-, a 3- and a 4-player game; each split holds only those counts
    assert set(r["search_by_players"]) == {"2", "3", "4"}
    assert set(r["latency_by_players"]) == {"2", "3", "4"}
    assert all(v["count"] >= 1 and v["p50_search_ms"] <= v["p95_search_ms"] for v in r["search_by_players"].values())


@pytest.mark.slow
def test_bench_service_against_the_floor(capsys: pytest.CaptureFixture[str]) -> None:
    """`--floor`: the service and the minimal Flask app under the same gunicorn settings, the same
    bodies from one closed-loop client, in alternating rounds; both answer, and each level's report
    has both servers' requests/s, their ratio and the ideal of the level's search cost."""
    from lab.serving import FloorServer

    with FloorServer(workers=1) as other:  # stands for another build of the service (--compare)
        assert main.main(["bench", "service", "--floor", "--levels", "novice", "--rounds", "3",
                          "--round-seconds", "0.3", "--workers", "1", "--compare", other.url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["benchmark"] == "service-floor" and report["connections"] == 4 and report["rounds"] == 3
    assert report["body_bytes"] > 500 and report["limit_cores"] == 1
    assert [r["level"] for r in report["levels"]] == ["novice"]
    for r in report["levels"]:
        assert r["answered"]["ours"] > 0 and r["answered"]["floor"] > 0, r
        assert r["errors"] == {"ours": {}, "floor": {}, "compare": {}}, r
        assert r["answered"]["compare"] > 0 and r["compare_of_floor"] > 0
        assert r["answer_level"] == r["level"]  # the service's own answer, at the level asked
        assert len(r["ours_rps_per_round"]) == len(r["floor_rps_per_round"]) == len(r["of_floor_per_round"]) == 3
        assert len(r["compare_rps_per_round"]) == len(r["ours_over_compare_per_round"]) == 3
        assert r["of_floor"] == pytest.approx(r["ours_rps"] / r["floor_rps"], rel=0.01)
        # the ideal: one core's floor cost plus the level's search cost, per request
        ideal = 1 / (1 / r["floor_rps"] + r["search_core_ms"] / 1000)
        assert r["ideal_rps"] == pytest.approx(ideal, rel=0.01)
        assert r["of_ideal"] == pytest.approx(r["ours_rps"] / r["ideal_rps"], rel=0.01)


def test_the_floor_app_answers_like_the_service() -> None:
    """The floor parses the body and answers a JSON of a novice answer's size and shape."""
    from lab.floor_app import app

    body = {"state": {"players": 2}, "level": "novice", "seed": 3, "mode": "sync"}
    resp = app.test_client().post("/suggest", json=body)
    answer = resp.get_json()
    assert resp.status_code == 200 and 1200 <= len(resp.data) <= 2000
    assert answer["level"] == "novice" and answer["seed"] == 3 and answer["decision_text"] == "c1:b"
    assert {"alternatives", "line", "win_prob", "iterations", "description"} <= set(answer)


def test_the_floor_is_served_with_the_service_s_gunicorn_settings() -> None:
    from lab.serving import FloorServer
    from service.gunicorn_worker import KEEPALIVE_S, THREADS

    argv = FloorServer(workers=3, port=9).argv()
    settings = dict(zip(argv[3::2], argv[4::2], strict=False))
    assert settings["--workers"] == "3" and settings["--worker-class"] == "gthread"
    assert settings["--threads"] == str(THREADS) and settings["--keep-alive"] == str(KEEPALIVE_S)
    # the service's config reads the same values
    conf = (Path(__file__).resolve().parents[2] / "service" / "gunicorn_conf.py").read_text()
    assert "\nthreads = THREADS\n" in conf and "\nkeepalive = KEEPALIVE_S\n" in conf


def test_the_closed_loop_client_counts_answers_and_breaks() -> None:
    """The load generator of `--floor` against a server that answers 200, then 503, then closes."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    answers = [b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", b"HTTP/1.1 503 No\r\nContent-Length: 0\r\n\r\n"]

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            for k in range(3):
                data = b""
                while b"\r\n\r\n" not in data or not data.endswith(b"{}"):
                    data += conn.recv(4096)
                if k == 2:
                    listener.close()  # closed without an answer, and the next connection refused
                    return
                conn.sendall(answers[k])

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    got = bench_service.ClosedLoop(f"http://127.0.0.1:{port}", [b"{}"], connections=1).run(0.5)
    t.join(5)
    assert got["answered"] == 1 and got["sample"] == {}
    assert got["errors"]["503"] == 1 and got["errors"]["0"] == 2  # the break, and the refused connection


def test_bench_service_split_by_players() -> None:
    players = [2, 3, 2, 4]
    values = [(0, 10.0), (2, 30.0), (1, 50.0), (0, 20.0), (3, 7.0)]
    split = bench_service.by_players(players, values, "ms")
    assert split == {
        "2": {"count": 3, "mean_ms": 20.0, "p50_ms": 20.0, "p95_ms": 30.0},
        "3": {"count": 1, "mean_ms": 50.0, "p50_ms": 50.0, "p95_ms": 50.0},
        "4": {"count": 1, "mean_ms": 7.0, "p50_ms": 7.0, "p95_ms": 7.0},
    }
    # a player count with no value is left out, not reported as empty
    one = {"count": 1, "mean_ms": 1.0, "p50_ms": 1.0, "p95_ms": 1.0}
    assert bench_service.by_players([2, 3], [(0, 1.0)], "ms") == {"2": one}


class CostByPlayers(bench_service.Target):
    """A server whose search costs 10 ms per seat, and whose 4-player answers also come 30 ms late."""

    def __init__(self) -> None:
        super().__init__("http://127.0.0.1:1")
        self.posted: list[int] = []

    def post(self, path: str, body: bytes, timeout: float = 120.0) -> tuple[int, dict[str, Any]]:
        seats = int(json.loads(body)["players"])
        self.posted.append(seats)
        if seats == 4:
            time.sleep(0.03)
        return 200, {"elapsed_ms": 10.0 * seats, "iterations": 1}


def test_bench_level_splits_each_request_by_its_own_positions_players() -> None:
    target = CostByPlayers()
    players = [2, 3, 4, 2, 3]
    bodies = [json.dumps({"players": n, "k": k}).encode() for k, n in enumerate(players)]
    r = bench_service.bench_level(target, bodies, cores=1, workers=1, duration=0.6, load=0.8, players=players)
    assert r["errors"] == 0
    # each count's search time is exactly the one its positions cost: no request filed under another body
    for n, v in r["search_by_players"].items():
        assert v["mean_search_ms"] == v["p50_search_ms"] == v["p95_search_ms"] == 10.0 * int(n)
    assert set(r["search_by_players"]) == set(r["latency_by_players"]) == {"2", "3", "4"}
    # the open-loop phase sends every body once a round, so the counts follow the bodies' mix
    lat = r["latency_by_players"]
    total = sum(v["count"] for v in lat.values())
    assert total >= 10 and abs(lat["2"]["count"] - 2 * lat["4"]["count"]) <= 2
    # only the 4-player answers are late, and only their latencies show it
    assert lat["4"]["p50_ms"] >= 30.0 > lat["2"]["p50_ms"]
    assert bench_service.bench_level(target, bodies[:2], 1, 1, 0.2, 0.8)["search_by_players"] == {}


def test_client_and_remote_play(tmp_path: Any) -> None:
    from kashgar_client import JobTimeout, KashgarAPIError, KashgarClient

    with Gunicorn(
        env={"KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_SYNC_MAX_ITERATIONS": "100"}, workers=1, log_dir=str(tmp_path)
    ) as web:
        api = KashgarClient(web.url)
        assert api.healthz()["status"] == "ok" and api.readyz()["ready"]
        assert api.levels() and api.cards()["count"] > 0 and api.openapi()["openapi"].startswith("3.1")
        game = api.new_game(players=2, seed=4)
        assert game.state is not None
        legal = api.legal(game.state).legal
        nxt = api.apply(game.state, legal[0])
        assert nxt.decision is not None and nxt.decision.text == legal[0].text
        sync = api.suggest(game.state, iterations=60, seed=2, mode="sync")
        waited = api.suggest(game.state, iterations=60, seed=2, mode="async")
        assert waited.decision_text == sync.decision_text and waited.alternatives == sync.alternatives
        with pytest.raises(KashgarAPIError) as err:
            api.suggest(game.state, iterations=0)
        assert err.value.status == 422 and err.value.pointer == "/iterations"
        out = io.StringIO()
        assert play.play(play_args(url=web.url, auto=True, max_decisions=4), play.RemoteTable(web.url), input, out) == 0
        assert "seat 2 " in out.getvalue()  # the bot, by its seat in words
        # a job id is one path segment: "a?b" is not job "a"
        with pytest.raises(KashgarAPIError) as err:
            api.job("a?b")
        assert err.value.status == 404
        # wait gives up on a running job with its id, and the job goes on
        # (30 s: the one web worker also runs the job's thread, so on a busy machine its answers
        # can lag by seconds; a 3 s job had finished before the cancel came, a 409)
        with pytest.raises(JobTimeout) as slow:
            api.suggest(game.state, time_ms=30_000, mode="async", wait_timeout=0.3)
        assert api.job(slow.value.job_id).status in ("queued", "started")
        api.cancel(slow.value.job_id)


def test_the_client_names_a_server_it_cannot_reach() -> None:
    """Connection refused and a bad URL were bare urllib errors; now KashgarAPIError too."""
    from kashgar_client import KashgarAPIError, KashgarClient, KashgarUnreachable

    for url in (f"http://127.0.0.1:{free_port()}", "localhost:9"):
        with pytest.raises(KashgarUnreachable) as err:
            KashgarClient(url, timeout=2).healthz()
        assert isinstance(err.value, KashgarAPIError) and err.value.status == 0 and err.value.code == "unreachable"
        assert "unreachable" in str(err.value)


def test_play_refuses_what_it_cannot_play(capsys: pytest.CaptureFixture[str]) -> None:
    """A bad level or seed is refused at the start (the level failed on the first bot move, with
    a traceback); a server that cannot be reached is one line, not a traceback."""
    out = io.StringIO()
    assert play.play(play_args(level="bogus"), play.LocalTable(), input, out) == 2
    assert "unknown level 'bogus'" in out.getvalue() and "novice" in out.getvalue()
    out = io.StringIO()
    assert play.play(play_args(seed=-5), play.LocalTable(), input, out) == 2 and "--seed" in out.getvalue()
    assert main.main(["play", "--url", f"http://127.0.0.1:{free_port()}"]) == 2
    assert "unreachable" in capsys.readouterr().err


def test_play_takes_only_ascii_numbers() -> None:
    """'²' is a digit to str.isdigit but not to int(): it crashed the game."""
    answers = iter(["²", "①", "q"])
    out = io.StringIO()
    assert play.play(play_args(), play.LocalTable(), lambda prompt: next(answers), out) == 0
    assert out.getvalue().count("not a legal decision") == 2


def test_the_server_removes_its_temporary_directories_when_it_stops(tmp_path: Path) -> None:
    """Each `kashgar serve` made a metrics directory under TMPDIR and left it; the job database is
    in the data directory, kept for the next server. Nor does it make gunicorn's control socket,
    one path per user that two servers shared (one stopping removed the other's)."""
    tmp = tmp_path / "tmp"
    home = tmp_path / "home"
    data = tmp_path / "data"
    run = tmp_path / "run"  # where gunicorn puts the socket when XDG_RUNTIME_DIR is set, else under HOME
    for folder in (tmp, home, run):
        folder.mkdir()
    env = {"TMPDIR": str(tmp), "KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_JOBS_DB": "", "PROMETHEUS_MULTIPROC_DIR": "",
           "HOME": str(home), "XDG_RUNTIME_DIR": str(run), "KASHGAR_DATA_DIR": str(data)}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path)) as g:
        assert http_json("POST", g.url + "/games", {"players": 2, "seed": 1})[0] == 200
        assert sorted(p.name.split("-")[1] for p in tmp.iterdir()) == ["metrics"]
        deadline = time.monotonic() + 1.5  # the master opens the socket a moment after its workers boot
        while time.monotonic() < deadline and not any(home.iterdir()) and not any(run.iterdir()):
            time.sleep(0.1)
        assert list(home.iterdir()) == [] and list(run.iterdir()) == []
    assert list(tmp.iterdir()) == []
    store = data / f"jobs-127.0.0.1-{g.port}.sqlite"  # the server's own, named for its address
    assert store.exists() and stat.S_IMODE(store.stat().st_mode) == 0o600


def test_the_job_store_defaults_to_the_user_s_data_directory(tmp_path: Path) -> None:
    """Without KASHGAR_DATA_DIR nor KASHGAR_JOBS_DB, jobs live under $XDG_DATA_HOME/kashgar, in a
    file of the server's address, the directory and the file its owner's only."""
    xdg = tmp_path / "xdg"
    env = {"KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_JOBS_DB": "", "KASHGAR_DATA_DIR": "", "XDG_DATA_HOME": str(xdg)}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path)) as g:
        assert http_json("GET", g.url + "/healthz")[0] == 200
    store = xdg / "kashgar" / f"jobs-127.0.0.1-{g.port}.sqlite"
    assert store.exists() and stat.S_IMODE(store.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.parent.stat().st_mode) == 0o700


def test_a_server_starts_its_metrics_afresh(tmp_path: Path) -> None:
    """Metrics files of an earlier run in a given PROMETHEUS_MULTIPROC_DIR (a container restarted
    in place) were summed into the new server's counters."""
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    (metrics / "counter_99999.db").write_bytes(b"stale")
    env = {"PROMETHEUS_MULTIPROC_DIR": str(metrics), "KASHGAR_LOG_LEVEL": "WARNING", "KASHGAR_JOBS_DB": ""}
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path)) as g:
        assert not (metrics / "counter_99999.db").exists()
        status, text = http_json("GET", g.url + "/metrics")
        assert status == 200 and "kashgar_http_request" in text
