"""Settings of the load test read from the environment, shared by the locust file and the scripts
that start locust (a small module: importing the locust file would import locust and gevent)."""

from __future__ import annotations

import os


def async_timeout_s() -> float:
    """Seconds an async job may take until the load test counts it as failed
    (`KASHGAR_LOAD_ASYNC_TIMEOUT`, default 120)."""
    return float(os.environ.get("KASHGAR_LOAD_ASYNC_TIMEOUT") or "120")
