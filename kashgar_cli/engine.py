"""`kashgar engine`: the API on stdin and stdout, without HTTP, for a program in any language that
runs the bots as a subprocess (as GUIs drive KataGo's analysis engine or a UCI chess engine).

One JSON object a line on stdin: the body of `POST /games`, `/legal`, `/apply` or `/suggest`, with
`op` naming which (`games`, `legal`, `apply`, `suggest`; also `levels`, `cards`) and any `id` of
the caller's (a string or a number, sent back). One JSON object a line on stdout for each, in
order: `id`, `op`, `status` (the HTTP status the API would answer) and the API's answer, or its
error body (`error`, `message`, `pointer` into the request line, ...). A line that is not JSON or
not a request, a blank line included, is answered with an error (`id: null` when the line has no
`id` it can send back), and the engine reads on; end of input (Ctrl-D) ends it
with status 0. A line is at most `KASHGAR_MAX_BODY_BYTES` long (a longer one: 413).

The answers are the API's, computed by the same functions; a search runs here whatever its
budget (there is no job queue: `mode` is checked, then every search answers at once, as
`mode: sync` does, without the server's synchronous limits or its time cap), within the
`KASHGAR_MAX_ITERATIONS` / `KASHGAR_MAX_MS` caps."""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Callable
from typing import IO, Any

from kashgar_cli.errors import CliError

#: The operations and the request each takes (its fields beside `id` and `op`).
OPS = ("games", "legal", "apply", "suggest", "levels", "cards")
ENVELOPE = ("id", "op")


def register(subparsers: Any) -> None:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "engine",
        help="the API as JSON lines on stdin/stdout (embed the bots as a subprocess)",
        description="Read one JSON request a line on stdin ({\"id\": ..., \"op\": \"games|legal|apply|suggest|"
        "levels|cards\", ...the body of POST /OP}) and write one JSON answer a line on stdout ({\"id\", \"op\", "
        "\"status\", ...the API's answer or error body}). End of input ends it. See docs/integrate.md.",
    )
    p.set_defaults(func=run)


class LineServer:
    """Answers request lines as the HTTP API does, with the service's own functions, outside any app
    (the server of `kashgar engine`; "engine" elsewhere is the rules package, `engine_ext`)."""

    def __init__(self) -> None:
        from service.api.levels import check_default
        from service.config import Settings

        try:
            self.settings = Settings.from_env()
            check_default(self.settings.default_level)  # the level file holds the default in use
        except ValueError as exc:
            raise CliError(str(exc)) from None
        self._ops: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "games": self._games, "legal": self._legal, "apply": self._apply, "suggest": self._suggest,
            "levels": self._levels, "cards": self._cards,
        }

    def answer(self, line: bytes | str) -> dict[str, Any]:
        """The answer line of one request line (never raises for the caller's input)."""
        from service.errors import APIError, parse_json_body

        ident: Any = None
        op: Any = None
        try:
            doc = parse_json_body(line.encode() if isinstance(line, str) else line)
            if not isinstance(doc, dict):
                raise APIError(422, "validation_error", "a request is a JSON object", "")
            ident, op = doc.get("id"), doc.get("op")
            if ident is not None and not echoable(ident):
                ident = None
                raise APIError(422, "validation_error", "id must be a string or a finite number", "/id")
            if op not in self._ops:
                raise APIError(422, "unknown_op", f"op must be one of {', '.join(OPS)}, not {json.dumps(op)}",
                               "/op")
            body = {k: v for k, v in doc.items() if k not in ENVELOPE}
            return {"id": ident, "op": op, "status": 200, **self._ops[op](body)}
        except APIError as err:
            return {"id": ident, "op": op, "status": err.status, **err.body()}
        except Exception as exc:  # noqa: BLE001 - a bug answers 500 and the server reads on
            logging.getLogger("kashgar.engine").exception("unhandled error: %s", exc)
            return {"id": ident, "op": op, "status": 500,
                    **APIError(500, "internal_error", f"internal error: {exc.__class__.__name__}", "").body()}

    def _games(self, body: dict[str, Any]) -> dict[str, Any]:
        from service.api.rules import new_game_answer
        from service.errors import validate_model
        from service.models import NewGameRequest

        return new_game_answer(validate_model(NewGameRequest, body))

    def _legal(self, body: dict[str, Any]) -> dict[str, Any]:
        from service.api.rules import legal_answer
        from service.errors import validate_model
        from service.models import LegalRequest

        return legal_answer(validate_model(LegalRequest, body))

    def _apply(self, body: dict[str, Any]) -> dict[str, Any]:
        from service.api.rules import apply_answer
        from service.errors import validate_model
        from service.models import ApplyRequest

        return apply_answer(validate_model(ApplyRequest, body))

    def _suggest(self, body: dict[str, Any]) -> dict[str, Any]:
        from service.api.suggest import as_server_limit, resolve, search_now
        from service.errors import APIError, validate_model
        from service.models import SuggestRequest

        try:
            req = validate_model(SuggestRequest, body)
        except APIError as err:
            raise as_server_limit(err, self.settings) from None
        spec, _, position = resolve(req, self.settings, "embedded")
        return dict(search_now(spec, position, None))

    def _levels(self, body: dict[str, Any]) -> dict[str, Any]:
        from service.api.levels import levels_answer

        self._no_fields(body)
        return levels_answer(self.settings, served=False)

    def _cards(self, body: dict[str, Any]) -> dict[str, Any]:
        from service import cards, levels

        self._no_fields(body)
        data = cards.cards()
        return dict(levels.finite({"cards": data["cards"], "contracts": data["contracts"],
                                   "count": len(data["cards"]) + len(data["contracts"]), "file": cards.cards_file()}))

    @staticmethod
    def _no_fields(body: dict[str, Any]) -> None:
        from service.errors import APIError, pointer

        if body:
            key = sorted(body)[0]
            raise APIError(422, "validation_error", f"unknown field {key!r}: this op takes none", pointer(key))


def echoable(ident: Any) -> bool:
    """Whether an `id` can be sent back as it came: a string or a finite number (`1e400` reads as
    infinity, which JSON cannot write)."""
    if isinstance(ident, float):
        return math.isfinite(ident)
    return isinstance(ident, (str, int)) and not isinstance(ident, bool)


def answer_line(answer: dict[str, Any]) -> str:
    """The line of an answer; an answer that cannot be written as JSON is answered 500 in its place
    (with its id and op, which `LineServer.answer` has checked)."""
    try:
        return json.dumps(answer, separators=(",", ":"), allow_nan=False) + "\n"
    except (TypeError, ValueError) as exc:
        from service.errors import APIError

        logging.getLogger("kashgar.engine").exception("unwritable answer: %s", exc)
        err = APIError(500, "internal_error", f"internal error: the answer cannot be written as JSON ({exc})", "")
        ident, op = answer.get("id"), answer.get("op")
        return json.dumps({"id": ident if echoable(ident) else None, "op": op if isinstance(op, str) else None,
                           "status": 500, **err.body()}, separators=(",", ":")) + "\n"


def blank_line() -> dict[str, Any]:
    """The answer to a blank line: an error, so that every line gets one answer."""
    from service.errors import APIError

    err = APIError(400, "empty_body", "a blank line is not a request: send one JSON object a line", "")
    return {"id": None, "op": None, "status": 400, **err.body()}


def too_long(limit: int) -> dict[str, Any]:
    """The answer to a line longer than `limit` bytes (KASHGAR_MAX_BODY_BYTES, as a body over HTTP)."""
    from service.errors import APIError

    err = APIError(413, "body_too_large", f"the request line is larger than {limit} bytes", "")
    return {"id": None, "op": None, "status": 413, **err.body()}


def serve(stdin: IO[bytes], stdout: IO[str]) -> int:
    """Answer every line of `stdin` on `stdout` until its end, one answer a line: a blank line is
    answered 400, a line over the body limit 413 and read past."""
    server = LineServer()
    limit = server.settings.max_body_bytes
    while True:
        line = stdin.readline(limit + 1)
        if not line:
            return 0
        if len(line) > limit and not line.endswith(b"\n"):
            while (rest := stdin.readline(65536)) and not rest.endswith(b"\n"):
                pass  # the rest of the long line
            answer = too_long(limit)
        elif not line.strip():
            answer = blank_line()
        else:
            answer = server.answer(line)
        stdout.write(answer_line(answer))
        stdout.flush()


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    return serve(sys.stdin.buffer, sys.stdout)
