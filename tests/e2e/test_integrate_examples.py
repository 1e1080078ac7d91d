"""The worked examples of docs/integrate.md, run as their readers run them, against a real server
(`kashgar serve`: gunicorn) with API keys and CORS on: the Python program (kashgar_client) plays a
whole game the service deals and applies; the Node programs send their own mid-turn state with
fetch and drive `kashgar engine` as a subprocess; the browser page, served from another origin,
calls the keyed server in headless Chromium."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from lab.serving import Gunicorn, free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
NODE = shutil.which("node") or "node"
KEY = "integrate-example-key"
PAGE_PORT = free_port()
PAGE_ORIGIN = f"http://127.0.0.1:{PAGE_PORT}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gunicorn]:
    env = {"KASHGAR_API_KEYS": KEY, "KASHGAR_CORS_ORIGINS": PAGE_ORIGIN, "KASHGAR_LOG_LEVEL": "WARNING"}
    with Gunicorn(env=env, workers=2, log_dir=str(tmp_path_factory.mktemp("integrate"))) as web:
        yield web


@pytest.fixture(scope="module")
def page_server() -> Iterator[str]:
    """docs/examples/browser served on its own port: another origin than the API's."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", PAGE_PORT), functools.partial(Quiet, directory=str(EXAMPLES / "browser")))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        yield PAGE_ORIGIN
    finally:
        httpd.shutdown()
        httpd.server_close()


def run(argv: list[str], key: str | None = KEY, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "KASHGAR_API_KEY"}
    if key is not None:
        env["KASHGAR_API_KEY"] = key
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)


def last_json(out: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return doc


def test_the_python_example_plays_a_whole_game_the_service_deals_and_applies(server: Gunicorn) -> None:
    done = run([sys.executable, str(EXAMPLES / "service_game.py"), "--url", server.url])
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = last_json(done.stdout)
    assert outcome["is_terminal"] is True and outcome["winner"] in (0, 1) and outcome["decisions"] > 50
    assert len(outcome["vp"]) == 2 and "seat 1: " in done.stdout
    refused = run([sys.executable, str(EXAMPLES / "service_game.py"), "--url", server.url], key=None)
    assert refused.returncode != 0 and "401 unauthorized" in refused.stderr


def test_the_node_example_sends_its_own_mid_turn_state(server: Gunicorn) -> None:
    done = run([NODE, str(EXAMPLES / "own_state.mjs"), server.url], timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = last_json(done.stdout)
    assert answer["legal"] == ["keep quacksalber", "keep korbmacher"]
    assert answer["decision_text"] in answer["legal"] and answer["iterations"] > 0
    refused = run([NODE, str(EXAMPLES / "own_state.mjs"), server.url], key="not-a-key", timeout=120)
    assert refused.returncode != 0 and "403 forbidden" in refused.stderr


def test_the_node_example_drives_kashgar_engine_as_a_subprocess() -> None:
    done = run([NODE, str(EXAMPLES / "engine_subprocess.mjs"), sys.executable, "-m", "kashgar_cli.main", "engine"])
    assert done.returncode == 0, done.stderr[-2000:]
    outcome = last_json(done.stdout)
    assert outcome["is_terminal"] is True and outcome["engine_exit"] == 0 and len(outcome["vp"]) == 3
    assert outcome["winner"] in (0, 1, 2) and outcome["decisions"] > 50


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


def ask_in_page(browser: Any, page_url: str) -> dict[str, Any]:
    page = browser.new_page()
    try:
        page.goto(page_url)
        page.click("#ask")
        page.wait_for_function("() => window.kashgarAnswer !== undefined", timeout=60_000)
        answer: dict[str, Any] = page.evaluate("() => window.kashgarAnswer")
        answer["shown"] = page.inner_text("#answer") if "error" not in answer else page.inner_text("#error")
        return answer
    finally:
        page.close()


def test_a_page_on_another_origin_calls_the_keyed_server_in_chromium(server: Gunicorn, page_server: str,
                                                                     browser: Any) -> None:
    """The preflight of a keyed call is answered (it was a 401, so the browser refused the call),
    `Authorization` is allowed, the answer and an error body are readable; an origin the server
    does not list is refused by the browser."""
    answer = ask_in_page(browser, f"{page_server}/index.html?api={server.url}&key={KEY}")
    assert "error" not in answer, answer
    assert answer["decision_text"] in answer["legal"] and answer["shown"].startswith("novice plays ")
    wrong = ask_in_page(browser, f"{page_server}/index.html?api={server.url}&key=not-a-key")
    assert wrong["error"] == "403 forbidden: unknown API key", wrong
    elsewhere = f"http://localhost:{PAGE_PORT}"  # another origin, not in KASHGAR_CORS_ORIGINS
    refused = ask_in_page(browser, f"{elsewhere}/index.html?api={server.url}&key={KEY}")
    assert refused["error"] == "Failed to fetch", refused


def test_every_example_is_linked_from_the_page_and_every_link_leads_somewhere() -> None:
    page = (ROOT / "docs" / "integrate.md").read_text()
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page)
    assert [link for link in links if not (ROOT / "docs" / link).exists()] == []
    examples = {p.relative_to(ROOT / "docs").as_posix() for p in EXAMPLES.rglob("*") if p.is_file()
                and p.suffix in (".py", ".mjs", ".html")}
    assert examples and examples <= set(links)


def test_the_interactive_docs_try_a_call_on_the_keyed_server_in_chromium(server: Gunicorn, browser: Any) -> None:
    """/docs/ is Swagger UI from its package (no CDN: every file it loads is this server's): it
    shows the API from /openapi.json, takes the key with Authorize, and "try it out" on GET /levels
    answers 200 with the levels."""
    page = browser.new_page()
    outside: list[str] = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(server.url) else None)
    try:
        page.goto(server.url + "/docs/")
        page.wait_for_selector(".opblock", timeout=60_000)
        assert page.locator(".opblock-summary-path", has_text="/suggest").count() >= 1
        page.click(".btn.authorize")
        page.fill(".auth-container input", KEY)
        page.click(".auth-btn-wrapper .authorize")
        page.click(".auth-btn-wrapper .btn-done")
        page.locator(".opblock-get .opblock-summary-path", has_text="/levels").first.click()
        block = page.locator(".opblock.is-open").first
        block.locator(".execute").click()  # "try it out" is on from the start (tryItOutEnabled)
        status = block.locator(".live-responses-table tbody .response-col_status").first
        status.wait_for(timeout=60_000)
        assert status.inner_text().strip() == "200"
        assert "novice" in block.locator(".live-responses-table tbody .response-col_description").first.inner_text()
        assert not outside, outside
    finally:
        page.close()
