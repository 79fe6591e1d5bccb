"""The timeline ordered from stored JSON (``JsonOrder``) is the timeline of the typed messages, card for card.

The conversation page types only the records of its page; everything it shows (order, placement,
parents, anchors, links across pages, damage badges, generated ids) must be what typing the whole
conversation gives. The typed path (``Timeline(messages)``) is the reference.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any
from unittest import mock

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from core import MESSAGE_ADAPTER, IntermediateTrace, Message, UserMessage
from core.store import ConversationSummary, Store
from core.store.outline import TAIL_LIMIT, dump_with_outline
from tests.store.conftest import db_url, pg_session_url  # noqa: F401 - the store's fixtures, both backends
from tests.strategies import messages
from tests.web.web_corpus import BASE_URL, import_messages
from web.app import create_app
from web.devtools import demo_data
from web.settings import Settings
from web.source import Loaded, StoreSource
from web.timeline import Timeline, msg_anchor
from web.timeline.order import MAX_TRACE_DEPTH
from web.timeline.outline import JsonOrder, OutlineError
from web.timeline.stored import StoredOrder

FIXED_NS = 1_700_000_000_123_456_789


@contextmanager
def fixed_defaults() -> Iterator[None]:
    """Generated defaults (a missing msg_id or create_ts) made equal on both paths, so cards compare exactly."""
    with mock.patch("uuid.uuid4", lambda: uuid.UUID(int=299)), mock.patch("time.time_ns", lambda: FIXED_NS):
        yield


def _bodies(raw: list[dict[str, Any]]) -> list[str]:
    return [orjson.dumps({"conversation_id": "c", **m}).decode() for m in raw]


def _without_trace(message: Message) -> Message:
    """A typed message as a timeline entry holds it: a user message's trace records are slots of their own."""
    if isinstance(message, UserMessage):
        return message.model_copy(update={"intermediate_trace": IntermediateTrace()})
    return message


def stored_order(bodies: list[str]) -> StoredOrder:
    """The order the dashboard reads from a SQLite store holding ``bodies``: the import's outlines and texts."""
    texts: list[bytes] = []
    outlines: list[tuple[int, str]] = []
    for row, body in enumerate(bodies):
        raw = orjson.loads(body)
        text, outline = dump_with_outline(raw, MESSAGE_ADAPTER.validate_python(raw))
        assert outline is not None and orjson.loads(text) == raw
        texts.append(text)
        outlines.append((row, orjson.dumps(outline).decode()))
    return StoredOrder(outlines, lambda spans: [texts[row][start:end] for row, start, end in spans])


def assert_same_timeline(bodies: list[str], *, page_size: int = 7) -> Timeline:
    """Both lazy orders (from JSON text, from stored outlines) give the typed order's slots, links, messages
    and cards, page by page; returns the one from JSON text."""
    typed = Timeline([MESSAGE_ADAPTER.validate_python(orjson.loads(body)) for body in bodies])
    from_json = Timeline(JsonOrder(bodies))
    for lazy in (from_json, Timeline(stored_order(bodies))):
        assert lazy.slots == typed.slots
        assert lazy.order.calls == typed.order.calls
        for offset in range(0, max(len(typed), 1), page_size):
            assert lazy.page(offset, page_size) == typed.page(offset, page_size)
        everything = len(typed) or 1
        assert [_without_trace(m) for m in lazy.order.messages(0, everything)] == [
            _without_trace(m) for m in typed.order.messages(0, everything)
        ]
        scattered = list(range(len(typed)))[::-3]  # any positions, in any order, read together
        assert [_without_trace(m) for m in lazy.messages_at(scattered)] == [
            _without_trace(m) for m in typed.messages_at(scattered)
        ]
        for slot in typed.slots[:: max(1, len(typed) // 20)]:
            anchor = msg_anchor(slot.msg_id)
            assert lazy.position(anchor) == typed.position(anchor)
            assert lazy.page(0, page_size, through=anchor) == typed.page(0, page_size, through=anchor)
    return from_json


@pytest.mark.parametrize("conversation_id", sorted({m["conversation_id"] for m in demo_data.conversations(300)}))
def test_the_demo_data_orders_and_renders_the_same(conversation_id: str) -> None:
    raw = [m for m in demo_data.conversations(300) if m["conversation_id"] == conversation_id]
    assert_same_timeline([orjson.dumps(m).decode() for m in raw], page_size=50)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(max_depth=2), min_size=1, max_size=4))
@example([{"role": "user", "content": [{"role": "user", "content": ""}]}])  # a damaged history holding a damaged record
@example([{"role": "user", "msg_type": "text", "intermediate_trace": {"records": [{"role": "system"}] * 3}}])
def test_any_stored_messages_order_and_render_the_same(raw: list[dict[str, Any]]) -> None:
    with fixed_defaults():
        assert_same_timeline(_bodies(raw))


def _record(msg_id: str, ts: Any, **fields: Any) -> dict[str, Any]:
    return {"role": "system", "msg_id": msg_id, "create_ts": ts, "content": msg_id, **fields}


def _user_with(records: list[dict[str, Any]], ts: int) -> dict[str, Any]:
    """User message ``u`` stamped ``ts``, with ``records`` as its trace."""
    return {
        "role": "user",
        "msg_type": "text",
        "msg_id": "u",
        "create_ts": ts,
        "intermediate_trace": {"records": records},
    }


def test_records_the_parser_must_read_first_keep_their_typed_values() -> None:
    """create_ts as 5.0, "7" or true, missing ids and stamps: ordered by what the parser makes of them."""
    records = [
        _record("float", 5.0),
        _record("string", "7"),
        _record("bool", True),
        {"role": "system", "content": "no id", "create_ts": 6},
        {"role": "system", "content": "no stamp", "msg_id": "late"},
        _record("plain", 4),
        {
            "role": "assistant",
            "msg_type": "text",
            "msg_id": "call",
            "create_ts": 8,
            "tool_calls": [{"id": "k", "name": "f"}],
        },
        {"role": "tool", "msg_id": "result", "create_ts": 9, "tool_reses": ["bare", {"call_id": "k"}]},
    ]
    user = _user_with(records, 6)
    with fixed_defaults():
        lazy = assert_same_timeline(_bodies([user]), page_size=3)
    assert [s.msg_id for s in lazy.slots] == [
        "bool",
        "plain",
        "float",
        "u",
        uuid.UUID(int=299).hex,
        "string",
        "call",
        "result",
        "late",
    ]


def test_equal_stamps_keep_file_order_around_the_message() -> None:
    records = [_record(name, ts) for name, ts in [("b", 5), ("a", 3), ("c", 5), ("d", 3), ("e", 4), ("f", 5)]]
    user = _user_with(records, 5)
    lazy = assert_same_timeline(_bodies([user, {**user, "msg_id": "v", "create_ts": 3}]))
    assert [s.msg_id for s in lazy.slots][:7] == ["a", "d", "e", "u", "b", "c", "f"]


def test_generated_ids_are_made_once_and_shown_the_same_on_every_page() -> None:
    user = {"role": "user", "msg_type": "text", "create_ts": 1, "intermediate_trace": {"records": [{"role": "system"}]}}
    lazy = Timeline(JsonOrder(_bodies([user])))
    first = [(c.msg_id, c.create_ts) for c in lazy.page(0, 10).cards]
    assert [(c.msg_id, c.create_ts) for c in lazy.page(0, 10).cards] == first
    assert [s.msg_id for s in lazy.slots] == [msg_id for msg_id, _ in first]


def test_traces_of_traces_are_expanded_to_the_same_depth() -> None:
    record: dict[str, Any] = {"role": "system", "msg_id": "leaf", "create_ts": 0}
    for level in range(MAX_TRACE_DEPTH + 4):
        record = {
            "role": "user",
            "msg_type": "text",
            "msg_id": f"u{level}",
            "create_ts": level % 3,
            "content": f"level {level}",
            "intermediate_trace": {"records": [record, _record(f"s{level}", 1)], "x_trace_extra": level},
        }
    lazy = assert_same_timeline(_bodies([record]), page_size=5)
    assert len(lazy) == 2 * MAX_TRACE_DEPTH + 1  # records past the bound stay inside the last expanded record


def test_unknown_keys_and_odd_traces_on_records_that_are_not_user_messages() -> None:
    """An unknown key sends a stored message down the slower path; a trace on a damaged record is only a key."""
    records = [
        {"role": "user", "msg_id": "damaged", "create_ts": 2, "content": "x", "intermediate_trace": {"records": "no"}},
        {"role": "assistant", "msg_id": "odd", "create_ts": 3, "intermediate_trace": [1, 2]},
        {"role": "tool", "msg_id": "odd2", "create_ts": 1, "intermediate_trace": {"records": [{"role": "system"}]}},
        {"role": "user", "msg_id": "damaged2", "create_ts": 4, "intermediate_trace": {"records": [_record("in", 0)]}},
    ]
    for extra in ({}, {"x_agent_extra": {"kept": [1, "two"]}}):
        user = {"role": "user", "msg_type": "text", "msg_id": "u", "create_ts": 2, **extra}
        cards = assert_same_timeline(_bodies([{**user, "intermediate_trace": {"records": records}}])).page(0, 9).cards
        assert [(c.msg_id, c.damage is not None) for c in cards] == [
            ("odd2", False), ("u", False), ("damaged", True), ("odd", True), ("damaged2", True)
        ]  # fmt: skip


def test_keys_stored_after_the_trace_come_back_however_long() -> None:
    """The stored outline keeps a short tail itself and reads a long one from the text: both type the same."""
    records = [_record(f"r{i}", i) for i in range(5)]
    for after in ("short", "long " * TAIL_LIMIT):
        user = {"role": "user", "msg_type": "text", "msg_id": "u", "create_ts": 2}
        lazy = assert_same_timeline(_bodies([{**user, "intermediate_trace": {"records": records}, "content": after}]))
        assert [s.msg_id for s in lazy.slots] == ["r0", "r1", "u", "r2", "r3", "r4"]


def test_json_too_deep_for_the_outline_falls_back_to_the_typed_order() -> None:
    deep = "[" * 1000 + '"bottom"' + "]" * 1000  # within the reader's 1,024 levels, past msgspec's recursion limit
    bodies = ['{"role":"system","msg_id":"deep","create_ts":1,"additional_kwargs":{"deep":' + deep + "}}"]
    with pytest.raises(OutlineError):
        JsonOrder(bodies)
    summary = ConversationSummary("c", "", 1, 0, 0, 0, 0, 1, 1)
    loaded = Loaded(summary, bodies)
    assert loaded.typed and [s.msg_id for s in loaded.timeline.slots] == ["deep"]


def test_concurrent_pages_type_each_record_once() -> None:
    (raw,) = demo_data.long_trace(400)
    loaded = Loaded(ConversationSummary("c", "", 1, 1, 400, 0, 0, 1, 1), [orjson.dumps(raw).decode()])
    barrier = threading.Barrier(6)

    def read(offset: int) -> list[Any]:
        barrier.wait()
        return [c for c in loaded.timeline.page(offset, 100).cards]

    with ThreadPoolExecutor(6) as pool:
        pages = list(pool.map(read, [0, 100, 0, 100, 200, 0]))
    assert pages[0] == pages[2] == pages[5] and pages[1] == pages[3]
    assert not loaded.typed


def test_the_conversation_page_never_types_the_whole_conversation(tmp_path: Any) -> None:
    store = Store.open(str(tmp_path / "t.db"))
    (raw,) = demo_data.long_trace(300)
    import_messages(store, [MESSAGE_ADAPTER.validate_python(raw)])
    source = StoreSource(store)
    try:
        with TestClient(create_app(Settings(), source), base_url=BASE_URL) as client:
            cid = raw["conversation_id"]
            first = client.get(f"/conversations/{cid}")
            assert first.status_code == 200 and 'data-msg-id="lt-a0000"' in first.text
            assert client.get(f"/conversations/{cid}?offset=100").status_code == 200
            assert client.get(f"/conversations/{cid}?at=msg-lt-t0140").status_code == 200
            assert not source.load(cid).typed
            assert isinstance(source.load(cid).timeline.order, StoredOrder)  # SQLite: read by span, not whole
            assert client.get(f"/conversations/{cid}/payload/openai").status_code == 200
            assert source.load(cid).typed
    finally:
        store.close()


def test_the_store_text_of_both_backends_orders_the_same(db_url: str) -> None:  # noqa: F811
    """PostgreSQL gives JSONB's rendering (keys reordered, spaces): the same slots and cards as the typed read."""
    (raw,) = demo_data.long_trace(120)
    extra = {"role": "system", "conversation_id": raw["conversation_id"], "create_ts": 1, "content": 'é \u2028 \\ "'}
    with Store.open(db_url) as store:
        import_messages(store, [MESSAGE_ADAPTER.validate_python(m) for m in (raw, extra)])
        stored = store.get_conversation_json(raw["conversation_id"])
        typed = Timeline([m.message for m in store.get_conversation(raw["conversation_id"]).messages])
        outlined = StoreSource(store).load(raw["conversation_id"]).timeline  # both backends: by span
        assert isinstance(outlined.order, StoredOrder)
        for lazy in (Timeline(JsonOrder(stored.bodies)), outlined):
            assert lazy.slots == typed.slots
            assert lazy.page(0, 200) == typed.page(0, 200)
            assert lazy.page(100, 50) == typed.page(100, 50)
