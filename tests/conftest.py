"""Shared fixtures. Every engine test runs on both builds: the compiled core and the
interpreted one (the same source), through the parametrized `engine` fixture."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import engine_ext
from engine_ext import Engine
from tests.engine_helpers import require_compiled
from tests.service_helpers import serve_app

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
    with serve_app() as url:
        yield url


@pytest.fixture(autouse=True)
def _served_levels_read_afresh() -> Iterator[None]:
    """A process reads its level file once (`service.levels.levels` is cached); a test that served
    another level file must not leave its ladder to the tests after it in the same process."""
    yield
    import sys

    served = sys.modules.get("service.levels")
    if served is not None:
        served.levels.cache_clear()

