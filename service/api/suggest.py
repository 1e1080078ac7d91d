"""POST /suggest: the decision to play, now (sync) or as a job (async)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from flask import Blueprint, Response, jsonify

import engine_ext
from bots.position import Position

from .. import admission, clients, idempotency, levels, metrics, search, states, strength
from ..config import Settings
from ..errors import APIError, join_pointer
from ..models import ErrorBody, JobAccepted, SuggestRequest, SuggestResponse
from ..openapi import operation, server_limits
from .common import IDEMPOTENCY_KEY_PARAM, manager, read_body, request_id, settings

bp = Blueprint("suggest", __name__)


def as_server_limit(err: APIError, cfg: Settings) -> APIError:
    """A budget above the request model's outer bound (`le`) is refused with this server's own
    limit, the one `/openapi.json` states: the model's bound is larger, and naming it sent a
    client that retried with it back for a second 422 (a server configured above the model's
    bound names the model's, which is then the real one)."""
    limits = server_limits(cfg)
    name = err.pointer.lstrip("/")
    if err.code == "validation_error" and name in limits and err.message.startswith("Input should be less than"):
        outer = min(getattr(m, "le", limits[name]) for m in SuggestRequest.model_fields[name].metadata)
        return APIError(422, "budget_out_of_range", f"{name} must be at most {min(limits[name], outer)}",
                        err.pointer)
    return err


def resolve(req: SuggestRequest, cfg: Settings, backend: str,
            workers: Callable[[], int | None] = lambda: None) -> tuple[search.SearchSpec, str, Position]:
    """The search to run, the mode to run it in and the position read from the request (loaded and
    checked once, here, for every part of a synchronous search); 422 for unknown levels,
    out-of-range budgets, impossible states, hidden choices and games that are over. `backend` and `workers`
    (how many run a job's parts, when known): the job queue's, for an async search's parts."""
    names = levels.level_names()
    level, position = req.level, None
    if req.elo is not None:  # the level that searches this decision, drawn (service/strength.py)
        level, position = strength.elo_position(req.elo, req.level, req.iterations is not None
                                                or req.time_ms is not None, req.state, req.seed)
    if level is not None and level not in names:
        raise APIError(422, "unknown_level", f"unknown level {level!r}; levels: {', '.join(names)}", "/level")
    if level is None and req.iterations is None and req.time_ms is None:
        level = levels.default_level(cfg.default_level)
        if level is None:
            raise APIError(422, "no_budget", "give a level or a budget (iterations or time_ms)", "")
    iterations, time_ms = req.iterations, req.time_ms
    if level is not None and iterations is None and time_ms is None:
        iterations, time_ms = levels.level_budget(level)
    if iterations is not None and iterations > cfg.max_iterations:
        raise APIError(422, "budget_out_of_range", f"iterations must be at most {cfg.max_iterations}", "/iterations")
    if time_ms is not None and time_ms > cfg.max_ms:
        raise APIError(422, "budget_out_of_range", f"time_ms must be at most {cfg.max_ms}", "/time_ms")
    if req.parallel is not None and req.parallel > cfg.max_parts:
        raise APIError(422, "budget_out_of_range", f"parallel must be at most {cfg.max_parts}", "/parallel")
    fits_sync = search.fits_sync(iterations, time_ms, cfg)
    # A synchronous search runs its parts one after the other, each for the whole time budget.
    sync_wall_ms = None if time_ms is None else time_ms * (req.parallel or 1)
    parts_fit_sync = sync_wall_ms is None or sync_wall_ms <= cfg.sync_max_ms
    mode = req.mode
    if mode == "sync" and fits_sync and not parts_fit_sync:
        raise APIError(
            422,
            "budget_too_large_for_sync",
            f"a synchronous search runs its {req.parallel} parts one after the other, each for time_ms: "
            f"{sync_wall_ms} ms in all, over the synchronous limit of {cfg.sync_max_ms} ms; "
            "use mode async or auto, or fewer parts",
            "/parallel",
        )
    fits_sync = fits_sync and parts_fit_sync
    if mode == "sync" and not fits_sync:
        over_it = iterations is not None and iterations > cfg.sync_max_iterations
        field = (
            "iterations"
            if over_it and req.iterations is not None
            else "time_ms"
            if req.time_ms is not None
            else "iterations"
            if req.iterations is not None
            else "elo"
            if req.elo is not None
            else "level"
        )
        limit = f"{cfg.sync_max_iterations} iterations and {cfg.sync_max_ms} ms"
        raise APIError(
            422,
            "budget_too_large_for_sync",
            f"a synchronous search is limited to {limit}; use mode async or auto",
            "/" + field,
        )
    if mode == "auto":
        mode = "sync" if fits_sync else "async"
    # A job must not be queued for a state the search would reject, nor a search run on a view
    # whose player to move chooses among cards the view does not show.
    position = position or states.position_of(req.state, level, "/state")
    parallel = req.parallel
    if parallel is None:
        # an async time budget: its parts run side by side, as many as there are RQ workers to run them
        running = workers() if mode == "async" and iterations is None else None
        parallel = search.default_parallel(iterations, time_ms, cfg, mode == "async", backend, running)
    spec = search.SearchSpec(
        state=req.state, level=level, iterations=iterations, time_ms=time_ms, seed=req.seed, parallel=parallel,
        cards=position.game.engine.data.sha256, elo=req.elo,
    )
    return spec, mode, position


@bp.post("/suggest")
@operation(
    "/suggest",
    "post",
    summary="The decision to play in a state",
    tag="search",
    request=SuggestRequest,
    responses={
        200: ("The suggestion (synchronous search).", SuggestResponse),
        202: ("Accepted as a job; poll status_url.", JobAccepted),
    },
    errors=(400, 409, 429, 503),
    parameters=[IDEMPOTENCY_KEY_PARAM],
)
def suggest() -> tuple[Response, int] | tuple[Response, int, dict[str, str]]:
    """Search the given state (a player's view, any decision point, mid-turn included) and answer
    the decision with its alternatives. Same seed and inputs, same answer, for an iteration budget
    (a time budget searches as far as the machine gets)."""
    try:
        req = read_body(SuggestRequest)
    except APIError as err:
        raise as_server_limit(err, settings()) from None
    key = idempotency.key_of()
    spec, mode, position = resolve(req, settings(), manager().backend, manager().queue.workers)
    m = metrics.get()
    label = spec.level or "custom"
    cost = admission.cost_seconds(spec, settings())
    if mode == "sync":
        t0 = time.perf_counter()
        with admission.sync_search(manager(), clients.current(), cost):
            answer = search_now(spec, position, settings().sync_timeout_ms)
        m.searches.labels("sync", label).inc()
        m.iterations.labels(label).inc(int(answer.get("iterations", 0)))
        m.search_seconds.labels(label).observe(time.perf_counter() - t0)
        body: dict[str, Any] = dict(answer)
        body["request_id"] = request_id()
        body["mode"] = "sync"
        return jsonify(body), 200
    client = clients.current()
    rec, replayed = idempotency.submit_once(manager(), client, key, lambda: manager().submit(
        spec, request_id(), client.id,  # StoreUnavailable -> 503, past a limit -> 429
        admit=lambda job_id: admission.admit_async(manager(), client, job_id, cost), cost=cost))
    if not replayed:
        m.searches.labels("async", label).inc()
    return idempotency.accepted(rec, manager().backend, request_id(), replayed)


def search_now(spec: search.SearchSpec, position: Position, timeout_ms: int | None) -> dict[str, Any]:
    """A synchronous search's answer (every part in this process); 422 for a state the search
    rejects. `kashgar engine` answers with it too."""
    try:
        answer = search.run_sync(spec, timeout_ms=timeout_ms, position=position)
        return answer if spec.elo is None else {**answer, "elo": spec.elo}
    except engine_ext.StateError as exc:
        raise states.state_error(exc, "/state") from None
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError) as exc:
        ptr = getattr(exc, "pointer", None)
        raise APIError(
            422,
            "search_rejected_state",
            f"the search cannot run on this state: {getattr(exc, 'message', None) or exc}",
            join_pointer("/state", ptr) if isinstance(ptr, str) else "/state",
        ) from None


_ = ErrorBody  # documented through openapi.operation(errors=...)
