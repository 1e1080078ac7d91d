"""Errors as problem details (RFC 9457, `application/problem+json`): every 4xx/5xx body has the
standard members `type` (`about:blank`: the status says what kind of problem), `title` (the
status's reason phrase), `status` and `detail`, and the service's own: `error` (a code),
`message` (as `detail`), `pointer`, `in`, `errors` and `request_id`.

`pointer` is a JSON pointer (RFC 6901) into the request body (`""` is the whole body); for path
and query parameters and headers `in` says where the pointer points (`"path"`, `"query"`, `"header"`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from http import HTTPStatus
from typing import Any

from flask import Flask, Response, g, has_app_context, jsonify
from pydantic import BaseModel, ValidationError
from werkzeug.exceptions import HTTPException

log = logging.getLogger("kashgar.service")


def escape_token(token: object) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(*tokens: object) -> str:
    """`pointer("state", "seats", 0)` -> `/state/seats/0`."""
    return "".join("/" + escape_token(t) for t in tokens)


def join_pointer(prefix: str, inner: str) -> str:
    """Prefix a pointer reported relative to a sub-document (`/state` + `/seats/0`)."""
    if inner and not inner.startswith("/"):
        inner = "/" + inner
    return prefix + inner


class APIError(Exception):
    """An error answered as JSON with an HTTP status."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        pointer: str = "",
        errors: Sequence[dict[str, str]] | None = None,
        location: str = "body",
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.pointer = pointer
        self.location = location
        self.errors = list(errors) if errors else [{"pointer": pointer, "message": message}]
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {
            "type": "about:blank",
            "title": _phrase(self.status),
            "status": self.status,
            "detail": self.message,
            "error": self.code,
            "message": self.message,
            "pointer": self.pointer,
            "in": self.location,
            "errors": self.errors,
            "request_id": getattr(g, "request_id", None) if has_app_context() else None,
        }


#: The `error` code of an HTTP error answered without a more specific one.
HTTP_CODES = {
    400: "bad_request",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "body_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    417: "expectation_failed",
    431: "header_fields_too_large",
    500: "internal_error",
    501: "not_implemented",
}


def http_code(status: int, reason: str) -> str:
    """The `error` code of status `status` (its reason phrase in snake case when none is listed)."""
    return HTTP_CODES.get(status, reason.lower().replace(" ", "_"))


# pydantic puts the member type of a union into `loc`; those tokens are not part of the document.
_UNION_TAGS = ("str", "int", "float", "bool", "dict", "list", "none", "function-", "literal[", "tagged-union",
               "constrained-")


def _clean_loc(loc: Iterable[int | str]) -> list[int | str]:
    out: list[int | str] = []
    for token in loc:
        if (
            isinstance(token, str)
            and any(token.lower().startswith(tag) for tag in _UNION_TAGS)
            and ("[" in token or token.lower() in {"str", "int", "float", "bool", "none"}
                 or token.startswith("constrained-"))  # a constrained member: `constrained-str`
        ):
            continue
        out.append(token)
    return out


def from_validation_error(exc: ValidationError, prefix: str = "", location: str = "body") -> APIError:
    errors = []
    for err in exc.errors(include_url=False):
        ptr = prefix + pointer(*_clean_loc(err.get("loc", ())))
        msg = str(err.get("msg", "invalid")).removeprefix("Value error, ")  # our own validators' words
        errors.append({"pointer": ptr, "message": msg})
    first = errors[0] if errors else {"pointer": prefix, "message": "invalid"}
    return APIError(422, "validation_error", first["message"], first["pointer"], errors, location)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json_body(data: bytes) -> Any:
    """Strict JSON: no NaN/Infinity, UTF-8, bounded depth (RecursionError), no key twice in one
    object (the pointer names the second) -> 400 with a pointer."""
    if not data or not data.strip():
        raise APIError(400, "empty_body", "the request body must be a JSON document", "")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise APIError(400, "malformed_json", f"the body is not UTF-8: {exc.reason} at byte {exc.start}", "") from None
    try:
        repeats: list[bool] = []
        doc = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=lambda pairs: _object(pairs, repeats))
    except json.JSONDecodeError as exc:
        raise APIError(
            400, "malformed_json", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", ""
        ) from None
    except (ValueError, RecursionError) as exc:
        raise APIError(400, "malformed_json", f"malformed JSON: {exc}", "") from None
    pointer = _first_duplicate(doc, "") if repeats else None
    if pointer is not None:
        raise APIError(400, "duplicate_key", "a key appears twice in one JSON object (readers disagree on which "
                       "wins): send each key once", pointer)
    return doc


class _Object(dict):  # type: ignore[type-arg]
    """A JSON object that repeats a key (`repeated`, the first one it repeats)."""

    repeated: str = ""


def _object(pairs: list[tuple[str, Any]], repeats: list[bool]) -> dict[str, Any]:
    """The object of `pairs`: a plain dict, or an `_Object` naming its first repeated key (and
    `repeats` told so, so that only a document with one is searched for it)."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            break
        seen.add(key)
    marked = _Object(obj)
    marked.repeated = key
    repeats.append(True)
    return marked


def _child(pointer: str, key: str | int) -> str:
    """`pointer` to the member `key` (RFC 6901: `~` and `/` escaped)."""
    return f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"


def _first_duplicate(node: Any, pointer: str) -> str | None:
    """The JSON pointer of the second occurrence of the first repeated key found, depth first in
    document order; None when no object repeats a key."""
    if isinstance(node, _Object):
        return _child(pointer, node.repeated)
    if isinstance(node, dict):
        children: Any = node.items()
    elif isinstance(node, list):
        children = enumerate(node)
    else:
        return None
    for key, value in children:
        found = _first_duplicate(value, _child(pointer, key))
        if found is not None:
            return found
    return None


def validate_model(model: type[BaseModel], payload: Any) -> Any:
    if not isinstance(payload, dict):
        raise APIError(422, "validation_error", "the body must be a JSON object", "")
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise from_validation_error(exc) from None


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


#: The media type of every error body (RFC 9457).
PROBLEM_JSON = "application/problem+json"


def error_response(err: APIError) -> Response:
    resp = jsonify(err.body())
    resp.mimetype = PROBLEM_JSON
    resp.status_code = err.status
    for k, v in err.headers.items():
        resp.headers[k] = v
    return resp


def init_app(app: Flask) -> None:
    """JSON bodies for every error, including Flask's own (404, 405, 413) and unexpected ones."""

    @app.errorhandler(APIError)
    def _api_error(err: APIError) -> Response:
        return error_response(err)

    @app.errorhandler(HTTPException)
    def _http_error(err: HTTPException) -> Response:
        status = err.code or 500
        message = err.description or err.name
        if status == 413:
            message = f"the request body is larger than {app.config.get('MAX_CONTENT_LENGTH')} bytes"
        # an unknown route, or a method it does not take, is the request's path; the rest its body
        where = "path" if status in (404, 405) else "body"
        api = APIError(status, http_code(status, err.name), message, "", location=where)
        resp = error_response(api)
        if status == 405:
            valid = getattr(err, "valid_methods", None)
            if valid:
                resp.headers["Allow"] = ", ".join(valid)
        return resp

    @app.errorhandler(Exception)
    def _unexpected(err: Exception) -> Response:
        log.exception("unhandled error: %s", err)
        return error_response(APIError(500, "internal_error", "internal error; the request id is in the logs", ""))
