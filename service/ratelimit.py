"""Plain request rates per client (Flask-Limiter): `KASHGAR_RATE_LIMIT`, or a key's own `rate`,
counted in Redis when KASHGAR_REDIS_URL is set (shared by every web process), else in each web
process's memory. Past it: 429 `rate_limit` with Retry-After; every limited answer says the limit,
what is left of it and when it resets (`X-RateLimit-Limit`, `-Remaining`, `-Reset`). /healthz,
/readyz and /metrics are never limited. The search work in flight is bounded by `service.admission`."""

from __future__ import annotations

import math
import time
from typing import Any

from flask import Flask, Response, g
from flask_limiter import Limiter, RateLimitExceeded

from . import clients
from .config import Settings
from .errors import APIError, error_response


def _rate() -> str:
    client = getattr(g, "kashgar_client", None)
    return client.rate if client is not None else ""


def _client_id() -> str:
    client = getattr(g, "kashgar_client", None)
    return client.id if client is not None else "open"


def init_app(app: Flask, settings: Settings) -> None:
    keyed = any(c.rate for c in app.extensions.get("kashgar_keys", {}).values())
    if not settings.rate_limit and not keyed:
        return
    options: dict[str, Any] = (
        {"socket_timeout": settings.redis_timeout, "socket_connect_timeout": settings.redis_timeout}
        if settings.redis_url else {})
    limiter = Limiter(
        _client_id,
        app=app,
        default_limits=[_rate],
        default_limits_exempt_when=lambda: not _rate() or getattr(g, "kashgar_client", None) is None,
        storage_uri=settings.redis_url or "memory://",
        storage_options=options,
        key_prefix=f"{settings.key_prefix}:rate",
        headers_enabled=True,  # X-RateLimit-Limit, -Remaining, -Reset on every limited answer
        swallow_errors=True,  # Redis down: requests go on unlimited (async ones get their own 503)
    )
    for path in clients.OPEN_PATHS:
        view = next((r.endpoint for r in app.url_map.iter_rules() if r.rule == path), None)
        if view is not None:
            limiter.exempt(app.view_functions[view])

    @app.errorhandler(RateLimitExceeded)
    def _too_many(exc: RateLimitExceeded) -> Response:
        reset = limiter.current_limit.reset_at if limiter.current_limit is not None else time.time() + 1
        retry = max(1, math.ceil(reset - time.time()))
        return error_response(APIError(
            429, "rate_limit", f"this client ({_client_id()}) is over its rate limit of {exc.description} "
            f"requests; retry in {retry} s", "", headers={"Retry-After": str(retry)}))
