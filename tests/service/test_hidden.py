"""What a player may not know stays hidden in the rules endpoints: a seat's private Special draw
(the Kraeuterfrau's "draw 2 Special, keep 1") is not named in another seat's events or legal
decisions, a view cannot be played or searched where it holds made-up cards, and a game dealt
without a seed cannot be guessed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask

import engine_ext
from service import create_app
from tests.builders import private_draw


@pytest.fixture(scope="module")
def app() -> Flask:
    return create_app({"TESTING": True, "log_level": "WARNING", "sync_max_iterations": 400})




def post(app: Flask, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    r = app.test_client().post(path, json=body)
    return r.status_code, r.get_json()


def special_moves(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "card" and "special deck" in (e["from"], e["to"])]


def test_another_seat_s_private_draw_is_not_named_in_events_or_legal(app: Flask) -> None:
    full, decision, drawer, other = private_draw()
    code, trusted = post(app, "/apply", {"state": full, "decision": decision})
    assert code == 200, trusted
    drawn = special_moves(trusted["events"])
    assert drawn and all(e["card"] for e in drawn)
    assert trusted["legal"] and not trusted["legal_hidden"]

    code, seen = post(app, "/apply", {"state": full, "decision": decision, "observer": other})
    assert code == 200, seen
    assert seen["state"]["pending"]["drawn"] == {"count": len(trusted["state"]["pending"]["drawn"])}
    assert [e["card"] for e in special_moves(seen["events"])] == [None] * len(drawn)
    assert seen["legal"] == [] and seen["legal_hidden"] is True
    # what the other seat may see is still named
    assert [e for e in seen["events"] if e not in special_moves(seen["events"])] == \
        [e for e in trusted["events"] if e not in drawn]

    code, own = post(app, "/apply", {"state": full, "decision": decision, "observer": drawer})
    assert code == 200 and own["legal"] == trusted["legal"] and not own["legal_hidden"]
    assert special_moves(own["events"]) == drawn


def test_legal_on_a_view_is_hidden_only_from_the_seat_that_did_not_see_the_draw(app: Flask) -> None:
    full, decision, drawer, other = private_draw()
    _, after = post(app, "/apply", {"state": full, "decision": decision})
    game = engine_ext.from_json(after["state"])
    code, hidden = post(app, "/legal", {"state": game.to_json(observer=other)})
    assert code == 200 and hidden["legal"] == [] and hidden["count"] == 0 and hidden["legal_hidden"] is True
    code, own = post(app, "/legal", {"state": game.to_json(observer=drawer)})
    assert code == 200 and own["legal"] == after["legal"] and own["legal_hidden"] is False


@pytest.mark.parametrize("path", ["/apply", "/suggest"])
def test_a_view_holding_made_up_cards_is_refused_with_the_field(app: Flask, path: str) -> None:
    full, decision, drawer, other = private_draw()
    _, after = post(app, "/apply", {"state": full, "decision": decision})
    keep = after["legal"][0]["text"]
    game = engine_ext.from_json(after["state"])
    body: dict[str, Any] = {"state": game.to_json(observer=other)}
    body.update({"decision": keep} if path == "/apply" else {"iterations": 20})
    code, err = post(app, path, body)
    assert code == 422 and err["error"] == "hidden_choice" and err["pointer"] == "/state/pending/drawn", err
    # the drawer's own view is fine
    body["state"] = game.to_json(observer=drawer)
    code, ok = post(app, path, body)
    assert code == 200, ok


def test_the_bots_api_and_kashgar_suggest_refuse_a_view_holding_made_up_cards(
        app: Flask, tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """The service's check lives in the bots API too: `kashgar suggest` answered "keep <a card the
    drawer does not hold>" on such a view, with exit 0."""
    from bots import suggest
    from kashgar_cli.main import main

    full, decision, drawer, other = private_draw()
    game = engine_ext.from_json(post(app, "/apply", {"state": full, "decision": decision})[1]["state"])
    view = game.to_json(observer=other)
    with pytest.raises(engine_ext.StateError) as err:
        suggest.analyse_state(view, iterations=20)
    assert err.value.pointer == "/pending/drawn"
    assert suggest.analyse_state(game.to_json(observer=drawer), iterations=20)["decision_text"]
    path = tmp_path / "view.json"
    path.write_text(json.dumps(view))
    assert main(["suggest", str(path), "--iterations", "20"]) == 2
    assert "/pending/drawn" in capsys.readouterr().err


def test_a_game_without_a_seed_is_dealt_at_random_and_a_seed_repeats_it(app: Flask) -> None:
    unseeded = [post(app, "/games", {"players": 2})[1]["state"] for _ in range(3)]
    assert len({str(s["rng"]) for s in unseeded}) == 3
    seeded = [post(app, "/games", {"players": 2, "seed": 5})[1]["state"] for _ in range(2)]
    assert seeded[0] == seeded[1]


def test_engine_events_hide_a_private_draw_from_other_seats(engine: Any) -> None:
    full, decision, drawer, other = private_draw()
    for observer, named in ((None, True), (drawer, True), (other, False)):
        game = engine.from_json(full)
        assert not game.hidden_from(other)
        events = game.apply(decision, observer=observer)
        cards = [e["card"] for e in events if e["event"] == "card" and e["to"] == "drawn"]
        assert cards and all(bool(c) == named for c in cards), (observer, events)
        assert game.hidden_from(other) and not game.hidden_from(drawer) and not game.hidden_from(None)


def test_which_card_is_kept_does_not_show_in_the_order_of_the_other_seat_s_events(app: Flask) -> None:
    """Events come in card order: the unnamed card put back stood before or after the named kept
    one, telling the other seat how the two sort (by kind)."""
    full, decision, drawer, other = private_draw()
    _, after = post(app, "/apply", {"state": full, "decision": decision})
    assert len(after["legal"]) >= 2
    shapes = set()
    for keep in after["legal"]:
        code, seen = post(app, "/apply", {"state": after["state"], "decision": keep["text"], "observer": other})
        assert code == 200, seen
        shapes.add(tuple((e["event"], str(e.get("from")), str(e.get("to")), e.get("card") is None)
                         for e in seen["events"] if e["event"] == "card"))
    assert len(shapes) == 1, shapes
