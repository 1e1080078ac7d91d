"""POST /reviews: a game review as a job (one search per decision, spread over the workers)."""

from __future__ import annotations

from flask import Blueprint, Response

from .. import admission, clients, idempotency, metrics, review, search
from ..models import JobAccepted, ReviewRequest
from ..openapi import operation
from .common import IDEMPOTENCY_KEY_PARAM, manager, read_body, request_id, settings

bp = Blueprint("reviews", __name__)


def cost_seconds(spec: review.ReviewSpec) -> float:
    """A review's search-seconds: one search of its level for every decision it reviews."""
    one = search.SearchSpec(state={}, level=spec.level, iterations=spec.iterations, time_ms=spec.time_ms,
                            seed=spec.seed, parallel=1)
    return admission.cost_seconds(one, settings()) * len(spec.moves)


@bp.post("/reviews")
@operation(
    "/reviews",
    "post",
    summary="Review a game: where each seat lost its chances",
    tag="search",
    request=ReviewRequest,
    responses={202: ("Accepted as a job; follow status_url (or its /events stream).", JobAccepted)},
    errors=(400, 409, 413, 429, 503),
    parameters=[IDEMPOTENCY_KEY_PARAM],
)
def create_review() -> tuple[Response, int, dict[str, str]]:
    """Search every decision of a game record that had more than one legal choice, at `level`
    (default master), from the view of the seat that made it at that moment (no deck order, no other
    seat's hidden cards), and judge the move played against the level's choice: win chances, expected
    VP, the loss and its class, and per seat the mean loss, the count per class and an accuracy. A
    job: 202 and `Location`; `GET /jobs/<id>` gives the progress (decisions done / total) and the
    review; `GET /jobs/<id>/events` streams each decision as it is reviewed. 422 names the move of
    a record that does not replay; 413 for a record of more than 600 moves; 429 past the admission
    limits (a level whose review costs more than this client's allowance)."""
    key = idempotency.key_of()
    req = read_body(ReviewRequest)
    spec = review.plan(req.record, req.level, req.seats, req.seed)
    client = clients.current()
    cost = cost_seconds(spec)
    rec, replayed = idempotency.submit_once(manager(), client, key, lambda: manager().submit_parts(
        spec.to_dict(), spec.parts, request_id(), client.id,
        admit=lambda job_id: admission.admit_async(manager(), client, job_id, cost), cost=cost))
    if not replayed:
        metrics.get().searches.labels("review", spec.level).inc()
    return idempotency.accepted(rec, manager().backend, request_id(), replayed)
