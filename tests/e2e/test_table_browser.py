"""The web table in a real browser: headless Chromium (Debian's `chromium`, driven by Playwright)
against a real `kashgar serve` (gunicorn, two web processes). A whole game against `novice` by
clicks and keys at phone width; nothing the page receives (responses, DOM, script state) holds
the deck order, the seed or a bot's unseen cards, and a changed token is refused; a hint; a game
of the form's defaults (a random seed) reviewed, downloaded, loaded back and reviewed again, as
`kashgar review` reviews it; a review's marks bring their position into view; the API key asked
for only by a server that needs one.

`KASHGAR_SCREENSHOT_DIR=docs/img` keeps the screenshots of the start and the end of a game there
(`scripts/screenshots`)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet

from lab.serving import Gunicorn, http_json

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KEY = Fernet.generate_key().decode("ascii")
ENV = {"KASHGAR_TABLE_PAUSE_MS": "0", "KASHGAR_LOG_LEVEL": "WARNING"}
MAX_DECISIONS = 600


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    """A server with KASHGAR_TABLE_KEY set (the test opens its tokens)."""
    with Gunicorn(env=dict(ENV, KASHGAR_TABLE_KEY=KEY), workers=2,
                  log_dir=str(tmp_path_factory.mktemp("table-keyed"))) as server:
        yield server


@pytest.fixture(scope="module")
def unkeyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    """A server without a key: its master makes one for both web processes."""
    env = {k: v for k, v in ENV.items()}
    with Gunicorn(env=env, workers=2, log_dir=str(tmp_path_factory.mktemp("table-unkeyed"))) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def start(page: Any, url: str, seed: str = "", level: str = "novice") -> None:
    page.goto(url + "/")
    page.wait_for_selector("#level-0 option[value='novice']", state="attached")
    page.select_option("#level-0", level)
    if seed:
        page.fill("#seed", seed)
    page.click("#start")
    wait_turn(page)


def wait_turn(page: Any) -> None:
    """Until the person is asked (an enabled decision) or the game is over."""
    page.wait_for_function("() => !document.getElementById('result').hidden || "
                           "[...document.querySelectorAll('button.decision')].some(b => !b.disabled)")


def over(page: Any) -> bool:
    return bool(page.is_visible("#result"))


def shot(page: Any, name: str, tmp: Path) -> None:
    where = Path(os.environ.get("KASHGAR_SCREENSHOT_DIR") or tmp)
    where.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(where / name), full_page=True)
    assert (where / name).stat().st_size > 10_000


def play_to_the_end(page: Any, rng: random.Random) -> None:
    """The person's decisions, each a random one of those offered, until the game is over."""
    for _ in range(MAX_DECISIONS):
        if over(page):
            return
        buttons = page.query_selector_all("button.decision")
        buttons[rng.randrange(len(buttons))].click()
        wait_turn(page)
    raise AssertionError(f"no game over after {MAX_DECISIONS} decisions")


def review_at_the_table(page: Any, level: str) -> dict[str, Any]:
    """The review the page shows, judged by `level` (the figures the page holds, but its time)."""
    page.select_option("#review-level", level)
    page.click("#review-start")
    page.wait_for_selector("#review-svg polyline", timeout=300_000)
    review = page.evaluate("window.kashgarTable.snapshot()")["review"]
    return {k: v for k, v in review.items() if k != "elapsed_ms"}


def test_a_whole_game_against_novice_at_phone_width(browser: Any, unkeyed: Gunicorn) -> None:
    page = browser.new_page(viewport={"width": 380, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    start(page, unkeyed.url, seed="5")
    assert page.inner_text("#ask").startswith("Your turn")
    assert "Patriarch" in page.inner_text("#you") and "VP" in page.inner_text("#display")
    rng = random.Random(5)
    for n in range(MAX_DECISIONS):
        if over(page):
            break
        assert page.evaluate("document.documentElement.scrollWidth") <= 381  # nothing wider than the phone
        if n % 2:  # the keyboard: the first decision has the focus, Enter plays it
            assert page.evaluate("document.activeElement.classList.contains('decision')")
            page.keyboard.press("Enter")
        else:
            buttons = page.query_selector_all("button.decision")
            buttons[rng.randrange(len(buttons))].click()
        wait_turn(page)
    assert over(page), "no game over after {MAX_DECISIONS} decisions"
    result = page.inner_text("#result")
    assert "Seed: 5" in result and re.search(r"you: \d+ VP, novice \(seat 2\): \d+ VP", result), result
    assert page.inner_text("#ask") == "Game over"
    log = page.inner_text("#log")
    assert "novice (seat 2):" in log and "you:" in log  # the moves of both, in words
    # the record of the game downloads, and loads back to the same end
    with page.expect_download() as got:
        page.click("#download")
    record = json.loads(Path(got.value.path()).read_text())
    assert record["seed"] == 5 and record["seats"][1]["level"] == "novice"
    page.click("#again")
    page.set_input_files("#load-record", got.value.path())
    page.wait_for_selector("#result", state="visible")
    assert page.inner_text("#result") == result
    assert errors == []


RATING = re.compile(r"^Your rating (-?\d+) \[(-?\d+), (-?\d+)\] after (\d+) games?$")


def rating_shown(page: Any, selector: str) -> str:
    """The rating line once the page shows one."""
    page.wait_for_function("(s) => /^Your rating/.test((document.querySelector(s) || {}).textContent || '')",
                           arg=selector)
    return str(page.inner_text(selector)).strip()


def test_a_finished_game_rates_the_person_the_rating_survives_a_reload_and_picks_an_opponent(
        browser: Any, unkeyed: Gunicorn, tmp_path: Path) -> None:
    """The setup form shows each level's Elo, then "Elo..." (a bot at any Elo of the ladder); a game
    played to its end is kept in the browser (localStorage) and rated by POST /rating ("Your rating
    640 [480, 800] after 1 game"), in the result and on the setup form, after a reload too;
    "Opponents at my rating" sets every bot to play at that Elo ("Elo..." and the rating, within
    the ladder's range); a game against them is played, kept as `elo:N` and rated with the first;
    "Forget my games" forgets them."""
    page = browser.new_page(viewport={"width": 380, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(unkeyed.url + "/")
    page.wait_for_selector("#level-0 option[value='novice']", state="attached")
    status, served = http_json("GET", unkeyed.url + "/levels")
    assert status == 200
    labels = page.eval_on_selector_all("#level-0 option", "os => os.map(o => o.textContent)")
    assert labels == [f"{lv['name']} (Elo {round(lv['elo'])})" for lv in served["levels"]] + ["Elo\u2026"]
    assert labels[0] == "novice (Elo 0)" and labels[-2] == "master (Elo 1033)"
    assert page.is_hidden("#level-0-elo")  # the number only with "Elo..."
    assert page.eval_on_selector("#level-0-elo", "e => [e.min, e.max, e.value]") == [
        f"{served['elo']['min']:g}", f"{served['elo']['max']:g}",
        f"{round((served['elo']['min'] + served['elo']['max']) / 2)}"]  # the ladder's middle
    assert page.is_hidden("#rating")  # no game yet
    start(page, unkeyed.url, seed="9")
    play_to_the_end(page, random.Random(9))
    line = rating_shown(page, "#result-rating")
    assert RATING.match(line) and line.endswith("after 1 game"), line
    assert page.is_visible("#result-rating") and line not in page.inner_text("#result")
    assert page.evaluate("document.documentElement.scrollWidth") <= 381  # nothing wider than the phone
    games = page.evaluate("JSON.parse(localStorage.getItem('kashgarTableGames'))")
    assert len(games) == 1 and games[0]["levels"] == [None, "novice"] and games[0]["seed"] == 9
    result = page.inner_text("#result")
    assert all(f": {v} VP" in result for v in games[0]["vp"])
    status, rated = http_json("POST", unkeyed.url + "/rating", {"results": [
        {"levels": g["levels"], "vp": g["vp"], "winner": g["winner"]} for g in games]})
    assert status == 200 and line == f"Your rating {rated['elo']} [{rated['interval'][0]}, " \
                                      f"{rated['interval'][1]}] after 1 game"
    # a reload: the setup form rates the same game, and offers an opponent at that rating
    page.reload()
    assert rating_shown(page, "#setup-rating") == line
    page.select_option("#bots", "2")
    elo = f"{min(served['elo']['max'], max(served['elo']['min'], rated['elo'])):g}"  # the rating, on the ladder
    assert page.inner_text("#at-my-rating") == f"Opponents at my rating: Elo {elo}"
    assert page.evaluate("document.documentElement.scrollWidth") <= 381
    page.click("#at-my-rating")
    chosen = page.eval_on_selector_all("#bot-levels select", "ss => ss.map(s => s.value)")
    assert chosen == ["elo:"] * 2  # "Elo..."
    assert page.eval_on_selector_all("#bot-levels input.bot-elo", "es => es.map(e => e.value)") == [elo] * 2
    assert page.is_visible("#level-0-elo") and page.is_visible("#level-1-elo")
    assert page.inner_text("#level-0-about").startswith(f"Any strength from Elo {served['elo']['min']:g} to ")
    assert page.evaluate("document.documentElement.scrollWidth") <= 381
    shot(page, "table-rating.png", tmp_path)
    page.select_option("#bots", "1")  # a bot fewer: the other keeps its choice
    assert page.eval_on_selector("#level-0", "s => s.value") == "elo:" and page.input_value("#level-0-elo") == elo
    page.select_option("#bots", "2")
    page.select_option("#level-1", "novice")
    assert page.is_hidden("#level-1-elo")
    page.click("#at-my-rating")
    # a game against them: the bots at that Elo play, their seats named by it
    page.fill("#seed", "10")
    page.click("#start")
    wait_turn(page)
    body = page.evaluate("window.kashgarTable.snapshot()")["body"]
    assert body["levels"] == [None, f"elo:{elo}", f"elo:{elo}"]
    assert body["names"] == ["you", f"Elo {elo} (seat 2)", f"Elo {elo} (seat 3)"]
    page.query_selector_all("button.decision")[0].click()
    wait_turn(page)
    assert f"Elo {elo} (seat 2):" in page.inner_text("#log") and f"Elo {elo} (seat 3):" in page.inner_text("#log")
    play_to_the_end(page, random.Random(10))
    assert rating_shown(page, "#result-rating").endswith("after 2 games")
    games = page.evaluate("JSON.parse(localStorage.getItem('kashgarTableGames'))")
    assert len(games) == 2 and games[1]["levels"] == [None, f"elo:{elo}", f"elo:{elo}"] and games[1]["seed"] == 10
    status, both = http_json("POST", unkeyed.url + "/rating", {"results": [
        {"levels": g["levels"], "vp": g["vp"], "winner": g["winner"]} for g in games]})
    assert status == 200 and rating_shown(page, "#result-rating").startswith(f"Your rating {both['elo']} [")
    # more games kept before (another tab, another day): rated together
    page.evaluate("""() => {
        const games = JSON.parse(localStorage.getItem('kashgarTableGames'));
        for (const vp of [[25, 20], [18, 25]]) games.push({levels: [null, 'club'], vp, winner: vp[0] > vp[1] ? 0 : 1});
        games.push({levels: [null, 'elo:300'], vp: [25, 3], winner: 0});
        games.push({levels: [null, 'no-such-level'], vp: [25, 3], winner: 0});  // not on this ladder: left out
        games.push({levels: [null, 'elo:strong'], vp: [25, 3], winner: 0});  // no Elo: left out
        localStorage.setItem('kashgarTableGames', JSON.stringify(games));
    }""")
    page.reload()
    assert rating_shown(page, "#setup-rating").endswith("after 5 games")
    page.click("#forget-games")
    assert page.is_hidden("#rating")
    page.reload()
    page.wait_for_selector("#level-0 option[value='novice']", state="attached")
    assert page.is_hidden("#rating") and page.evaluate("localStorage.getItem('kashgarTableGames')") is None
    assert not errors, errors


def _secrets(token: str) -> list[str]:
    """What the person may not see of the game a token holds: each deck's order (its first cards,
    as JSON with either separator), the seed of the deal and of the shuffles."""
    inside = json.loads(zlib.decompress(Fernet(KEY.encode()).decrypt(token.encode())))
    state = inside["state"]
    out = [str(inside["seed"]), str(state["rng"])]
    for deck in state["decks"].values():
        cards = deck if isinstance(deck, list) else []
        if len(cards) >= 4:
            head = [c for c in cards[:6]]
            out += [json.dumps(head)[1:-1], json.dumps(head, separators=(",", ":"))[1:-1]]
    return out


def _play_checking_secrets(page: Any, bodies: list[dict[str, Any]], rng: random.Random) -> int:
    """A whole game by random clicks, checking after each that nothing received holds a secret of
    the token; how many bot steps chose among cards the person did not see."""
    seen = 0
    hidden_steps = 0
    for _ in range(MAX_DECISIONS):
        if over(page):
            break
        secrets = _secrets(bodies[-1]["token"])
        received = [json.dumps({k: v for k, v in b.items() if k != "token"}) for b in bodies[seen:]]
        snapshot = page.evaluate("JSON.stringify(window.kashgarTable.snapshot())")
        received += [page.content(), snapshot.replace(bodies[-1]["token"], "")]
        for text in received:
            for secret in secrets:
                assert secret not in text
        for b in bodies[seen:]:
            assert "rng" not in b["view"] and b["view"]["observer"] == 0
            assert all(isinstance(d, dict) and "count" in d for d in b["view"]["decks"].values())
            for step in b["steps"]:
                if step["seat"] != 0 and "text" not in step:
                    hidden_steps += 1
        seen = len(bodies)
        buttons = page.query_selector_all("button.decision")
        buttons[rng.randrange(len(buttons))].click()
        wait_turn(page)
    assert over(page)
    return hidden_steps


def test_the_page_never_receives_what_the_person_may_not_know(browser: Any, keyed: Gunicorn, unkeyed: Gunicorn,
                                                             tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    bodies: list[dict[str, Any]] = []

    def keep(resp: Any) -> None:
        if "/table/" in resp.url and resp.request.method == "POST":
            bodies.append(resp.json())

    page.on("response", keep)
    rng = random.Random(1)
    hidden_steps = 0
    for game in range(3):  # a random deal may give the bot no hidden choice: another game then
        bodies.clear()
        start(page, keyed.url)  # a random seed: the deal cannot be found from it
        if game == 0:
            shot(page, "table-start.png", tmp_path)
        hidden_steps += _play_checking_secrets(page, bodies, rng)
        if hidden_steps:
            break
    shot(page, "table-over.png", tmp_path)
    assert hidden_steps > 0  # the bot chose among cards the person did not see, and was not shown
    # a changed token (from the page), or one of another server, is refused by name
    token = bodies[-1]["token"]
    changed = token[:40] + ("A" if token[40] != "A" else "B") + token[41:]
    status, err = page.evaluate(
        """async (token) => {
            const r = await fetch('/table/record', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                                    body: JSON.stringify({token})});
            return [r.status, await r.json()];
        }""", changed)
    assert status == 422 and err["error"] == "invalid_token" and err["pointer"] == "/token", err
    status, err = http_json("POST", unkeyed.url + "/table/record", {"token": token})
    assert status == 422 and err["error"] == "invalid_token" and err["pointer"] == "/token", err


def test_a_hint_appears(browser: Any, keyed: Gunicorn) -> None:
    page = browser.new_page(viewport={"width": 800, "height": 900})
    start(page, keyed.url, seed="12")
    page.select_option("#hint-level", "skilled")
    page.click("#hint")
    page.wait_for_selector("#hint-out .hint")
    text = page.inner_text("#hint-out")
    assert re.search(r"skilled suggests: .+ \(win chance \d+%\)", text), text
    assert "Next best:" in text
    suggested = text.split("suggests: ", 1)[1].split(" (win chance")[0]
    assert suggested in page.inner_text("#decisions")
    assert page.inner_text("#hint-out .reason").lower().startswith(f"why: {suggested.lower()}: ")  # and why


def _finished_record(seed: int) -> dict[str, Any]:
    """A whole game: the person's seat (0) played at random, novice at seat 1."""
    import engine_ext
    from bots.levels import make_bot
    from engine_ext import record as records
    from engine_ext.decisions import Decision

    bots = [make_bot("random"), make_bot("novice")]
    game = engine_ext.new_game(players=2, seed=seed)
    moves: list[str] = []
    while not game.is_terminal:
        an = bots[game.current_player].analyse(game.state, seed=len(moves))
        text = str(Decision.from_code(an.code, game.state, game.engine.data))
        game.apply(text)
        moves.append(text)
    return records.record_from_moves(moves, players=2, seed=seed, levels=[None, "novice"])


def in_view(page: Any, selector: str) -> bool:
    """Whether the element's top is within the window (at or below its top, above its bottom; a
    scroll to an element's top may leave it a fraction of a pixel above, as device pixels round)."""
    return bool(page.eval_on_selector(selector, "e => { const r = e.getBoundingClientRect(); "
                                                "return r.height > 0 && r.top > -1 && r.top < window.innerHeight; }"))


def shows_the_position_of(page: Any, d: dict[str, Any]) -> None:
    """After a click on move `d` of the review: the position as the person saw it, in view, with
    the move played and the better one marked among its decisions (not to be played)."""
    page.wait_for_selector("#review-back")
    page.wait_for_function("() => { const r = document.getElementById('decide').getBoundingClientRect(); "
                           "return r.top > -1 && r.top < window.innerHeight; }")
    assert in_view(page, "#decide") and in_view(page, "#position-note")
    assert page.inner_text("#ask") == f"Move {d['move']}: the position as you saw it"
    assert all(b.is_disabled() for b in page.locator("button.decision").all())
    assert page.locator("button.decision.played").count() == 1 == page.locator("button.decision.better").count()
    assert d["played_words"] in page.inner_text("button.decision.played")
    assert d["best_words"] in page.inner_text("button.decision.better")
    assert page.eval_on_selector("button.decision.played", "b => b.dataset.text") == d["played"]
    assert page.eval_on_selector("button.decision.better", "b => b.dataset.text") == d["best"]
    note = page.inner_text("#position-note")
    assert f"Move {d['move']}" in note and d["best_words"] in note and "better:" in note
    assert page.inner_text("#review-detail .reason") == f"Why: {d['reason']}"  # the better move's reason
    assert page.locator(f"#review [data-move='{d['move']}'].chosen").count() == 2  # its mark and its line
    # numbers as people read them: whole percent, VP to one decimal
    assert re.search(r"win chance \d+%, -?\d+\.\d VP expected\); better: ", note), note
    assert not re.search(r"\d\.\d\d", note), note


def test_a_review_marks_by_class_and_a_click_brings_the_position_into_view(browser: Any, unkeyed: Gunicorn,
                                                                           tmp_path: Path) -> None:
    record = _finished_record(17)
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(dict(record, moves=record["moves"][:3] + [dict(record["moves"][3], decision="c9:a")])))
    page = browser.new_page(viewport={"width": 1000, "height": 800})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(unkeyed.url + "/")
    page.wait_for_selector("#level-0 option[value='novice']", state="attached")
    page.set_input_files("#load-record", str(broken))  # an error, gone once a game starts
    page.wait_for_function("() => document.getElementById('setup-error').textContent.includes('/record/moves/3')")
    page.set_input_files("#load-record", str(path))
    page.wait_for_selector("#result:not([hidden])")  # the loaded game is over
    assert page.inner_text("#setup-error") == ""
    review = review_at_the_table(page, "skilled")
    # a graph line per seat, its moves numbered, a mark per lost chance (its shape by class), each listed
    assert page.locator("#review-svg polyline").count() == 2
    numbers = [int(t) for t in page.eval_on_selector_all("#review-svg .move-number",
                                                         "ns => ns.map(n => n.textContent)")]
    assert numbers[0] == 1 and len(numbers) >= 5 and numbers == sorted(numbers) and numbers[-1] <= len(record["moves"])
    flagged = [d for d in review["decisions"] if d["class"]]
    shape = {"inaccuracy": "circle", "mistake": "rect", "blunder": "polygon"}
    assert page.locator("#review-svg .marker").count() == len(flagged) > 0
    for d in flagged:
        mark = page.locator(f"#review-svg .marker[data-move='{d['move']}']")
        assert mark.evaluate("m => m.tagName") == shape[d["class"]]
        assert mark.get_attribute("class") == f"marker {d['class']}"
    legend = page.inner_text("#review-graph .legend.classes")
    assert all(c in legend for c in shape)
    assert [page.locator(f"#review-graph .legend-{c} {t}").count() for c, t in shape.items()] == [1, 1, 1]
    assert page.locator("#review-moves button.review-move").count() == len(flagged)
    mine = [d for d in flagged if d["seat"] == 0]
    assert mine, flagged
    shot(page, "table-review.png", tmp_path)
    # a mark: the position comes into view
    page.click(f"#review-svg .marker[data-move='{mine[0]['move']}']")
    shows_the_position_of(page, mine[0])
    page.click("#review-back")
    page.wait_for_selector("#result:not([hidden])")
    assert page.locator("button.decision").count() == 0 and page.is_hidden("#position-note")
    # a line of the list: the same
    page.click(f"#review-moves button.review-move[data-move='{mine[-1]['move']}']")
    shows_the_position_of(page, mine[-1])
    page.click("#review-back")
    page.wait_for_selector("#result:not([hidden])")
    # a new game finds no review, no position and no error of the last one
    page.click("#again")
    assert page.is_visible("#setup") and page.inner_text("#setup-error") == ""
    start(page, unkeyed.url)
    assert page.is_hidden("#review") and page.is_hidden("#position-note")
    assert all(t == "" for t in page.locator(".error").all_inner_texts())
    assert not errors, errors


def test_a_default_game_is_reviewed_downloaded_loaded_back_and_reviewed_again(browser: Any, unkeyed: Gunicorn,
                                                                              capsys: pytest.CaptureFixture[str]
                                                                              ) -> None:
    """The form as it comes (no seed: the service draws one), a whole game, its review, its record
    downloaded and loaded back, the review again; `kashgar review` of the file gives the same."""
    from engine_ext import record as records
    from kashgar_cli import main

    page = browser.new_page(viewport={"width": 1000, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    start(page, unkeyed.url)
    play_to_the_end(page, random.Random(3))
    result = page.inner_text("#result")
    seed = int(re.search(r"Seed: (\d+)", result).group(1))  # type: ignore[union-attr]
    assert 0 <= seed < 2**53
    review = review_at_the_table(page, "novice")
    with page.expect_download() as got:
        page.click("#download")
    path = Path(got.value.path())
    record = json.loads(path.read_text())
    assert record["seed"] == seed and record["seats"][1]["level"] == "novice"
    assert records.replay(record).is_terminal
    page.click("#again")
    page.set_input_files("#load-record", str(path))
    page.wait_for_selector("#result:not([hidden])")
    assert page.inner_text("#result") == result
    assert page.is_hidden("#review-svg") or page.locator("#review-svg").count() == 0
    assert review_at_the_table(page, "novice") == review
    assert main.main(["review", str(path), "--level", "novice", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == review
    assert not errors, errors


def test_the_api_key_is_asked_for_only_by_a_server_that_needs_one(browser: Any, unkeyed: Gunicorn,
                                                                  tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": 800, "height": 900})
    page.goto(unkeyed.url + "/")
    page.wait_for_selector("#level-0 option[value='novice']", state="attached")
    assert page.is_hidden("#api-key-row") and page.is_hidden("#api-key")
    with Gunicorn(env=dict(ENV, KASHGAR_API_KEYS="k-browser"), workers=1, log_dir=str(tmp_path)) as keyed_server:
        page.goto(keyed_server.url + "/")
        page.wait_for_selector("#api-key", state="visible")
        assert "this server needs one" in page.inner_text("#api-key-row")
        page.fill("#api-key", "k-browser")
        page.click("#start")
        wait_turn(page)
        assert page.inner_text("#ask").startswith("Your turn") and page.inner_text("#setup-error") == ""


def test_the_hint_offers_only_levels_answered_at_once(browser: Any, tmp_path: Path) -> None:
    """On a server whose synchronous limits leave master out (answered as a job), a hint cannot come
    from master at once: the hint never offers it, and its first choice, the default level or else
    the strongest one answered at once, gives a hint."""
    env = dict(ENV, KASHGAR_SYNC_MAX_ITERATIONS="2000")
    with Gunicorn(env=env, workers=1, log_dir=str(tmp_path)) as capped:
        status, body = http_json("GET", capped.url + "/levels")
        assert status == 200
        sync = [lv["name"] for lv in body["levels"] if not lv["asynchronous"]]
        assert "master" not in sync and len(sync) == len(body["levels"]) - 1
        expected = body["default"] if body["default"] in sync else sync[-1]
        page = browser.new_page(viewport={"width": 800, "height": 900})
        start(page, capped.url, seed="12")
        offered = page.eval_on_selector_all("#hint-level option", "os => os.map(o => o.value)")
        assert offered == sync
        assert page.eval_on_selector("#hint-level", "s => s.value") == expected
        page.click("#hint")
        page.wait_for_selector("#hint-out .hint, #hint-out .error")
        assert page.locator("#hint-out .error").count() == 0, page.inner_text("#hint-out")
