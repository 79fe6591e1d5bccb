"""One huge conversation received with small ones does not hold them up: a round writes each unit of tied traces
on its own, the fewest spans first, and takes every later batch of the traces it assembles, so a conversation
sent in many batches is assembled once while the small ones wait one round at most."""

from __future__ import annotations

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from sqlalchemy import text

from core.ingest import store_batch
from core.ingest.assembly import assemble_round
from core.ingest.intake import waiting
from core.store import Store
from tests.ingest.genai_spans import otlp_body, record, tracer_provider

HUGE_TURNS = 60
SMALL = 3


def _spans(offset: int, conversations: int, turns: int) -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, conversations, turns=turns, offset=offset)
    provider.shutdown()
    return list(memory.get_finished_spans())


def _body(offset: int, conversations: int, turns: int) -> bytes:
    return otlp_body(_spans(offset, conversations, turns))


def test_small_conversations_are_written_before_a_huge_one_received_first(store: Store) -> None:
    store_batch(store, _body(0, 1, HUGE_TURNS), "application/x-protobuf", key_pk=None)  # the oldest, and the first
    store_batch(store, _body(1, SMALL, 1), "application/x-protobuf", key_pk=None)

    report = assemble_round(store)

    assert report.conversations == {f"conv-{i}" for i in range(SMALL + 1)}
    order = "SELECT c.conversation_id FROM conversations c JOIN messages m ON m.conversation_pk = c.id GROUP BY c.id"
    with store.engine.connect() as conn:
        written = [row[0] for row in conn.execute(text(order + " ORDER BY min(m.id)"))]
    assert written[-1] == "conv-0" and sorted(written[:-1]) == [f"conv-{i}" for i in range(1, SMALL + 1)]


def test_a_conversation_sent_in_many_batches_is_assembled_in_one_round_and_the_others_in_the_next(
    store: Store,
) -> None:
    huge = _spans(0, 1, HUGE_TURNS)
    for start in range(0, len(huge), 3):  # one export per turn, as a batching exporter sends a long agent run
        store_batch(store, otlp_body(huge[start : start + 3]), "application/x-protobuf", key_pk=None)
    store_batch(store, _body(1, SMALL, 1), "application/x-protobuf", key_pk=None)

    first = assemble_round(store, limit=10)
    second = assemble_round(store, limit=10)

    assert first.conversations == {"conv-0"} and first.batches == -(-len(huge) // 3)
    assert second.conversations == {f"conv-{i}" for i in range(1, SMALL + 1)}
    assert waiting(store, 1) == 0
