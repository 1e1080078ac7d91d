"""Shared fixtures. Every engine test runs on both builds: the compiled core and the
interpreted one (the same source), through the parametrized `engine` fixture."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

import engine_ext
from engine_ext import Engine
from tests.engine_helpers import require_compiled

BUILDS = ["compiled", "interpreted"]


_require_compiled = require_compiled


@pytest.fixture(params=BUILDS)
def engine(request: pytest.FixtureRequest) -> Engine:
    """An Engine on the compiled core, then on the interpreted core."""
    if request.param == "compiled":
        _require_compiled()
        return engine_ext.get_engine(True)
    return engine_ext.get_engine(False)


@pytest.fixture
def compiled_engine() -> Engine:
    _require_compiled()
    return engine_ext.get_engine(True)


@pytest.fixture
def interpreted_engine() -> Engine:
    return engine_ext.get_engine(False)


@pytest.fixture
def service_url() -> Iterator[str]:
    """The service app behind a real HTTP server in this process (threads)."""
    from werkzeug.serving import make_server

    from service import create_app

    server = make_server("127.0.0.1", 0, create_app({"TESTING": True, "log_level": "WARNING"}), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
