"""Who a request comes from: an API key's client when keys are configured, else the client's
address (the peer, or the address a trusted proxy forwarded), with the limits that client has.

Keys: `KASHGAR_API_KEYS` (comma-separated, the default limits) and/or `KASHGAR_API_KEYS_FILE`, a
TOML or JSON file with a `keys` array of tables:

    [[keys]]
    name = "alice"              # the client's id (`key:alice`); default: a digest of the whole key
    key = "s3cr3t-alice"
    sync_seconds = 4            # optional: this key's own limits (KASHGAR_SYNC_CLIENT_SECONDS, ...)
    async_seconds = 600
    rate = "20/second"          # optional: this key's request rate (KASHGAR_RATE_LIMIT)
    operator = true             # optional: sees and cancels every client's jobs

A client's id names it in its jobs, its `Idempotency-Key`s, its limits, logs and 429s: `key:` and
its `name`, else `key:` and the first 16 hex digits of the sha256 of the whole key (never a part of
the key itself). Two keys of one id are refused at start. With keys, a job is its client's (and
the operators'); without, anyone who has a job's id may read and cancel it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import tomllib
from dataclasses import dataclass
from typing import Any

from flask import Flask, g, request
from werkzeug.middleware.proxy_fix import ProxyFix

from .config import Settings
from .cors import is_preflight
from .errors import APIError

#: Paths never asked for a key nor limited: probes and monitoring.
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/metrics"})
#: The web table's page and its files, and the API's documentation (the document and its viewer):
#: they name nothing a key guards (the table's page and the viewer's "try it" send the key they are
#: given with their calls).
PAGE_PATHS = frozenset({"/", "/play", "/openapi.json", "/docs"})
PAGE_PREFIXES = ("/table/static/", "/docs/")


#: How the id of a key's client begins (an address's: `addr:`).
KEY_PREFIX = "key:"
#: Hex digits of a key's sha256 in its client's id (64 bits: no two configured keys share one).
KEY_DIGEST_CHARS = 16


@dataclass(frozen=True)
class Client:
    """A client and its limits (search-seconds in flight; requests per window). `keyed`: named by an
    API key (else by its address); `operator`: a key that sees every client's jobs."""

    id: str
    sync_seconds: float
    async_seconds: float
    rate: str
    keyed: bool = False
    operator: bool = False

    def sees(self, owner: str) -> bool:
        """Whether this client may read, follow and cancel a job of client `owner`: its own, or any
        for an operator. Without keys (a client named by its address), any whose id it has but a
        key's client's (a server started without keys on the job store of one with keys)."""
        if self.operator or owner == self.id:
            return True
        return not self.keyed and not owner.startswith(KEY_PREFIX)


def key_id(key: str) -> str:
    """The id of an unnamed key's client: a digest of the whole key, which it does not reveal."""
    return KEY_PREFIX + hashlib.sha256(key.encode()).hexdigest()[:KEY_DIGEST_CHARS]


def load_keys(settings: Settings) -> dict[str, Client]:
    """Every key configured, to its client. ValueError names what is wrong (never the key itself)."""
    keys: dict[str, Client] = {}
    where: dict[str, str] = {}  # a client's id to where its key was given

    def add(key: str, name: str | None, entry: dict[str, Any], origin: str) -> None:
        if not key:
            raise ValueError(f"{origin}: an API key is empty")
        if key in keys:
            raise ValueError(f"{origin}: the same key as {where[keys[key].id]}")
        client = Client(
            id=KEY_PREFIX + name if name else key_id(key),
            sync_seconds=float(entry.get("sync_seconds", settings.sync_client_seconds)),
            async_seconds=float(entry.get("async_seconds", settings.async_client_seconds)),
            rate=str(entry.get("rate", settings.rate_limit)),
            keyed=True,
            operator=bool(entry.get("operator", False)),
        )
        if client.id in where:
            raise ValueError(f"{origin}: the client {client.id!r} of {where[client.id]} again: every key's "
                             "`name` must be its own (a client's jobs are its own)")
        keys[key] = client
        where[client.id] = origin

    for i, key in enumerate(k.strip() for k in settings.api_keys.split(",") if k.strip()):
        add(key, None, {}, f"KASHGAR_API_KEYS key {i + 1}")
    if settings.api_keys_file:
        path = settings.api_keys_file
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
            doc = json.loads(raw) if path.endswith(".json") else tomllib.loads(raw.decode())
        except (OSError, ValueError) as exc:
            raise ValueError(f"KASHGAR_API_KEYS_FILE={path!r}: {exc}") from None
        entries = doc.get("keys") if isinstance(doc, dict) else None
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ValueError(f"KASHGAR_API_KEYS_FILE={path!r}: want a `keys` array of tables with `key` and `name`")
        for i, entry in enumerate(entries):
            if not isinstance(entry.get("key"), str):
                raise ValueError(f"KASHGAR_API_KEYS_FILE={path!r}: keys[{i}] has no `key` string")
            for limit in ("sync_seconds", "async_seconds"):
                value = entry.get(limit, 0)
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    raise ValueError(f"KASHGAR_API_KEYS_FILE={path!r}: keys[{i}].{limit} must be a number >= 0")
            name = entry.get("name")
            if name is not None and (not isinstance(name, str) or not name.strip()):
                raise ValueError(f"KASHGAR_API_KEYS_FILE={path!r}: keys[{i}].name must be a non-empty string")
            if not isinstance(entry.get("operator", False), bool):
                raise ValueError(f"KASHGAR_API_KEYS_FILE={path!r}: keys[{i}].operator must be true or false")
            add(entry["key"], name.strip() if name else None, entry, f"KASHGAR_API_KEYS_FILE={path!r} keys[{i}]")
    return keys


def current() -> Client:
    """The client of the request being served (set by `init_app`'s hook)."""
    client: Client = g.kashgar_client
    return client


def init_app(app: Flask, settings: Settings) -> None:
    """Trust `trusted_proxies` hops of X-Forwarded-For, and name (and with keys, check) the client
    of every request but the open paths and CORS preflights: 401 without a key, 403 with an unknown one."""
    if settings.trusted_proxies:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=settings.trusted_proxies)  # type: ignore[method-assign]
    keys = load_keys(settings)
    app.extensions["kashgar_keys"] = keys

    @app.before_request
    def _identify() -> None:
        if request.path in OPEN_PATHS or is_preflight():
            return
        if keys and (request.path in PAGE_PATHS or request.path.startswith(PAGE_PREFIXES)):
            return
        if not keys:
            g.kashgar_client = Client(f"addr:{request.remote_addr or 'unknown'}", settings.sync_client_seconds,
                                      settings.async_client_seconds, settings.rate_limit)
            return
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise APIError(401, "unauthorized", "this server needs an API key: send Authorization: Bearer <key>",
                           "/Authorization", location="header", headers={"WWW-Authenticate": 'Bearer realm="kashgar"'})
        for key, client in keys.items():
            if hmac.compare_digest(key.encode(), token.encode()):
                g.kashgar_client = client
                return
        raise APIError(403, "forbidden", "unknown API key", "/Authorization", location="header")
