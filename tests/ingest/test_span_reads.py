"""What the assembly keeps read across rounds stays true of the store: a batch under a known row id but received at
another time (the store emptied and filled again under the same engine) is read afresh, not taken from before."""

from __future__ import annotations

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.ingest.round_reads import SpanReads
from core.store.ingest import StoredBatch
from tests.ingest.genai_spans import otlp_body, record, tracer_provider


def _body(offset: int) -> bytes:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, 1, offset=offset)
    provider.shutdown()
    return otlp_body(list(memory.get_finished_spans()))


def _traces(reads: SpanReads, places: dict[int, set[int]]) -> set[str]:
    return {span.trace_id for _, span in reads.kept(places)}


def test_a_batch_received_again_under_a_known_id_is_read_afresh() -> None:
    reads = SpanReads()
    first = reads.load([StoredBatch(1, 1_000, "application/x-protobuf", _body(0))])
    before = _traces(reads, first)

    again = reads.load([StoredBatch(1, 2_000, "application/x-protobuf", _body(7))])

    assert before and _traces(reads, again) and _traces(reads, again).isdisjoint(before)


def test_a_batch_read_whole_is_not_parsed_twice_and_keeps_its_spans() -> None:
    reads = SpanReads()
    batch = StoredBatch(1, 1_000, "application/x-protobuf", _body(0))
    first = reads.load([batch])
    events = reads.events(reads.kept(first))

    again = reads.load([batch])

    assert again == first and reads.events(reads.kept(again)) == events


def test_past_the_bound_the_oldest_batches_are_forgotten_and_read_again_when_asked() -> None:
    reads = SpanReads()
    old = StoredBatch(1, 1_000, "application/x-protobuf", _body(0))
    first = reads.load([old])
    reads.load([StoredBatch(2, 2_000, "application/x-protobuf", _body(7))])
    kept = sum(map(len, first.values()))

    reads.forget_oldest(keep=kept)

    assert reads.missing(first) == first
    assert reads.load([old], first) == first and not reads.missing(first)
