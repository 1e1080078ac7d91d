"""`kashgar engine`, driven as a subprocess the way a program in another language embeds it: JSON
lines in, one answer line each with the request's id, errors as the API's error bodies, a bad line
answered and read past, end of input ends it with status 0; its answers are the HTTP API's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from flask.testing import FlaskClient

from service import create_app

ENGINE = [sys.executable, "-m", "kashgar_cli.main", "engine"]
#: What the HTTP answer adds or times on its own.
NOT_COMPARED = {"id", "op", "status", "request_id", "mode", "elapsed_ms"}


class EngineProcess:
    """`kashgar engine` with a pipe each way; `ask` writes one line and reads one answer."""

    def __init__(self, extra_env: dict[str, str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("KASHGAR_") or k == "KASHGAR_REQUIRE_COMPILED"}
        env.update(extra_env or {})
        self.proc = subprocess.Popen(ENGINE, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)

    def ask_line(self, line: str) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        out = self.proc.stdout.readline()
        assert out.endswith("\n"), (out, self.proc.stderr.read() if self.proc.poll() is not None else "")
        answer: dict[str, Any] = json.loads(out)
        return answer

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.ask_line(json.dumps(request))

    def close(self) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=60)  # end of input: the engine ends
        return self.proc.returncode, out, err


@pytest.fixture(scope="module")
def eng() -> Iterator[EngineProcess]:
    e = EngineProcess()
    yield e
    if e.proc.poll() is None:
        e.proc.kill()
        e.proc.wait()


@pytest.fixture(scope="module")
def http() -> FlaskClient:
    return create_app({"TESTING": True, "log_level": "WARNING"}).test_client()


def same(engine_answer: dict[str, Any], http_answer: dict[str, Any]) -> bool:
    def strip(d: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in d.items() if k not in NOT_COMPARED}
    return strip(engine_answer) == strip(http_answer)


def test_a_game_played_through_the_engine_with_ids_and_bad_lines_read_past(eng: EngineProcess) -> None:
    game = eng.ask({"id": "g1", "op": "games", "players": 2, "seed": 4})
    assert game["id"] == "g1" and game["op"] == "games" and game["status"] == 200 and game["legal"]
    state = game["state"]
    bad = eng.ask_line('{"id": 7, "op": "apply", "state": ')  # cut short
    assert bad["status"] == 400 and bad["error"] == "malformed_json" and bad["id"] is None
    wrong = eng.ask({"id": 8, "op": "apply", "state": state, "decision": "c9:z"})
    assert wrong["id"] == 8 and wrong["status"] == 422 and wrong["pointer"] == "/decision"
    unknown = eng.ask({"id": 9, "op": "teleport"})
    assert unknown["status"] == 422 and unknown["error"] == "unknown_op" and unknown["pointer"] == "/op"
    field = eng.ask({"id": 10, "op": "legal", "state": state, "observer": "me"})
    assert field["status"] == 422 and field["pointer"] == "/observer"
    for step in range(6):
        legal = eng.ask({"id": f"l{step}", "op": "legal", "state": state})
        assert legal["status"] == 200 and legal["count"] == len(legal["legal"]) > 0
        answer = eng.ask({"id": f"s{step}", "op": "suggest", "state": state, "iterations": 40, "seed": step})
        assert answer["id"] == f"s{step}" and answer["status"] == 200, answer
        assert answer["decision_text"] in {d["text"] for d in legal["legal"]} and answer["iterations"] == 40
        applied = eng.ask({"id": f"a{step}", "op": "apply", "state": state, "decision": answer["decision_text"]})
        assert applied["status"] == 200 and applied["decision"]["text"] == answer["decision_text"]
        state = applied["state"]
    levels = eng.ask({"id": "lv", "op": "levels"})
    assert levels["status"] == 200 and "novice" in {lv["name"] for lv in levels["levels"]}


def test_end_of_input_ends_the_engine_with_status_0() -> None:
    e = EngineProcess()
    assert e.ask({"id": 1, "op": "cards"})["count"] > 0
    assert e.proc.stdin is not None
    e.proc.stdin.write('{"id": 2, "op": "games", "seed": 1}\n')
    code, out, err = e.close()
    assert code == 0 and [json.loads(line)["id"] for line in out.splitlines()] == [2]
    assert "Traceback" not in err


def test_a_blank_line_is_answered_with_an_error_so_every_line_gets_one_answer(eng: EngineProcess) -> None:
    for blank in ("", "   ", "\t"):
        answer = eng.ask_line(blank)
        assert answer["status"] == 400 and answer["error"] == "empty_body" and answer["id"] is None, answer
    assert eng.ask({"id": "after", "op": "levels"})["id"] == "after"  # in step: the next answer is the next line's


@pytest.mark.parametrize("ident", ["1e400", "-1e400", "[1]", "{}", "true"])
def test_an_id_that_cannot_be_sent_back_is_answered_422_with_id_null(eng: EngineProcess, ident: str) -> None:
    answer = eng.ask_line('{"id": ' + ident + ', "op": "games", "seed": 1}')
    assert answer["status"] == 422 and answer["pointer"] == "/id" and answer["id"] is None, answer
    assert eng.ask({"id": 1e300, "op": "levels"})["id"] == 1e300  # a finite number is sent back


def test_the_engine_reads_every_line_to_the_end_whatever_the_lines() -> None:
    """A run of hostile lines, then a real request: one answer a line, the last one the game, status 0."""
    lines = ['{"id": 1e400, "op": "games"}', "", '{"id": 1e400, "op": "levels"}', "not json",
             '{"id": 2, "op": "games", "players": 1e400}', '{"id": -1e999, "op": "cards", "x": 1}', "[]", "\u00ff",
             '{"id": "last", "op": "games", "seed": 2}']
    e = EngineProcess()
    out, err = e.proc.communicate("\n".join(lines) + "\n", timeout=60)
    answers = [json.loads(line) for line in out.splitlines()]
    assert e.proc.returncode == 0 and len(answers) == len(lines), (out, err)
    assert [a["status"] for a in answers[:-1]] == [422, 400, 422, 400, 422, 422, 422, 400] and "Traceback" not in err
    assert answers[-1]["id"] == "last" and answers[-1]["status"] == 200


def test_a_line_over_the_body_limit_is_answered_413_and_read_past() -> None:
    e = EngineProcess({"KASHGAR_MAX_BODY_BYTES": "2000"})
    big = e.ask({"id": 1, "op": "games", "variant": ["x" * 50] * 100})
    assert big["status"] == 413 and big["error"] == "body_too_large" and big["id"] is None
    assert e.ask({"id": 2, "op": "games", "seed": 3})["status"] == 200  # the next line is read as usual
    assert e.close()[0] == 0


def test_the_engine_answers_as_the_http_api(eng: EngineProcess, http: FlaskClient) -> None:
    """The same requests, over HTTP and through the engine: the same answers, a seeded search's
    included, and the same error bodies (but the request id an HTTP answer adds)."""
    body = {"players": 3, "seed": 11, "observer": 1}
    game = http.post("/games", json=body).get_json()
    assert same(eng.ask({"id": 1, "op": "games", **body}), game)
    view = game["state"]
    full = http.post("/games", json={"players": 3, "seed": 11}).get_json()["state"]
    for path, req in (("/legal", {"state": view}), ("/legal", {"state": full, "observer": 2}),
                      ("/apply", {"state": full, "decision": game["legal"][0]["text"]}),
                      ("/suggest", {"state": full, "iterations": 300, "seed": 5, "mode": "sync"}),
                      ("/suggest", {"state": full, "level": "casual", "seed": 5}),
                      ("/suggest", {"state": full, "iterations": 300, "seed": 5, "parallel": 2}),
                      ("/suggest", {"state": full, "iterations": 0}),
                      ("/suggest", {"state": full, "level": "bogus"}),
                      ("/suggest", {"state": full, "elo": 530, "seed": 5}),
                      ("/suggest", {"state": full, "elo": 5000}),
                      ("/suggest", {"state": full, "elo": 530, "level": "club"}),
                      ("/apply", {"state": {**full, "turn": "x"}, "decision": "c0:a"}),
                      ("/games", {"players": 9})):
        over_http = http.post(path, json=req)
        through = eng.ask({"id": path, "op": path.strip("/"), **req})
        assert through["status"] == over_http.status_code, (path, req, through)
        assert same(through, over_http.get_json()), (path, req)
        if path == "/suggest" and through["status"] == 200:
            assert through["alternatives"] and through["seed"] == 5
    assert same(eng.ask({"id": "c", "op": "cards"}), http.get("/cards").get_json())
    levels = eng.ask({"id": "lv", "op": "levels"})
    served = http.get("/levels").get_json()
    assert levels["default"] == served["default"]
    assert levels["levels"] == [{k: v for k, v in lv.items() if k not in ("asynchronous", "parts")}
                                for lv in served["levels"]]
