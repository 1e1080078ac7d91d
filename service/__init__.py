"""Kashgar AI over HTTP.

`create_app(config=None)` builds the Flask application: settings from `KASHGAR_*` environment
variables (see `service.config.Settings`), overridden by `config`; one blueprint per resource;
JSON errors with pointers; structured logs; Prometheus metrics; the job queue (embedded, or Redis
and RQ when `KASHGAR_REDIS_URL` is set).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Mapping
from typing import Any

from flask import Flask

from .config import Settings

__all__ = ["create_app", "Settings"]


def _init_jobs(app: Flask, settings: Settings) -> None:
    from .jobs import build_manager

    jobs_db = settings.jobs_db
    if not settings.redis_url and not jobs_db:
        tmp = tempfile.mkdtemp(prefix="kashgar-jobs-")
        atexit.register(shutil.rmtree, tmp, True)
        jobs_db = os.path.join(tmp, "jobs.sqlite")
    manager = build_manager(settings, jobs_db)
    app.extensions["kashgar_jobs"] = manager

    @app.before_request
    def _reaper() -> None:  # per process: gunicorn forks its workers after loading the app
        manager.start_reaper()


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """The application. `config` keys are Settings field names (any case) or Flask settings."""
    from . import api, clients, cors, errors, logs, metrics, openapi, ratelimit, table
    from .errors import APIError, error_response
    from .jobs import StoreUnavailable
    from .jsonio import FastJSONProvider

    app = Flask(__name__)
    app.json = FastJSONProvider(app)
    settings = Settings.from_env(overrides=config)
    app.config["KASHGAR"] = settings
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    for key, value in (config or {}).items():
        if key.isupper() and key.lower() not in Settings.__dataclass_fields__:
            app.config[key] = value

    logs.init_app(app)
    errors.init_app(app)
    metrics.init_app(app)
    clients.init_app(app, settings)
    _init_jobs(app, settings)

    @app.errorhandler(StoreUnavailable)
    def _unavailable(exc: StoreUnavailable) -> Any:
        return error_response(
            APIError(
                503,
                "queue_unavailable",
                f"the job queue is unavailable ({exc}); synchronous searches (mode sync) still work",
                "",
                headers={"Retry-After": "5"},
            )
        )

    api.register(app)
    table.init_app(app)
    app.register_blueprint(openapi.bp)
    app.register_blueprint(openapi.docs_blueprint())
    app.register_blueprint(metrics.bp)
    cors.init_app(app, settings.cors_origins)
    ratelimit.init_app(app, settings)  # after the views: it exempts the open ones
    return app
