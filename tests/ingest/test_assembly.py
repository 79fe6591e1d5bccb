"""Spans received in any order, split over any requests, sent any number of times: the stored conversations are
those one clean file import of the same spans gives."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core.formats.importing import read_foreign
from core.formats.registry import format_named
from core.ingest import assemble_pending, store_batch
from core.store import Store
from tests.ingest.genai_spans import otlp_body, record, tracer_provider

CONVERSATIONS = 3
_offsets = itertools.count(0, CONVERSATIONS)


def _spans(offset: int) -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = tracer_provider(memory)
    record(provider, CONVERSATIONS, offset=offset)
    provider.shutdown()
    return list(memory.get_finished_spans())


def _ids(offset: int) -> list[str]:
    return [f"conv-{offset + c}" for c in range(CONVERSATIONS)]


def _stored(store: Store, ids: Sequence[str]) -> list[tuple[list[str], list[dict[str, object]]]]:
    return [(list(store.export_texts(cid)), list(store.export_records(cid))) for cid in ids]


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    """Where the clean file imports go (each example's conversations have ids of their own)."""
    with Store.open(str(tmp_path_factory.mktemp("clean") / "clean.db")) as opened:
        yield opened


def _file_import(store: Store, spans: Sequence[ReadableSpan]) -> None:
    body = otlp_body(spans)
    records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "spans.pb")
    store.import_records(records, source="spans.pb", store_lines=foreign.store_lines)


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],  # each run records new spans: shrinking cannot converge
)
@given(data=st.data())
def test_order_splits_and_repeats_change_nothing(store: Store, clean: Store, data: st.DataObject) -> None:
    offset = next(_offsets)
    spans = _spans(offset)
    _file_import(clean, spans)
    order = data.draw(st.permutations(range(len(spans))), label="order")
    repeats = data.draw(st.lists(st.integers(0, len(spans) - 1), max_size=8), label="repeats")
    sent = list(order)
    for index in repeats:
        sent.insert(data.draw(st.integers(0, len(sent)), label="repeat at"), index)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(sent) - 1), max_size=6), label="cuts"))
    requests = [sent[a:b] for a, b in itertools.pairwise([0, *cuts, len(sent)])]
    assembled_after = data.draw(st.sets(st.integers(0, len(requests) - 1)), label="assembled after")
    for number, request in enumerate(requests):
        store_batch(store, otlp_body([spans[i] for i in request]), "application/x-protobuf", key_pk=None)
        if number in assembled_after:
            assemble_pending(store)
    assemble_pending(store)
    assert _stored(store, _ids(offset)) == _stored(clean, _ids(offset))


def test_a_conversation_grows_as_its_spans_arrive_and_ends_as_the_file_gives_it(store: Store, tmp_path: Path) -> None:
    offset = 1000
    spans = _spans(offset)
    with Store.open(str(tmp_path / "file.db")) as file_store:
        _file_import(file_store, spans)
        expected = _stored(file_store, _ids(offset))
    counts = []
    for span in sorted(spans, key=lambda s: s.end_time or 0):
        store_batch(store, otlp_body([span]), "application/x-protobuf", key_pk=None)
        assemble_pending(store)
        counts.append(sum(s.records for s in store.get_summaries(_ids(offset)).values()))
    assert counts == sorted(counts) and 0 < counts[0] < counts[-1]
    assert _stored(store, _ids(offset)) == expected
    for span in reversed(spans):  # a retrying exporter sends it all again, children first
        store_batch(store, otlp_body([span]), "application/x-protobuf", key_pk=None)
    assemble_pending(store)
    assert _stored(store, _ids(offset)) == expected
