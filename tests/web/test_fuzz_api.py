"""Schemathesis against ``/schema/openapi.json``: no 500 and every response as the schema says (security.md §2.11).

In-process over ASGI (no server, no network), a fixed seed and a bounded number of
examples per operation, so a CI run is repeatable and takes seconds. Set
``TRACELOUPE_FUZZ_EXAMPLES`` (default 40) to search harder.
"""

from __future__ import annotations

import os

import hypothesis
import schemathesis
from hypothesis import HealthCheck
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.web.web_corpus import make_app

EXAMPLES = int(os.environ.get("TRACELOUPE_FUZZ_EXAMPLES", "40"))
SEED = 20261201


# Loaded at collection (schemathesis's lazy ``from_fixture`` does not run under pytest 9).
schema = schemathesis.openapi.from_asgi(
    "/schema/openapi.json",
    make_app(allowed_hosts=("testserver",)),  # the ASGI test client's Host
)


@schema.parametrize()
@hypothesis.seed(SEED)
@hypothesis.settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)
def test_api_fuzz_no_server_error_and_responses_match_schema(case: schemathesis.Case) -> None:
    case.call_and_validate(
        checks=[not_a_server_error, response_schema_conformance, status_code_conformance, content_type_conformance]
    )
