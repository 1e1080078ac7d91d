"""`kashgar play` in words: the contracts on display, what each decision does, what happened."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator

import pytest

import engine_ext
from engine_ext import words as W
from kashgar_cli import play


def test_the_terminal_game_shows_contracts_and_what_each_decision_does() -> None:
    answers = iter(["0", "0", "q"])
    out = io.StringIO()
    args = play.argparse.Namespace(players=2, seat=0, level="novice", seed=5, url=None, auto=False,
                                   max_decisions=0)
    assert play.play(args, play.LocalTable(), lambda prompt: next(answers), out) == 0
    text = out.getvalue()
    state = engine_ext.new_game(players=2, seed=5).to_json()
    for number in state["display"]:
        assert W.contract_text(number) in text
    assert "c0:a" in text and "Patriarch, caravan 1: draw 2 Standard cards and keep one" in text
    assert "caravan 1 (c0): Patriarch < " in text and re.search(r"=== turn [1-9]\d*  \(you to play\) ===", text)
    assert "{'event'" not in text


def _args(**kw: object) -> play.argparse.Namespace:
    base: dict[str, object] = {"players": 3, "seat": 0, "level": "novice", "seed": 8, "url": None, "auto": False,
                               "max_decisions": 0}
    base.update(kw)
    return play.argparse.Namespace(**base)


def test_play_shows_every_seat_s_vp_each_turn_and_the_bots_moves_in_words() -> None:
    out = io.StringIO()
    assert play.play(_args(auto=True, max_decisions=25), play.LocalTable(), input, out) == 0
    text = out.getvalue()
    turns = [line for line in text.splitlines() if line.startswith("-- turn ")]
    # the bots are named by their seats, counted from 1 (the JSON's seats 1 and 2), and turns too
    assert turns[0].startswith("-- turn 1: ")
    assert len(turns) >= 5 and all(re.search(r"VP: you \d+, seat 2 \d+, seat 3 \d+$", t) for t in turns)
    bot_lines = [line for line in text.splitlines() if line.startswith(("seat 2 (novice): ", "seat 3 (novice): "))]
    assert bot_lines
    for line in bot_lines:
        said = line.split("): ", 1)[1]
        assert not re.search(r"\bc[0-9]:|^keep [a-z]+$|^fulfil \d+$", said), line
    assert "(the deal's seed was 8: play it again with --seed 8)" in text


def test_a_decision_that_names_a_card_is_listed_in_english_only() -> None:
    """A keep's code names the card by its slug ("keep bauer"): the list shows its number and its
    words only; the code of any other decision stands beside its words."""
    legal = [{"text": "keep bauer", "decision": {"kind": "keep", "card": "bauer"}},
             {"text": "c0:a", "decision": {"kind": "select", "caravan": 0, "option": "a"}}]
    out = io.StringIO()
    said = W.words()
    text = play.choose(legal, lambda prompt: "0", out, lambda: "", lambda d: said.decision(d, {}),
                       lambda d: said.code_shown(d["decision"]))
    assert text == "keep bauer"  # what is played is the code
    listed = out.getvalue().splitlines()
    assert listed[0].startswith("   0.  ") and "bauer" not in listed[0] and "keep Farmer (" in listed[0]
    assert listed[1].startswith("   1. c0:a ")


def test_quitting_says_the_seed() -> None:
    for answers in (iter(["q"]), iter([])):
        out = io.StringIO()

        def ask(prompt: str, it: Iterator[str] = answers) -> str:
            for answer in it:
                return answer
            raise EOFError  # as input() does when the terminal is closed

        rc = play.play(_args(seed=77, players=2), play.LocalTable(), ask, out)
        assert rc == 0 and "bye (the deal's seed was 77: play it again with --seed 77)" in out.getvalue()


def test_a_bot_s_unseen_choice_is_not_named() -> None:
    from tests.builders import private_draw

    full, decision, drawer, other = private_draw()
    after = engine_ext.from_json(full)
    after.apply(decision)
    assert play.unseen_choice(after.to_json(), other) and not play.unseen_choice(after.to_json(), drawer)


def test_play_through_a_keyed_server_with_the_key_from_the_option_or_the_environment(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from kashgar_cli.main import main
    from tests.service_helpers import serve_app

    monkeypatch.delenv("KASHGAR_API_KEY", raising=False)
    argv = ["play", "--auto", "--seed", "2", "--level", "novice", "--max-decisions", "3"]
    with serve_app({"api_keys": "play-key"}) as url:
        assert main([*argv, "--url", url]) == 2
        assert "401 unauthorized" in capsys.readouterr().err
        assert main([*argv, "--url", url, "--api-key", "play-key"]) == 0
        assert "stopped after 3 decisions" in capsys.readouterr().out
        monkeypatch.setenv("KASHGAR_API_KEY", "play-key")
        assert main([*argv, "--url", url]) == 0
        assert "stopped after 3 decisions" in capsys.readouterr().out
        assert main([*argv, "--url", url, "--api-key", "wrong"]) == 2
        assert "403 forbidden" in capsys.readouterr().err


def test_a_game_without_a_seed_draws_one_exact_in_javascript(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `--seed` the deal's seed is drawn below 2**53, as the service draws it (the one
    `engine_ext.random_seed`): the record `--record` writes names its deal exactly when a browser
    or any reader holding JSON numbers as doubles loads it back."""
    assert engine_ext.DRAWN_SEEDS == 2**53
    drawn: list[int] = []

    def highest(n: int) -> int:  # the largest seed the draw can give
        drawn.append(n)
        return n - 1

    monkeypatch.setattr("secrets.randbelow", highest)
    out = io.StringIO()
    assert play.play(_args(seed=None, players=2), play.LocalTable(), lambda prompt: "q", out) == 0
    seed = int(re.findall(r"the deal's seed was (\d+)", out.getvalue())[-1])
    assert drawn == [2**53] and seed == 2**53 - 1 and float(seed) == seed


def test_bots_at_an_elo_play_as_the_service_draws_their_levels(tmp_path: object,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """`--elo`: each bot decision searched by one of the two levels around it, in-process and
    through a server alike; the record names the bots' level `elo:N`, as the table does."""
    import json
    from pathlib import Path

    from kashgar_cli.main import main
    from tests.service_helpers import serve_app

    record = Path(str(tmp_path)) / "game.json"
    argv = ["play", "--auto", "--seed", "4", "--elo", "530", "--max-decisions", "12"]
    assert main([*argv, "--record", str(record)]) == 0
    here = capsys.readouterr().out
    assert "seat 2 (elo:530): " in here and "stopped after 12 decisions" in here
    assert [s["level"] for s in json.loads(record.read_text())["seats"]] == ["random", "elo:530"]
    with serve_app({}) as url:
        assert main([*argv, "--url", url]) == 0
        # the same game: the same levels drawn, the same answers (the record's line aside)
        there = capsys.readouterr().out
        assert "stopped after 12 decisions" in there and here.startswith(there)
    for extra, said in ((["--elo", "5000"], "--elo: want 0.."), (["--elo", "530", "--level", "club"], "not both")):
        assert main(["play", "--auto", "--seed", "4", *extra]) == 2
        assert said in capsys.readouterr().err
