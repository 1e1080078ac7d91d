"""The buffering proxy of the deployment (`deploy/nginx.conf`, real nginx) in front of the real
gunicorn of `kashgar serve` with one web worker: the config is valid, requests pass through it
with the service's answers, and twenty clients trickling their requests to it leave another
client answered at once (nginx holds them; gunicorn never sees them)."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from lab.serving import Gunicorn, Proc, free_port, http_json, wait_until
from tests.e2e.test_service_slow_clients import Trickle

pytestmark = pytest.mark.e2e

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def proxy_config(upstream_port: int, port: int, tmp: Path) -> Path:
    """deploy/nginx.conf, pointed at a local gunicorn, listening on `port`, its pid file in `tmp`."""
    text = (DEPLOY / "nginx.conf").read_text()
    text = text.replace("server web:8000;", f"server 127.0.0.1:{upstream_port};")
    text = re.sub(r"listen 8080;", f"listen 127.0.0.1:{port};", text)
    text = text.replace("pid /tmp/nginx.pid;", f"pid {tmp / 'nginx.pid'};")
    path = tmp / "nginx.conf"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def proxied(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Gunicorn, str]]:
    tmp = tmp_path_factory.mktemp("proxy")
    with Gunicorn(env={"KASHGAR_CLIENT_TIMEOUT_S": "1.5"}, workers=1, log_dir=str(tmp)) as web:
        port = free_port()
        conf = proxy_config(web.port, port, tmp)
        check = subprocess.run([NGINX, "-t", "-p", str(tmp), "-c", str(conf)], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        proc = Proc("nginx", [NGINX, "-p", str(tmp), "-c", str(conf), "-g", "daemon off;"], log_dir=str(tmp))
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until(lambda: http_json("GET", url + "/healthz", timeout=2)[0] == 200, 20, what="nginx")
            yield web, url
        finally:
            proc.stop()


def test_requests_pass_through_the_proxy(proxied: tuple[Gunicorn, str]) -> None:
    _, url = proxied
    status, body = http_json("POST", url + "/games", {"players": 3, "seed": 2})
    assert status == 200 and body["state"]["players"] == 3, body
    status, body = http_json("POST", url + "/games", {"players": 9})
    assert status == 422 and body["pointer"] == "/players", body


def test_twenty_trickling_clients_at_the_proxy_leave_another_answered(proxied: tuple[Gunicorn, str]) -> None:
    web, url = proxied
    proxy_port = int(url.rsplit(":", 1)[1])
    target = Gunicorn(port=proxy_port)  # Trickle connects to a Gunicorn's port: the proxy's here
    with Trickle(target, 20, 0.3):
        time.sleep(0.5)
        for _ in range(5):
            t0 = time.monotonic()
            status, body = http_json("POST", url + "/games", {"players": 2, "seed": 1}, timeout=20)
            assert status == 200, body
            assert time.monotonic() - t0 < 1.0
    assert web.proc is not None
    log = web.proc.output()
    # gunicorn never saw them: nginx passes on only requests that have arrived whole
    assert "no complete request within the client timeout" not in log and "WORKER TIMEOUT" not in log


def test_a_review_s_events_pass_through_the_proxy_as_they_come(proxied: tuple[Gunicorn, str]) -> None:
    """Each event reaches the client through nginx when it happens, not all at the end."""
    import json
    import urllib.request

    from tests.builders import bot_record

    _, url = proxied
    status, body = http_json("POST", url + "/reviews", {"record": bot_record(41, moves=30), "level": "master"},
                             timeout=30)
    assert status == 202, body
    arrived: list[tuple[str, float]] = []
    name = ""
    with urllib.request.urlopen(url + body["status_url"] + "/events", timeout=120) as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                arrived.append((name, time.time()))
                json.loads(line[6:])
                if name == "end":
                    break
    names = [n for n, _ in arrived]
    assert names[0] == "progress" and names[-1] == "end" and "decision" in names
    status, job = http_json("GET", url + body["status_url"], timeout=30)
    assert status == 200 and job["status"] == "finished" and len(job["parts"]) > 2, job
    first_decision = next(t for n, t in arrived if n == "decision")
    # a buffering proxy would hold every event until the stream ends, after the job finished
    assert first_decision < job["finished_at"], (first_decision, job["finished_at"])
