"""One huge conversation received with small ones does not hold them up: a round writes each unit of tied traces
on its own, the fewest spans first, so the small conversations are stored before the huge one is assembled."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import text

from core.ingest import store_batch
from core.ingest.assembly import assemble_round
from core.store import Store
from tests.ingest.genai_spans import otlp_body, record, tracer_provider

HUGE_TURNS = 60
SMALL = 3


def _body(offset: int, conversations: int, turns: int) -> bytes:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, conversations, turns=turns, offset=offset)
    provider.shutdown()
    return otlp_body(memory.get_finished_spans())


def test_small_conversations_are_written_before_a_huge_one_received_first(store: Store) -> None:
    store_batch(store, _body(0, 1, HUGE_TURNS), "application/x-protobuf", key_pk=None)  # the oldest, and the first
    store_batch(store, _body(1, SMALL, 1), "application/x-protobuf", key_pk=None)

    report = assemble_round(store)

    assert report.conversations == {f"conv-{i}" for i in range(SMALL + 1)}
    order = "SELECT c.conversation_id FROM conversations c JOIN messages m ON m.conversation_pk = c.id GROUP BY c.id"
    with store.engine.connect() as conn:
        written = [row[0] for row in conn.execute(text(order + " ORDER BY min(m.id)"))]
    assert written[-1] == "conv-0" and sorted(written[:-1]) == [f"conv-{i}" for i in range(1, SMALL + 1)]
