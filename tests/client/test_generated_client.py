"""A client generated from the service's own OpenAPI document by openapi-python-client (the usual
Python generator) imports and plays a whole game through `/games`, `/legal`, `/apply` and
`/suggest` on a real server: the document is one a generated client can play from (its
cross-field rules are where generators merge them, inside `allOf`)."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

GENERATOR = shutil.which("openapi-python-client") or str(Path(sys.executable).parent / "openapi-python-client")


@pytest.fixture
def generated(service_url: str, tmp_path: Path) -> Iterator[Any]:
    where = tmp_path
    with urllib.request.urlopen(service_url + "/openapi.json", timeout=30) as resp:
        (where / "openapi.json").write_bytes(resp.read())
    proc = subprocess.run([GENERATOR, "generate", "--path", str(where / "openapi.json"), "--output-path",
                           str(where / "kashgar_generated"), "--meta", "none"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Warning" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr  # no schema dropped
    sys.path.insert(0, str(where))
    try:
        yield importlib.import_module("kashgar_generated")
    finally:
        sys.path.remove(str(where))
        for name in [m for m in sys.modules if m == "kashgar_generated" or m.startswith("kashgar_generated.")]:
            del sys.modules[name]


def test_a_generated_client_plays_a_whole_game(generated: Any, service_url: str) -> None:
    rules = importlib.import_module("kashgar_generated.api.rules")
    search = importlib.import_module("kashgar_generated.api.search")
    models = importlib.import_module("kashgar_generated.models")
    for module in ("new_game", "legal", "apply"):
        importlib.import_module(f"kashgar_generated.api.rules.{module}")
    importlib.import_module("kashgar_generated.api.search.suggest")
    client = importlib.import_module("kashgar_generated").Client(base_url=service_url, timeout=60)

    game = rules.new_game.sync(client=client, body=models.NewGameRequest(players=2, seed=11))
    assert isinstance(game, models.GameResponse) and not game.is_terminal
    state, decisions = game.state, 0
    while True:
        legal = rules.legal.sync(client=client, body=models.LegalRequest(state=state))
        assert isinstance(legal, models.LegalResponse), legal
        if legal.is_terminal:
            break
        answer = search.suggest.sync(client=client, body=models.SuggestRequest(state=state, level="novice",
                                                                                seed=decisions))
        assert isinstance(answer, models.SuggestResponse), answer
        assert answer.decision_text in {d.text for d in legal.legal}
        applied = rules.apply.sync(client=client, body=models.ApplyRequest(state=state,
                                                                           decision=answer.decision_text))
        assert isinstance(applied, models.ApplyResponse), applied
        state, decisions = applied.state, decisions + 1
        assert decisions < 1000
    final = state.to_dict()
    assert final["game_over"] is True and decisions > 20
    # what the generated client sent and read back is the service's own document, untouched
    assert json.loads(json.dumps(final)) == final
