"""What a player may not know stays hidden in the rules endpoints: a seat's private Special draw
(the Kraeuterfrau's "draw 2 Special, keep 1") is not named in another seat's events or legal
decisions, a view cannot be played or searched where it holds made-up cards, and a game dealt
without a seed cannot be guessed."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

import engine_ext
from service import create_app


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app({"TESTING": True, "log_level": "WARNING", "sync_max_iterations": 400})


def seat1_about_to_draw_specials() -> dict[str, Any]:
    """Seat 1 to move, its Kraeuterfrau at the front: parting with it draws 2 Special cards."""
    d = dict(engine_ext.new_game(players=2, seed=1).to_json())
    d["turn_player"] = 1
    d["seats"][1]["caravans"][0] = ["kraeuterfrau", "patriarch", "stadtwache"]
    d["seats"][1]["caravans"][1] = ["patriarch", "prophet"]
    d["seats"][1]["caravans"][2] = ["patriarch", "schankmaid"]
    d["seats"][0]["caravans"][2] = ["patriarch", "aristokratin"]
    d["spare_patriarch"] = True
    return d


def post(app: Flask, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    r = app.test_client().post(path, json=body)
    return r.status_code, r.get_json()


def special_moves(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "card" and "special deck" in (e["from"], e["to"])]


def test_another_seat_s_private_draw_is_not_named_in_events_or_legal(app: Flask) -> None:
    full = seat1_about_to_draw_specials()
    code, trusted = post(app, "/apply", {"state": full, "decision": "c0:part"})
    assert code == 200, trusted
    drawn = special_moves(trusted["events"])
    assert len(drawn) == 2 and all(e["card"] for e in drawn)
    assert trusted["legal"] and not trusted["legal_hidden"]
    assert {x["text"] for x in trusted["legal"]} == {f"keep {e['card']}" for e in drawn}

    code, seen = post(app, "/apply", {"state": full, "decision": "c0:part", "observer": 0})
    assert code == 200, seen
    assert seen["state"]["pending"]["drawn"] == {"count": 2}
    assert [e["card"] for e in special_moves(seen["events"])] == [None, None]
    assert seen["legal"] == [] and seen["legal_hidden"] is True
    # what seat 0 may see is still named: the Kraeuterfrau leaving seat 1's caravan
    assert any(e["card"] == "kraeuterfrau" for e in seen["events"])

    code, drawer = post(app, "/apply", {"state": full, "decision": "c0:part", "observer": 1})
    assert code == 200 and drawer["legal"] == trusted["legal"] and not drawer["legal_hidden"]
    assert special_moves(drawer["events"]) == drawn


def test_legal_on_a_view_is_hidden_only_from_the_seat_that_did_not_see_the_draw(app: Flask) -> None:
    full = seat1_about_to_draw_specials()
    _, after = post(app, "/apply", {"state": full, "decision": "c0:part"})
    game = engine_ext.from_json(after["state"])
    code, other = post(app, "/legal", {"state": game.to_json(observer=0)})
    assert code == 200 and other["legal"] == [] and other["count"] == 0 and other["legal_hidden"] is True
    code, own = post(app, "/legal", {"state": game.to_json(observer=1)})
    assert code == 200 and own["legal"] == after["legal"] and own["legal_hidden"] is False


@pytest.mark.parametrize("path", ["/apply", "/suggest"])
def test_a_view_holding_made_up_cards_is_refused_with_the_field(app: Flask, path: str) -> None:
    full = seat1_about_to_draw_specials()
    _, after = post(app, "/apply", {"state": full, "decision": "c0:part"})
    keep = after["legal"][0]["text"]
    game = engine_ext.from_json(after["state"])
    body: dict[str, Any] = {"state": game.to_json(observer=0)}
    body.update({"decision": keep} if path == "/apply" else {"iterations": 20})
    code, err = post(app, path, body)
    assert code == 422 and err["error"] == "hidden_choice" and err["pointer"] == "/state/pending/drawn", err
    # the drawer's own view is fine
    body["state"] = game.to_json(observer=1)
    code, ok = post(app, path, body)
    assert code == 200, ok


def test_a_game_without_a_seed_is_dealt_at_random_and_a_seed_repeats_it(app: Flask) -> None:
    unseeded = [post(app, "/games", {"players": 2})[1]["state"] for _ in range(3)]
    assert len({str(s["rng"]) for s in unseeded}) == 3
    seeded = [post(app, "/games", {"players": 2, "seed": 5})[1]["state"] for _ in range(2)]
    assert seeded[0] == seeded[1]


def test_engine_events_hide_a_private_draw_from_other_seats(engine: Any) -> None:
    full = seat1_about_to_draw_specials()
    for observer, named in ((None, True), (1, True), (0, False)):
        game = engine.from_json(full)
        assert not game.hidden_from(0)
        events = game.apply("c0:part", observer=observer)
        cards = [e["card"] for e in events if e["event"] == "card" and e["to"] == "drawn"]
        assert len(cards) == 2 and all(bool(c) == named for c in cards), (observer, events)
        assert game.hidden_from(0) and not game.hidden_from(1) and not game.hidden_from(None)
