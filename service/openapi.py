"""The OpenAPI 3.1 document, built from the operations the blueprints declare and the pydantic
models they validate with, and a browsable HTML page of it (no external assets)."""

from __future__ import annotations

import functools
import html
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import Blueprint, Response, current_app, jsonify
from pydantic import BaseModel
from pydantic.json_schema import models_json_schema

from . import models, openapi_rules
from .errors import PROBLEM_JSON

F = TypeVar("F", bound=Callable[..., Any])

ERROR_DESCRIPTIONS = {
    400: "Malformed request (not JSON, not UTF-8, empty body, a key twice in one object).",
    404: "No such resource.",
    408: "The request had not arrived whole KASHGAR_CLIENT_TIMEOUT_S after its first byte.",
    409: "Conflict with the resource's state.",
    413: "Request body too large.",
    415: "The body is not sent as Content-Type: application/json.",
    401: "An API key is needed (Authorization: Bearer <key>; servers with KASHGAR_API_KEYS).",
    403: "Unknown API key.",
    429: "Over a limit: this client's request rate (`rate_limit`), or the search work in flight "
         "(`sync_client_limit`, `async_client_limit`, `sync_total_limit`, `async_total_limit`); see Retry-After.",
    422: "Valid JSON, invalid content: the pointer names the field.",
    503: "The job queue (Redis) is unreachable; synchronous requests still work.",
}


@dataclass
class Operation:
    path: str
    method: str
    operation_id: str
    summary: str
    tag: str
    request: type[BaseModel] | None = None
    responses: dict[int, tuple[str, type[BaseModel] | None]] = field(default_factory=dict)
    errors: tuple[int, ...] = ()
    parameters: list[dict[str, Any]] = field(default_factory=list)
    content_type: str = "application/json"
    description: str = ""


OPERATIONS: dict[tuple[str, str], Operation] = {}


def operation(
    path: str,
    method: str,
    *,
    summary: str,
    tag: str,
    request: type[BaseModel] | None = None,
    responses: dict[int, tuple[str, type[BaseModel] | None]] | None = None,
    errors: tuple[int, ...] = (),
    parameters: list[dict[str, Any]] | None = None,
    content_type: str = "application/json",
    description: str = "",
) -> Callable[[F], F]:
    """Declare a view's contract (documentation only; the view validates with the same models)."""

    def deco(fn: F) -> F:
        op = Operation(
            path,
            method.lower(),
            fn.__name__,
            summary,
            tag,
            request,
            responses or {},
            errors,
            parameters or [],
            content_type,
            description or (fn.__doc__ or "").strip(),
        )
        OPERATIONS[(op.path, op.method)] = op
        return fn

    return deco


def _openapi_path(path: str) -> str:
    return re.sub(r"<(?:[a-z]+:)?([a-zA-Z_]+)>", r"{\1}", path)


def _state_schema() -> dict[str, Any]:
    """The engine's published state schema (`engine_ext.state_schema()`, self-contained)."""
    import engine_ext

    out = {k: v for k, v in engine_ext.state_schema().items() if k not in ("$schema", "$id")}
    out["description"] = (str(out.get("description", "")) + " Full or one player's view; see "
                          "docs/engine-api.md. The engine also checks what a schema cannot (card counts, "
                          "a consistent turn).").strip()
    return out


@functools.lru_cache(maxsize=1)
def _example_state() -> dict[str, Any] | None:
    try:
        from . import states

        g = states.new_game(2, 1, None)
        doc = g.to_json(observer=0)
        return doc if isinstance(doc, dict) else None
    except Exception:  # noqa: BLE001
        return None


def build_spec(server_url: str | None = None, limits: dict[str, int] | None = None,
               levels: list[str] | None = None, api_keys: bool = False) -> dict[str, Any]:
    """The OpenAPI document. `limits`: the `maximum` of SuggestRequest fields as this server enforces
    them (its settings), in place of the models' outer bounds; `levels`: the level names this
    server answers (its level file), the enum of SuggestRequest's `level`; `api_keys`: this server
    needs a bearer key on every operation but health and metrics."""
    from .clients import OPEN_PATHS

    req_models = {op.request for op in OPERATIONS.values() if op.request is not None}
    resp_models = {m for op in OPERATIONS.values() for (_, m) in op.responses.values() if m is not None}
    resp_models.add(models.ErrorBody)
    pairs: list[tuple[type[BaseModel], Any]] = [(m, "validation") for m in sorted(req_models, key=lambda m: m.__name__)]
    pairs += [(m, "serialization") for m in sorted(resp_models, key=lambda m: m.__name__)]
    keymap, defs = models_json_schema(pairs, ref_template="#/components/schemas/{model}", by_alias=True)
    schemas: dict[str, Any] = _replace_refs(dict(defs.get("$defs", {})))
    schemas["State"] = _state_schema()
    openapi_rules.bound_observers(schemas)
    openapi_rules.bound_variant(schemas)
    openapi_rules.bound_records(schemas)
    for name, maximum in (limits or {}).items():
        _set_maximum(schemas["SuggestRequest"]["properties"][name], maximum)
    if levels:
        for branch in schemas["SuggestRequest"]["properties"]["level"].get("anyOf", []):
            if branch.get("type") == "string":
                branch["enum"] = list(levels)

    def ref(model: type[BaseModel], mode: Any) -> dict[str, Any]:
        return dict(keymap[(model, mode)])  # type: ignore[index]

    example_state = _example_state()
    paths: dict[str, dict[str, Any]] = {}
    for op in sorted(OPERATIONS.values(), key=lambda o: (o.path, o.method)):
        item: dict[str, Any] = {"operationId": op.operation_id, "summary": op.summary, "tags": [op.tag]}
        if op.description:
            item["description"] = op.description
        if op.parameters:
            item["parameters"] = op.parameters
        if op.request is not None:
            media: dict[str, Any] = {"schema": ref(op.request, "validation")}
            if example_state is not None and "state" in op.request.model_fields:
                example: dict[str, Any] = {"state": example_state}
                if op.request is models.SuggestRequest:
                    example.update(iterations=50, seed=1, mode="sync")
                if op.request is models.ApplyRequest:
                    continue_ex = _first_legal_text(example_state)
                    if continue_ex is None:
                        example = {}
                    else:
                        example["decision"] = continue_ex
                if example:
                    media["example"] = example
            item["requestBody"] = {"required": True, "content": {"application/json": media}}
        responses: dict[str, Any] = {}
        for status, (desc, model) in sorted(op.responses.items()):
            entry: dict[str, Any] = {"description": desc}
            if model is not None:
                entry["content"] = {op.content_type: {"schema": ref(model, "serialization")}}
            elif op.content_type != "application/json":
                entry["content"] = {op.content_type: {"schema": {"type": "string"}}}
            responses[str(status)] = entry
        error_codes = set(op.errors) | {405}
        if op.path not in OPEN_PATHS:
            error_codes |= {429}
            if api_keys:
                item["security"] = [{"bearer": []}]
                error_codes |= {401, 403}
        if op.request is not None:
            error_codes |= {400, 408, 413, 415, 422}
        for status in sorted(error_codes):
            responses[str(status)] = {
                "description": ERROR_DESCRIPTIONS.get(status, "Method not allowed."),
                "content": {PROBLEM_JSON: {"schema": ref(models.ErrorBody, "serialization")}},
            }
        item["responses"] = responses
        paths.setdefault(_openapi_path(op.path), {})[op.method] = item
    spec: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {
            "title": "Kashgar AI",
            "version": _version(),
            "description": "An AI opponent for Kashgar: Merchants of the Silk Road. POST the game as your "
            "player sees it to /suggest and get the move to play, with the reasons.",
        },
        "paths": paths,
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
                                           "description": "An API key (servers with KASHGAR_API_KEYS)."}},
        },
    }
    if server_url:
        spec["servers"] = [{"url": server_url}]
    return spec


def _set_maximum(node: Any, maximum: int) -> None:
    """Every `maximum` in a property's schema (the integer branch of `int | None`) set to `maximum`."""
    if isinstance(node, dict):
        if "maximum" in node:
            node["maximum"] = maximum
        for v in node.values():
            _set_maximum(v, maximum)
    elif isinstance(node, list):
        for v in node:
            _set_maximum(v, maximum)


def server_limits(settings: Any) -> dict[str, int]:
    """The budget limits a server with these settings enforces (`/suggest` answers 422 above them)."""
    return {"iterations": settings.max_iterations, "time_ms": settings.max_ms, "parallel": settings.max_parts}


def _replace_refs(node: Any) -> Any:
    """Swap the `x-kashgar-ref` placeholders of the models for real `$ref`s."""
    if isinstance(node, dict):
        if "x-kashgar-ref" in node:
            return {"$ref": f"#/components/schemas/{node['x-kashgar-ref']}"}
        return {k: _replace_refs(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_replace_refs(v) for v in node]
    return node


def _first_legal_text(doc: dict[str, Any]) -> str | None:
    try:
        from . import states

        g = states.load_game(doc)
        legal = g.legal()
        return str(legal[0]) if legal else None
    except Exception:  # noqa: BLE001
        return None


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("kashgar-ai")
    except Exception:  # noqa: BLE001
        return "0.1.0"


bp = Blueprint("openapi", __name__)


@bp.get("/openapi.json")
@operation(
    "/openapi.json",
    "get",
    summary="This OpenAPI 3.1 document",
    tag="meta",
    responses={200: ("The OpenAPI document.", None)},
)
def openapi_json() -> Response:
    spec = current_app.extensions.get("kashgar_openapi")
    if spec is None:
        spec = _served_spec()
        current_app.extensions["kashgar_openapi"] = spec
    return jsonify(spec)


@bp.get("/docs/plain")
@operation(
    "/docs/plain",
    "get",
    summary="The API documentation as one plain page (no scripts)",
    tag="meta",
    responses={200: ("An HTML page.", None)},
    content_type="text/html",
)
def docs_page() -> Response:
    spec = current_app.extensions.get("kashgar_openapi") or _served_spec()
    return Response(render_docs(spec), mimetype="text/html")


#: Where the interactive documentation is: Swagger UI, served from the flask-swagger-ui package.
DOCS_PREFIX = "/docs"


def docs_blueprint() -> Any:
    """/docs/: the API to read and to try (Swagger UI from its package's files, no CDN), on this
    server's own /openapi.json; with API keys, its Authorize button takes one."""
    from flask_swagger_ui import get_swaggerui_blueprint

    return get_swaggerui_blueprint(DOCS_PREFIX, "/openapi.json", config={
        "app_name": "Kashgar AI API", "tryItOutEnabled": True, "persistAuthorization": False,
        "displayRequestDuration": True}, blueprint_name="docs")


def _served_spec() -> dict[str, Any]:
    """The document as this server answers: its budget limits and its levels."""
    from .levels import default_level, level_budget, level_names

    cfg = current_app.config["KASHGAR"]
    spec = build_spec(limits=server_limits(cfg), levels=list(level_names()),
                      api_keys=bool(current_app.extensions.get("kashgar_keys")))
    budgets = {name: level_budget(name) for name in level_names()}
    from bots.strength import ladder

    rungs = [(lv.name, float(lv.elo or 0.0)) for lv in ladder()]
    openapi_rules.bound_budgets(spec["components"]["schemas"], cfg, budgets, default_level(cfg.default_level), rungs)
    openapi_rules.bound_table(spec["components"]["schemas"], cfg, budgets, rungs)
    openapi_rules.bound_reviews(spec["components"]["schemas"], list(budgets))
    return spec


def render_docs(spec: dict[str, Any]) -> str:
    """One static page: every operation with its request schema, example and responses."""
    esc = html.escape
    out = [
        "<!doctype html><html><head><meta charset='utf-8'><title>Kashgar AI API</title><style>",
        "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}",
        "details{border:1px solid #ccc;border-radius:6px;margin:.5rem 0;padding:.4rem .8rem}",
        "summary{cursor:pointer;font-weight:600}.m{display:inline-block;width:4.5rem;font-family:monospace}",
        ".get{color:#0a6}.post{color:#06c}.delete{color:#c30}pre{background:#f6f6f6;padding:.6rem;",
        "overflow:auto;max-height:24rem;font-size:.85em}code{background:#f3f3f3;padding:0 .2em}",
        "</style></head><body>",
        f"<h1>{esc(spec['info']['title'])} <small>{esc(spec['info']['version'])}</small></h1>",
        f"<p>{esc(spec['info']['description'])}</p>",
        "<p>Machine-readable: <a href='/openapi.json'>/openapi.json</a> (OpenAPI 3.1). Errors are JSON: "
        "<code>error</code>, <code>message</code>, <code>pointer</code> (JSON pointer of the wrong field).</p>",
    ]
    for path, methods in spec["paths"].items():
        for method, op in methods.items():
            out.append(
                f"<details><summary><span class='m {esc(method)}'>{esc(method.upper())}</span>"
                f"<code>{esc(path)}</code> — {esc(op.get('summary', ''))}</summary>"
            )
            if op.get("description"):
                out.append(f"<p>{esc(op['description'])}</p>")
            body = op.get("requestBody", {}).get("content", {}).get("application/json")
            if body:
                schema = _resolve(spec, body["schema"])
                out.append("<h4>Request body</h4><pre>" + esc(json.dumps(schema, indent=2)) + "</pre>")
                if "example" in body:
                    ex = json.dumps(body["example"], indent=2)
                    out.append("<h4>Example</h4><pre>" + esc(ex[:6000]) + "</pre>")
            out.append("<h4>Responses</h4><ul>")
            for status, resp in op.get("responses", {}).items():
                out.append(f"<li><b>{esc(status)}</b> {esc(resp.get('description', ''))}</li>")
            out.append("</ul></details>")
    out.append("</body></html>")
    return "".join(out)


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
        return dict(spec["components"]["schemas"].get(ref.rsplit("/", 1)[1], schema))
    return schema
