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

from core.reader import StoreLine, read_bytes
from core.store import Store
from tests.store.test_store_run_lines import nested_text, run_line
from tests.web.web_corpus import XSS_PAYLOADS, every_kind, long_trace, temp_store
from web.app import create_app
from web.settings import Settings

EXAMPLES = int(os.environ.get("TRACELOUPE_FUZZ_EXAMPLES", "40"))
SEED = 20261201


def _store_with_runs() -> Store:
    """The every-kind corpus and, imported as an export's run lines, runs the API lists: one nested to the limit,
    one holding hostile text in every string."""
    messages = every_kind("plain text") + long_trace(250)
    store = temp_store(messages)
    cid = messages[0].conversation_id
    hostile = " ".join(XSS_PAYLOADS[:6]) + " \u202e\x1b[2J"
    deep = run_line(run_id="fuzz-deep", conversation_id=cid, request_body={"__body__": 0})
    text = deep.replace(b'{"__body__":0}', nested_text(250).encode())
    text += run_line(
        run_id="fuzz-hostile", conversation_id=cid, model=hostile[:200], error=hostile, status="http_error",
        response_body={"error": {"message": hostile, hostile[:50]: [hostile]}}, reply={"content": hostile},
    )  # fmt: skip
    lines: list[StoreLine] = []
    store.import_records(
        read_bytes(text, source="runs.jsonl", store_lines=lines), source="runs.jsonl", store_lines=lines
    )
    return store


# Loaded at collection (schemathesis's lazy ``from_fixture`` does not run under pytest 9).
schema = schemathesis.openapi.from_asgi(
    "/schema/openapi.json",
    create_app(Settings(allowed_hosts=("testserver",)), _store_with_runs()),  # the ASGI test client's Host
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
