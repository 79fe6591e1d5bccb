"""A message on a long line is read a trace record at a time (``core.trace_stream``, ``core.reader.StreamedRecord``):
stored exactly as the same line read whole, and refused with the same errors. On both backends."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import delete, select

from core import InputError
from core import reader as reader_module
from core.jsonio import dumps
from core.reader import BadMessages, StreamedRecord, read_bytes
from core.store import ConversationQuery, Store
from core.store.engine import read_transaction, write_transaction
from core.store.tables import CONVERSATIONS, MESSAGE_OUTLINES, MESSAGES
from tests.store.store_factory import dataset


@pytest.fixture(autouse=True)
def every_line_is_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader_module, "LONG_LINE_BYTES", 1)


def _file() -> bytes:
    messages = dataset(seed=28, conversations=3, turns=3, records=6)  # every user kind, histories, damaged records
    without_id = {**messages[0], "conversation_id": "no-id"}
    del without_id["msg_id"]  # its id is a hash of the message whole, records included
    tool = {"role": "tool", "conversation_id": "tool", "create_ts": 5, "content": "not a user message",
            "intermediate_trace": {"records": [{"role": "assistant", "content": "kept as data"}]}}  # fmt: skip
    return b"".join(orjson.dumps(m) + b"\n" for m in [*messages, without_id, tool])


def _stored(store: Store) -> tuple[Any, ...]:
    m, c = MESSAGES.c, CONVERSATIONS.c
    skipped = {"id", "conversation_pk", "imported_at"}
    with read_transaction(store.engine) as conn:
        messages = [
            {k: v for k, v in row._mapping.items() if k not in skipped}
            for row in conn.execute(select(MESSAGES).order_by(m.msg_id, m.create_ts))
        ]
        outlines = sorted(conn.execute(select(MESSAGE_OUTLINES.c.outline)).scalars())
        conversations = [tuple(r) for r in conn.execute(select(CONVERSATIONS).order_by(c.conversation_id))]
    found = {c.conversation_id for c in store.iter_conversations(ConversationQuery(search="not a user message"))}
    return messages, outlines, [r[1:] for r in conversations], found, sorted(store.export_texts())


def _import(store: Store, data: bytes, *, streamed: bool) -> None:
    bad = BadMessages()
    records = read_bytes(data, source="long.jsonl", bad=bad, streamed=streamed)
    store.import_records(records, source="long.jsonl", bad=bad)


def test_a_long_line_is_stored_as_the_line_read_whole(store: Store) -> None:
    data = _file()
    _import(store, data, streamed=True)
    streamed = _stored(store)
    with write_transaction(store.engine) as conn:
        conn.execute(delete(CONVERSATIONS))
    _import(store, data, streamed=False)
    assert streamed == _stored(store)
    assert streamed[3] == {"tool"} and len(streamed[0]) == data.count(b"\n")
    traced = [m for m in map(orjson.loads, data.splitlines()) if m["role"] == "user" and "intermediate_trace" in m]
    read = [type(r) for r in read_bytes(data, streamed=True)]
    assert read.count(StreamedRecord) == len(traced) > 3  # a user message with a trace; not the tool's


def _error(store: Store, data: bytes, *, streamed: bool) -> str:
    with pytest.raises(InputError) as caught:
        _import(store, data, streamed=streamed)
    return str(caught.value)


@pytest.mark.parametrize(
    ("record", "where"),
    [
        ({"role": "assistant", "content": "ok", "tool_calls": "not a list"}, "records[4].tool_calls"),
        ({"role": "nobody", "content": "x"}, "records[4].role"),
        ([1, 2], "records[4]"),
    ],
)
def test_a_bad_record_of_a_long_line_is_refused_as_a_line_read_whole_refuses_it(
    store: Store, record: Any, where: str
) -> None:
    good = [{"role": "assistant", "content": f"step {i}", "create_ts": i} for i in range(4)]
    message = {"role": "user", "msg_type": "text", "content": "q", "conversation_id": "c", "msg_id": "u",
               "create_ts": 1, "intermediate_trace": {"records": [*good, record, *good]}}  # fmt: skip
    data = orjson.dumps({"role": "user", "content": "first", "conversation_id": "a", "create_ts": 1}) + b"\n"
    data += orjson.dumps(message) + b"\n"
    streamed = _error(store, data, streamed=True)
    assert streamed == _error(store, data, streamed=False)
    assert f"long.jsonl:2 at $.intermediate_trace.{where}:" in streamed
    assert list(store.iter_conversations()) == []  # the file's first line is not kept either


@pytest.mark.postgres
def test_a_nul_in_a_record_of_a_long_line_is_named_as_in_a_line_read_whole(pg_session_url: str) -> None:
    records = [{"role": "assistant", "content": "a \\u0000 is fine escaped", "create_ts": 1},
               {"role": "assistant", "content": "but not \u0000 itself", "create_ts": 2}]  # fmt: skip
    message = {"role": "user", "msg_type": "text", "content": "q", "conversation_id": "c", "create_ts": 1,
               "intermediate_trace": {"records": records}}  # fmt: skip
    with Store.open(pg_session_url) as store:
        data = orjson.dumps(message) + b"\n"
        streamed = _error(store, data, streamed=True)
        assert streamed == _error(store, data, streamed=False)
        assert "$.intermediate_trace.records[1].content" in streamed


def test_a_record_too_deep_to_write_back_in_its_message_is_refused_as_in_a_line_read_whole(store: Store) -> None:
    """The serialiser's depth counts from the top message: a record is checked where it stands in it."""
    deep: dict[str, Any] = {"role": "user", "content": "bottom", "create_ts": 1}
    for _ in range(84):  # alone, it can be written back; one level down in a message, it cannot
        deep = {"role": "user", "content": "q", "create_ts": 1, "intermediate_trace": {"records": [deep]}}
    fine = {"role": "assistant", "content": "fine", "create_ts": 1}
    message = {"role": "user", "msg_type": "text", "content": "q", "conversation_id": "c", "create_ts": 1,
               "intermediate_trace": {"records": [fine, deep]}}  # fmt: skip
    data = dumps(message) + b"\n"  # past orjson's 254 levels
    assert "nested too deeply to store" in _error(store, data, streamed=False)
    assert "long.jsonl:1 at $.intermediate_trace.records[1]: messages are nested too deeply to store" in _error(
        store, data, streamed=True
    )
