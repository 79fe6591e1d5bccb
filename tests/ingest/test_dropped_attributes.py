"""A span whose SDK dropped attributes past its limit says so in its conversation, live and from a file alike.

OpenLLMetry-style instrumentations write each history message as ``gen_ai.prompt.N.*`` attributes; past the
SDK's attribute limit the oldest are evicted (``opentelemetry.sdk.util.BoundedAttributes``), and the span reports
``dropped_attributes_count``: the stored conversation must say that messages may be missing.
"""

from __future__ import annotations

import io

import orjson

from core.formats.importing import read_foreign
from core.formats.records import IMPORT_KEY, INCOMPLETE_KEY, import_marks
from core.formats.registry import format_named
from core.ingest import assemble_pending, store_batch
from core.store import Store
from tests.ingest.genai_spans import limited_span_body

TURNS = 10
LIMIT = 16
"""Attributes a span keeps: fewer than the history's ``2 * (TURNS + 1)`` message attributes plus the call's own."""


def _span_body(conversation: str, max_attributes: int) -> bytes:
    return limited_span_body(conversation, TURNS, max_attributes)


def _warnings(records: list[dict[str, object]]) -> list[str]:
    return [mark for record in records for mark in import_marks(record) if "messages may be missing" in mark]


def test_a_file_span_that_dropped_attributes_marks_its_conversation_and_notes_it() -> None:
    records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(_span_body("c", LIMIT))), "f")

    warnings = _warnings([record.raw for record in records])
    assert warnings and all("dropped" in w and "attributes" in w for w in warnings)
    assert [note.text for note in foreign.notes if "messages may be missing" in note.text]


def test_a_span_within_its_limit_marks_nothing() -> None:
    records, foreign = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(_span_body("c", 128))), "f")

    assert records and not _warnings([record.raw for record in records])
    assert not [note for note in foreign.notes if "messages may be missing" in note.text]


def test_a_received_span_that_dropped_attributes_is_stored_as_its_file_import_is(store: Store) -> None:
    body = _span_body("dropped-live", LIMIT)
    records, _ = read_foreign(format_named("otlp"), io.BufferedReader(io.BytesIO(body)), "f")

    store_batch(store, body, "application/x-protobuf", key_pk=None)
    assemble_pending(store)

    conversation = records[0].message.conversation_id  # the oldest attributes, the conversation id too, were evicted
    stored = [orjson.loads(text) for text in store.export_texts(conversation)]
    assert stored == [record.raw for record in records]
    assert all(INCOMPLETE_KEY in message["additional_kwargs"][IMPORT_KEY] for message in stored)
