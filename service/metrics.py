"""Prometheus metrics. Under gunicorn (`PROMETHEUS_MULTIPROC_DIR` set) every worker process
writes its samples to that directory and /metrics aggregates them; job outcomes and the queue
depth come from the job store, so they cover every web process and worker."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Flask, Response, current_app, g, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from .openapi import operation

METHODS = frozenset({"GET", "POST", "DELETE", "HEAD", "OPTIONS", "PUT", "PATCH"})  # any other: "other"
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.5, 0.75, 1.0, 2.0, 5.0, 10.0, 30.0)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Histogram(
            "kashgar_http_request_duration_seconds",
            "HTTP request latency",
            ["method", "route", "status"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.searches = Counter(
            "kashgar_searches_total", "Searches served (sync) or submitted (async)", ["mode", "level"], registry=r
        )
        self.iterations = Counter(
            "kashgar_search_iterations_total", "Iterations of synchronous searches", ["level"], registry=r
        )
        self.search_seconds = Histogram(
            "kashgar_search_duration_seconds", "Synchronous search time", ["level"], buckets=LATENCY_BUCKETS, registry=r
        )
        self.errors = Counter(
            "kashgar_request_errors_total", "Error answers (4xx, 5xx) by status and error code", ["status", "error"],
            registry=r,
        )


class JobsCollector(Collector):
    """Queue depth, active jobs and job outcomes, read from the job store at scrape time."""

    def __init__(self, app: Flask) -> None:
        self.app = app

    def collect(self) -> Iterator[Any]:
        manager = self.app.extensions.get("kashgar_jobs")
        up = GaugeMetricFamily("kashgar_queue_up", "1 when the job store/queue answers", labels=["backend"])
        if manager is None:
            return
        backend = manager.backend
        try:
            depth = manager.queue.depth()
            active = len(manager.store.active_ids())
            stats = manager.store.stats()
        except Exception:  # noqa: BLE001 - a scrape must not fail because Redis is down
            up.add_metric([backend], 0)
            yield up
            return
        up.add_metric([backend], 1)
        yield up
        g1 = GaugeMetricFamily("kashgar_queue_depth", "Parts waiting for a worker", labels=["backend"])
        g1.add_metric([backend], depth)
        yield g1
        g2 = GaugeMetricFamily("kashgar_jobs_active", "Jobs not yet finished, failed or cancelled", labels=["backend"])
        g2.add_metric([backend], active)
        yield g2
        c = CounterMetricFamily("kashgar_job_outcomes", "Jobs by outcome", labels=["backend", "outcome"])
        for outcome in ("finished", "failed", "cancelled"):
            c.add_metric([backend, outcome], stats.get(f"jobs_{outcome}", 0))
        yield c
        r = CounterMetricFamily(
            "kashgar_job_parts_retried", "Parts run again after their worker died", labels=["backend"]
        )
        r.add_metric([backend], stats.get("parts_retried", 0))
        yield r


def get(app: Flask | None = None) -> Metrics:
    return (app or current_app).extensions["kashgar_metrics"]  # type: ignore[no-any-return]


def init_app(app: Flask) -> None:
    metrics = Metrics()
    app.extensions["kashgar_metrics"] = metrics
    app.extensions["kashgar_jobs_collector"] = JobsCollector(app)

    @app.before_request
    def _t0() -> None:
        g.metrics_t0 = time.perf_counter()

    # a request's series, by (method, route, status): prometheus_client's own look-up of the
    # labels (their check, a lock) cost more than the observation
    series: dict[tuple[str, str, int], Any] = {}

    @app.after_request
    def _observe(resp: Response) -> Response:
        t0 = getattr(g, "metrics_t0", None)
        if t0 is not None:
            # every label value comes from a fixed set: a client must not be able to add series
            route = request.url_rule.rule if request.url_rule is not None else "unmatched"
            method = request.method if request.method in METHODS else "other"
            key = (method, route, resp.status_code)
            child = series.get(key)
            if child is None:
                child = series[key] = metrics.requests.labels(method, route, str(resp.status_code))
            child.observe(time.perf_counter() - t0)
        if resp.status_code >= 400 and resp.is_json:
            body = resp.get_json(silent=True)
            code = body.get("error") if isinstance(body, dict) else None
            # the codes are the server's own (service.errors), never the client's words
            metrics.errors.labels(str(resp.status_code), code if isinstance(code, str) else "other").inc()
        return resp


bp = Blueprint("metrics", __name__)


@bp.get("/metrics")
@operation(
    "/metrics",
    "get",
    summary="Prometheus metrics",
    tag="meta",
    responses={200: ("Prometheus text exposition format.", None)},
    content_type="text/plain",
)
def metrics_view() -> Response:
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = get(app).registry
    payload = generate_latest(registry)
    jobs_registry = CollectorRegistry(auto_describe=False)
    jobs_registry.register(app.extensions["kashgar_jobs_collector"])
    payload += generate_latest(jobs_registry)
    return Response(payload, mimetype=CONTENT_TYPE_LATEST.split(";")[0], headers={"Content-Type": CONTENT_TYPE_LATEST})
