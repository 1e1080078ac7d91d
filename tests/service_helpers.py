"""The service app behind a real HTTP server in this process, for tests that talk HTTP to it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Mapping
from typing import Any


@contextlib.contextmanager
def serve_app(config: Mapping[str, Any] | None = None, app: Any = None) -> Iterator[str]:
    """`app`, else `create_app(TESTING, log level WARNING, then config)`, served on a free loopback
    port by werkzeug's threaded server; yields its base URL and shuts it down after."""
    from werkzeug.serving import make_server

    from service import create_app

    if app is None:
        app = create_app({"TESTING": True, "log_level": "WARNING", **(config or {})})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
