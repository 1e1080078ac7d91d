"""The client library (`kashgar_client`) against the service over real HTTP: it imports nothing of
the server, sends an API key, gives up on a silent server after its timeout, waits out a 429 as
its Retry-After says (and no longer than it is told), follows a job to its end, answers typed."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from email.utils import formatdate

import pytest

from kashgar_client import (
    Accepted,
    Job,
    JobFailed,
    KashgarAPIError,
    KashgarClient,
    KashgarUnreachable,
    Suggestion,
    retry_after_seconds,
)
from tests.service_helpers import serve_app

KEY = "k-test-0123456789"


def test_importing_the_client_imports_nothing_of_the_server() -> None:
    code = ("import sys, kashgar_client; bad = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('flask', 'werkzeug', 'service', 'engine_ext', 'bots', 'pydantic', 'lab')); print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_keyed_server_is_asked_with_the_key_from_the_argument_or_the_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KASHGAR_API_KEY", raising=False)
    with serve_app({"api_keys": KEY}) as url:
        with pytest.raises(KashgarAPIError) as err:
            KashgarClient(url).new_game(seed=1)
        assert err.value.status == 401 and err.value.code == "unauthorized" and err.value.pointer == "/Authorization"
        assert isinstance(err.value.body, dict) and err.value.body["error"] == "unauthorized"
        with pytest.raises(KashgarAPIError) as err:
            KashgarClient(url, api_key="wrong").new_game(seed=1)
        assert err.value.status == 403
        game = KashgarClient(url, api_key=KEY).new_game(players=3, seed=1)
        assert game.state is not None and game.current_player == game.turn_player
        assert len(game.vp or []) == 3 and game.legal
        monkeypatch.setenv("KASHGAR_API_KEY", KEY)
        assert KashgarClient(url).legal(game.state).legal == game.legal


def test_a_silent_server_is_given_up_after_the_timeout() -> None:
    with socket.socket() as sock:  # accepts connections (the backlog) and never answers
        sock.bind(("127.0.0.1", 0))
        sock.listen(4)
        t0 = time.monotonic()
        with pytest.raises(KashgarUnreachable) as err:
            KashgarClient(f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=0.5, retries=0).healthz()
        assert err.value.status == 0 and time.monotonic() - t0 < 5


def test_a_429_is_asked_again_after_its_retry_after_and_a_long_one_is_raised() -> None:
    with serve_app({"api_keys": KEY, "rate_limit": "1 per 2 seconds"}) as url:
        waits: list[float] = []

        def sleep(seconds: float) -> None:
            waits.append(seconds)
            time.sleep(seconds)

        api = KashgarClient(url, api_key=KEY, sleep=sleep, retries=3)
        assert api.levels()  # the first one of the window
        t0 = time.monotonic()
        assert api.levels()  # refused (429, Retry-After), asked again after the wait, answered
        assert waits and all(1 <= w <= 3 for w in waits)  # a 2 s window, counted in whole seconds
        assert time.monotonic() - t0 >= waits[0]
        impatient = KashgarClient(url, api_key=KEY, max_retry_wait=0.5)
        with pytest.raises(KashgarAPIError) as err:
            impatient.levels()
        assert err.value.status == 429 and err.value.code == "rate_limit"
        assert err.value.retry_after is not None and 1 <= err.value.retry_after <= 3
        with pytest.raises(KashgarAPIError) as err:
            KashgarClient(url, api_key=KEY, retries=0).levels()
        assert err.value.status == 429


def test_retry_after_in_seconds_or_as_a_date() -> None:
    now = time.time()
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1)
    assert retry_after_seconds(formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


def test_a_job_is_followed_through_its_location_to_its_end_with_progress(service_url: str) -> None:
    api = KashgarClient(service_url)
    state = api.new_game(players=2, seed=4, observer=0).state
    assert state is not None
    accepted = api.submit(state, iterations=400, seed=3, mode="async")
    assert isinstance(accepted, Accepted) and accepted.location == f"{service_url}/jobs/{accepted.job_id}"
    seen: list[Job] = []
    job = api.wait(accepted, on_progress=seen.append, poll_interval=0.02, timeout=120)
    assert job.status == "finished" and job.settled and seen[-1] == job
    assert [j.progress.iterations for j in seen] == sorted(j.progress.iterations for j in seen)
    assert isinstance(job.result, Suggestion) and job.result.iterations == 400
    looks: list[Job] = []
    answer = api.suggest(state, iterations=400, seed=3, mode="async", on_progress=looks.append, poll_interval=0.02)
    assert looks and looks[-1].status == "finished"
    sync = api.suggest(state, iterations=400, seed=3, mode="sync")
    assert answer.decision_text == sync.decision_text == job.result.decision_text
    assert answer.alternatives == sync.alternatives and sync.alternatives[0].visits > 0
    assert sync.decision_text in {d.text for d in api.legal(state).legal}


def test_the_client_asks_for_a_seat_s_view(service_url: str) -> None:
    api = KashgarClient(service_url)
    full = api.new_game(players=2, seed=4).state
    assert full is not None
    view = api.legal(full, observer=1).state
    assert view is not None and view["observer"] == 1 and view == api.new_game(players=2, seed=4, observer=1).state
    assert api.legal(full).state is None


def test_waiting_on_a_cancelled_job_gives_what_its_parts_searched(service_url: str) -> None:
    """A cancelled job is `cancelled` at once, but a running part stops only at its next check and
    its partial result comes after: `wait` raised on the first `cancelled` it saw, with no result.
    Now it waits until every part has stopped."""
    api = KashgarClient(service_url)
    state = api.new_game(players=2, seed=4).state
    assert state is not None
    accepted = api.submit(state, time_ms=20_000, mode="async", parallel=2)
    assert isinstance(accepted, Accepted)
    deadline = time.monotonic() + 30
    while api.job(accepted).progress.iterations < 200:  # both parts are searching
        assert time.monotonic() < deadline, api.job(accepted)
        time.sleep(0.05)
    cancelled = api.cancel(accepted.job_id)
    assert cancelled.status == "cancelled"
    with pytest.raises(JobFailed) as failed:
        api.wait(accepted.job_id, poll_interval=0.05, timeout=30)
    job = failed.value.job
    assert job.status == "cancelled" and job.progress.parts_done == job.progress.parts_total == 2
    assert job.result is not None and job.result.partial is True and job.result.iterations >= 200
    assert "partial result" in str(failed.value)


class LosesFirstAnswer:
    """A proxy that passes requests to `upstream` and drops the first answer (the connection closed
    before it is sent back), as a network that fails at the wrong moment: it keeps what it saw."""

    def __init__(self, upstream: str) -> None:
        import http.client
        import threading
        from urllib.parse import urlsplit

        self.http_client = http.client
        where = urlsplit(upstream)
        self.upstream = (where.hostname or "127.0.0.1", where.port or 80)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.keys: list[str | None] = []
        self.answers: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                fields = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
                while len(body) < int(fields.get("content-length", "0")):
                    body += conn.recv(65536)
                method, path, _ = lines[0].split(" ", 2)
                self.keys.append(fields.get("idempotency-key"))
                up = self.http_client.HTTPConnection(*self.upstream, timeout=60)
                sent = {k: v for k, v in fields.items() if k not in ("host", "connection")}
                up.request(method, path, body=body, headers=sent)
                resp = up.getresponse()
                payload = resp.read()
                self.answers.append(payload)
                if len(self.answers) == 1:
                    continue  # dropped: the connection closes unanswered
                out = f"HTTP/1.1 {resp.status} {resp.reason}\r\n".encode()
                for k, v in resp.getheaders():
                    if k.lower() not in ("connection", "transfer-encoding"):
                        out += f"{k}: {v}\r\n".encode()
                conn.sendall(out + b"Connection: close\r\n\r\n" + payload)


def test_a_job_post_whose_answer_is_lost_is_asked_again_and_makes_one_job(service_url: str) -> None:
    import json

    proxy = LosesFirstAnswer(service_url)
    api = KashgarClient(proxy.url, retries=2, sleep=lambda s: None)
    state = KashgarClient(service_url).new_game(players=2, seed=4, observer=0).state
    assert state is not None
    accepted = api.submit(state, iterations=100_000, seed=3, mode="async")
    assert isinstance(accepted, Accepted)
    assert len(proxy.keys) == 2 and proxy.keys[0] and proxy.keys[0] == proxy.keys[1]  # one key, sent twice
    first = json.loads(proxy.answers[0])  # what the lost answer said
    assert accepted.job_id == first["job_id"]  # the retry got that job, not a second one
    KashgarClient(service_url).cancel(accepted)
