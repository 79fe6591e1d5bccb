"""A real agent run's export requests, as its exporter sent them (rungalileo/galileo-agents, cited in
``tests/formats/data/README.md``), received one at a time: one conversation, the run, however often they come."""

from __future__ import annotations

from pathlib import Path

import orjson

from core.ingest import assemble_pending, store_batch
from core.store import Store
from tests.core.formats.summary import summary, tool_calls

OTLP = Path(__file__).parents[1] / "formats" / "data" / "otlp"
RUN = OTLP / "galileo_weather_run"
REQUESTS = [
    *(RUN / f"traces_20251210_{sent}.bin" for sent in ("172856_661974", "172857_278466", "172857_294130")),
    RUN / "traces_20251210_172857_302197.bin",
    OTLP / "galileo_langgraph_weather_call2.pb",  # traces_20251210_172858_197648.bin as published
    *(RUN / f"traces_20251210_{sent}.bin" for sent in ("172858_206281", "172858_212453")),
]
"""The seven requests of one LangGraph weather agent run in the order they were sent (their names are their
times): the first model call, its graph task, the tool span, its graph task, the second model call, its graph task,
the graph's span."""


def _conversations(store: Store) -> dict[str, list[str]]:
    found: dict[str, list[dict[str, object]]] = {}
    for line in store.export_texts():
        record = orjson.loads(line)
        found.setdefault(record["conversation_id"], []).append(record)
    return {cid: summary(records) + [repr(c) for c in tool_calls(records)] for cid, records in found.items()}


def test_an_agent_runs_export_requests_received_one_by_one_are_one_conversation(store: Store) -> None:
    # Each model call's span is a request of its own, and neither carries a conversation id: the second call
    # resends the first one's history, so the two are one conversation, named after the first call's span.
    for request in REQUESTS:
        store_batch(store, request.read_bytes(), "application/x-protobuf", key_pk=None)
        assemble_pending(store)
    expected = {
        "793b3013ecf2cabf": [
            *["system", "user:text", "  assistant:text+1calls", "  tool:call_BKNI3yfXs4ZRl7ZIDQEw9hK3"],
            "  assistant:text",
            repr(("call_BKNI3yfXs4ZRl7ZIDQEw9hK3", "weather_tool", '{"city": "San Francisco"}')),
        ]
    }
    assert _conversations(store) == expected
    first = list(store.export_texts())
    for request in reversed(REQUESTS):  # an exporter retrying them all
        store_batch(store, request.read_bytes(), "application/x-protobuf", key_pk=None)
    assemble_pending(store)
    assert list(store.export_texts()) == first
