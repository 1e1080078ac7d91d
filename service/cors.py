"""Cross-origin requests (CORS), opt-in: `KASHGAR_CORS_ORIGINS` lists the web origins whose pages
may call the API from a browser (comma-separated, `scheme://host[:port]`; `*`: any). Unset, the
service sends no CORS headers, and browsers keep other sites' pages from reading its answers.

An allowed origin gets `Access-Control-Allow-Origin` on every answer, and its preflight (`OPTIONS`
with `Access-Control-Request-Method`) is answered 204 with the methods and headers the API takes;
any other origin gets no CORS header at all. No credentials are allowed: the API has no cookies; a
page sends its API key in `Authorization`, which the preflight allows. A preflight is never asked
for a key (browsers send it without one): `is_preflight` tells the key check so."""

from __future__ import annotations

import re

from flask import Flask, Response, request

METHODS = "GET, POST, DELETE, OPTIONS"
HEADERS = "Authorization, Content-Type, Idempotency-Key, X-Request-ID"
EXPOSED = ("Location, Retry-After, WWW-Authenticate, X-Request-ID, X-RateLimit-Limit, X-RateLimit-Remaining, "
           "X-RateLimit-Reset")
MAX_AGE = "600"  # seconds a browser may keep a preflight's answer
_ORIGIN = re.compile(r"^https?://[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?(:[0-9]{1,5})?$")


def parse_origins(raw: str) -> tuple[str, ...]:
    """The origins of KASHGAR_CORS_ORIGINS (empty: CORS off); ValueError naming a wrong one."""
    origins = tuple(part.strip() for part in raw.split(",") if part.strip())
    for origin in origins:
        if origin != "*" and not _ORIGIN.match(origin):
            raise ValueError(f"KASHGAR_CORS_ORIGINS: {origin!r} is not an origin: want scheme://host[:port] "
                             "(http or https, no path, e.g. https://play.example.org), or *")
    return origins


def is_preflight() -> bool:
    """Whether the request being served is a browser's CORS preflight: it carries no credentials
    by design, so no key is asked of it (its answer says what the real request may send)."""
    return request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers


def init_app(app: Flask, raw: str) -> None:
    """Answer the origins `raw` lists (KASHGAR_CORS_ORIGINS); nothing when it lists none."""
    origins = set(parse_origins(raw))
    if not origins:
        return
    any_origin = "*" in origins

    def allowed(origin: str | None) -> bool:
        return bool(origin) and (any_origin or origin in origins)

    def allow(resp: Response, origin: str) -> None:
        resp.headers["Access-Control-Allow-Origin"] = "*" if any_origin else origin

    @app.before_request
    def _preflight() -> Response | None:
        origin = request.headers.get("Origin")
        if not is_preflight():
            return None
        if not allowed(origin):
            return None  # answered as any OPTIONS request, without a CORS header: the browser refuses
        resp = app.make_response(("", 204))
        allow(resp, str(origin))
        resp.headers["Access-Control-Allow-Methods"] = METHODS
        resp.headers["Access-Control-Allow-Headers"] = HEADERS
        resp.headers["Access-Control-Max-Age"] = MAX_AGE
        return resp

    @app.after_request
    def _allow(resp: Response) -> Response:
        resp.vary.add("Origin")  # the answer depends on the Origin: caches must keep them apart
        origin = request.headers.get("Origin")
        if allowed(origin) and "Access-Control-Allow-Origin" not in resp.headers:
            allow(resp, str(origin))
            resp.headers["Access-Control-Expose-Headers"] = EXPOSED
        return resp
