"""A long timeline's order stored by its digest job (``web.timeline.paged``): the cards of the whole order, page by
page, from a bounded slice of the store whatever the timeline's length."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson
import pytest
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER
from core.reader import read_bytes
from core.store import Store
from core.store import digests as stored_digests
from tests.store.conftest import db_url, pg_session_url  # noqa: F401 - the store's fixtures, both backends
from tests.web.web_corpus import BASE_URL, import_messages
from web import source as web_source
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings
from web.source import StoreSource
from web.timeline import msg_anchor
from web.timeline import paged as paged_order
from web.timeline.paged import PagedOrder
from web.timeline.stored import StoredOrder

CID = demo_data.LONG


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks and thresholds small enough that a short trace spans many chunks and buckets."""
    monkeypatch.setattr(paged_order, "CHUNK", 40)
    monkeypatch.setattr(paged_order, "BUCKET_ENTRIES", 8)
    monkeypatch.setattr(web_source, "PAGED_MIN_RECORDS", 50)


def _store(url: str, records: int) -> Store:
    store = Store.open(url)
    (raw,) = demo_data.long_trace(records)
    later = {"role": "system", "conversation_id": CID, "create_ts": 2**40, "content": "after the trace"}
    import_messages(store, [MESSAGE_ADAPTER.validate_python(m) for m in (raw, later)])
    return store


def test_the_stored_order_gives_the_cards_of_the_whole_order(db_url: str) -> None:  # noqa: F811
    with _store(db_url, 300) as store:
        source = StoreSource(store)
        whole = source.load(CID).timeline
        assert isinstance(whole.order, StoredOrder)
        assert source.store_order(CID)
        paged = StoreSource(store).load(CID).timeline
        assert isinstance(paged.order, PagedOrder)
        assert len(paged) == len(whole) and list(paged.slots) == list(whole.slots)
        assert paged.order.turns() == whole.order.turns()
        offset: int | None = 0
        pages = 0
        while offset is not None:  # the pages chain to the end, card for card
            page = paged.page(offset, 25)
            assert page == whole.page(offset, 25)
            offset, pages = page.next_offset, pages + 1
        assert pages == -(-len(whole) // 25)
        assert paged.order.calls == whole.order.calls
        for slot in whole.slots[::37]:
            anchor = msg_anchor(slot.msg_id)
            assert paged.position(anchor) == whole.position(anchor)
            assert paged.page(0, 25, through=anchor) == whole.page(0, 25, through=anchor)
        assert paged.page_at(paged.positions_of("tool"), 10, 25) == whole.page_at(whole.positions_of("tool"), 10, 25)


@dataclass
class Reads:
    """What a request read of the store: stored order chunks, call index buckets, record spans, outlines."""

    chunks: int = 0
    buckets: int = 0
    spans: int = 0
    outlines: int = 0
    parts: list[str] = field(default_factory=list)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[Reads]:
    seen = Reads()
    read_parts_in = stored_digests.read_parts_in
    read_spans = Store.read_spans
    get_outline = Store.get_conversation_outline

    def counted_parts(engine: Any, key: str, part: str, numbers: Any) -> list[tuple[int, bytes]]:
        found = read_parts_in(engine, key, part, numbers)
        if part == "s":
            seen.chunks += len(found)
        elif part == "c":
            seen.buckets += len(found)
        return found

    def counted_spans(self: Store, spans: Any) -> list[bytes]:
        wanted = list(spans)
        seen.spans += len(wanted)
        return read_spans(self, wanted)

    def counted_outline(self: Store, conversation_id: str) -> Any:
        seen.outlines += 1
        return get_outline(self, conversation_id)

    monkeypatch.setattr(stored_digests, "read_parts_in", counted_parts)
    monkeypatch.setattr(Store, "read_spans", counted_spans)
    monkeypatch.setattr(Store, "get_conversation_outline", counted_outline)
    yield seen


def _first_window(store: Store, reads: Reads) -> tuple[Reads, str]:
    assert StoreSource(store).store_order(CID)
    with TestClient(create_app(Settings(), StoreSource(store)), base_url=BASE_URL) as client:
        before = Reads(reads.chunks, reads.buckets, reads.spans, reads.outlines)
        response = client.get(f"/conversations/{CID}")
        assert response.status_code == 200
        return Reads(
            reads.chunks - before.chunks,
            reads.buckets - before.buckets,
            reads.spans - before.spans,
            reads.outlines - before.outlines,
        ), response.text


@pytest.mark.parametrize("records", [400, 1_200])
def test_the_first_window_reads_a_bounded_slice_whatever_the_length(tmp_path: Any, reads: Reads, records: int) -> None:
    with _store(str(tmp_path / "t.db"), records) as store:
        read, page = _first_window(store, reads)
    assert 'data-msg-id="lt-a0000"' in page
    assert read.outlines == 0  # no outline read whole
    # The first page's 100 cards: chunks 0-2 and the last (the "end" link), their records and the buckets of their
    # links; the same at both lengths.
    assert read.chunks == 4
    assert read.spans <= Settings().page_size + 2
    assert 0 < read.buckets <= Settings().page_size


def test_an_import_into_the_conversation_leaves_the_stored_order_unread(db_url: str) -> None:  # noqa: F811
    with _store(db_url, 120) as store:
        source = StoreSource(store)
        assert source.store_order(CID)
        more = {"role": "system", "conversation_id": CID, "create_ts": 2**41, "content": "imported later"}
        import_messages(store, [MESSAGE_ADAPTER.validate_python(more)], source="later.jsonl")
        timeline = StoreSource(store).load(CID).timeline
        assert isinstance(timeline.order, StoredOrder)
        assert timeline.message(len(timeline) - 1).content == "imported later"


def test_an_order_with_a_record_of_generated_values_is_not_stored(tmp_path: Any) -> None:
    (raw,) = demo_data.long_trace(120)
    del raw["intermediate_trace"]["records"][3]["msg_id"]  # generated per load: a stored order would fix one
    with Store.open(str(tmp_path / "t.db")) as store:
        store.import_records(read_bytes(orjson.dumps(raw) + b"\n", source="raw.jsonl"), source="raw.jsonl")
        assert not StoreSource(store).store_order(CID)
        assert not isinstance(StoreSource(store).load(CID).timeline.order, PagedOrder)


def test_a_short_conversation_keeps_no_stored_order(tmp_path: Any) -> None:
    with _store(str(tmp_path / "t.db"), 20) as store:
        assert not StoreSource(store).store_order(CID)
        assert stored_digests.count_digests(store.engine, CID, "timeline") == 0
