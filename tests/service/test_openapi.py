"""schemathesis against /openapi.json (bounded examples): no server errors, every response
conforms to the documented status codes, content types and schemas, and schema-invalid requests
are rejected. (Schema-valid requests may still get a 422: a state can be well-formed JSON and
still impossible, a decision well-formed and illegal; so `positive_data_acceptance` is off.)"""

from __future__ import annotations

import os
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis import checks

from service import create_app

app = create_app(
    {
        "TESTING": True,
        "sync_max_iterations": 60,
        "sync_max_ms": 100,
        "max_iterations": 500,
        "max_ms": 200,
        "part_iterations": 30,
        "max_parts": 4,
        "log_level": "ERROR",
    }
)
schema = schemathesis.openapi.from_wsgi("/openapi.json", app)


@schema.parametrize()
@settings(
    max_examples=int(os.environ.get("KASHGAR_SCHEMATHESIS_EXAMPLES", "12")),
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms(case: Any) -> None:
    case.call_and_validate(excluded_checks=[checks.positive_data_acceptance])
