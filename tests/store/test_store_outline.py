"""The outline each SQLite import stores beside a message: byte spans into the stored text that hold exactly.

The dashboard opens a long trace from these spans without reading the rest of the text
(``web.timeline.stored``); a span one byte off would show the wrong record, or none.
``tests/web/timeline/test_outline.py`` holds the order made from outlines to the typed timeline.
"""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from alembic import command
from hypothesis import HealthCheck, given, settings
from sqlalchemy import delete, text

from core import MESSAGE_ADAPTER
from core.store import Store
from core.store import outline as outline_module
from core.store.engine import make_engine, write_transaction
from core.store.outline import TAIL_LIMIT, dump_with_outline
from core.store.schema import _config, upgrade
from core.store.tables import MESSAGE_OUTLINES
from tests.store.store_pg import BACKENDS
from tests.strategies import messages
from tests.web.web_corpus import every_kind, import_messages, long_trace


def _check_node(text: bytes, node: list[Any], raw: Any) -> None:
    """The node's span is ``raw``'s JSON; its children's spans are its records', its tail what follows them."""
    start, end = node[0], node[1]
    assert orjson.loads(text[start:end]) == raw
    if len(node) == 7:
        return
    records_at, children, tail = node[7], node[8], node[9]
    records = raw["intermediate_trace"]["records"]
    assert text[records_at : records_at + 1] == b"[" and len(children) == len(records)
    records_end = children[-1][1] + 1
    assert orjson.loads(text[records_at:records_end]) == records
    assert tail is None or tail.encode() == text[records_end:end]
    for child, record in zip(children, records, strict=True):
        _check_node(text, child, record)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(messages(max_depth=3))
def test_every_span_holds_its_record_and_the_text_holds_the_message(raw: dict[str, Any]) -> None:
    text, outline = dump_with_outline(raw, MESSAGE_ADAPTER.validate_python(raw))
    assert outline is not None
    assert orjson.loads(text) == raw
    _check_node(text, outline, raw)


@pytest.mark.parametrize("where", ["key", "value", "record"])
def test_trace_data_that_holds_the_placeholder_is_outlined_all_the_same(where: str) -> None:
    """The placeholder that stands for the records while the text is assembled is trace data like any string."""
    placeholder = outline_module._PLACEHOLDER
    records: list[dict[str, Any]] = [{"role": "system", "msg_id": "r", "create_ts": 1, "content": placeholder}]
    raw: dict[str, Any] = {"role": "user", "msg_type": "text", "msg_id": "u", "create_ts": 2}
    if where == "key":
        raw[placeholder] = 1
    elif where == "value":
        raw["content"] = placeholder
    trace: dict[str, Any] = {"records": records}
    if where == "record":
        trace[placeholder] = placeholder
    raw["intermediate_trace"] = trace
    text, outline = dump_with_outline(raw, MESSAGE_ADAPTER.validate_python(raw))
    assert outline is not None and orjson.loads(text) == raw
    _check_node(text, outline, raw)


def test_a_long_tail_is_read_from_the_text_not_kept_in_the_outline() -> None:
    records = [{"role": "system", "msg_id": f"r{i}", "create_ts": i, "content": "x"} for i in range(3)]
    raw = {
        "role": "user",
        "msg_type": "text",
        "msg_id": "u",
        "create_ts": 1,
        "intermediate_trace": {"records": records},
        "content": "after the trace " * (TAIL_LIMIT // 8),
    }
    text, outline = dump_with_outline(raw, MESSAGE_ADAPTER.validate_python(raw))
    assert outline is not None and outline[9] is None
    _check_node(text, outline, raw)
    short = {**raw, "content": "short"}
    _, outline = dump_with_outline(short, MESSAGE_ADAPTER.validate_python(short))
    assert outline is not None and outline[9] == '},"content":"short"}'  # the trace's close, then the keys after it


def test_a_store_reads_pages_of_a_trace_by_span(db_url: str) -> None:
    """SQLite's spans point into ``body``, PostgreSQL's into ``message_texts``: either way they hold the records."""
    (message,) = long_trace(300)
    with Store.open(db_url) as store:
        import_messages(store, [message])
        stored = store.get_conversation_outline(message.conversation_id)
        assert stored is not None and stored.summary.records == 300
        ((row, text),) = stored.outlines
        outline = orjson.loads(text)
        spans = [(row, child[0], child[1]) for child in outline[8]]
        records = [orjson.loads(piece) for piece in store.read_spans(spans[::-1])][::-1]  # any order
        assert [r["msg_id"] for r in records] == [r.msg_id for r in message.intermediate_trace.records]
        (whole,) = store.read_spans([(row, 0, outline[1])])
        assert orjson.loads(whole) == orjson.loads(store.get_bodies([row])[0])


def test_messages_without_an_outline_are_read_whole(db_url: str) -> None:
    """A store upgraded from revision 0002 may hold messages without outlines: no outline is offered then."""
    (message,) = long_trace(20)
    with Store.open(db_url) as store:
        import_messages(store, [message])
        with write_transaction(store.engine) as conn:
            conn.execute(delete(MESSAGE_OUTLINES))
        assert store.get_conversation_outline(message.conversation_id) is None
        assert len(store.get_conversation_json(message.conversation_id).bodies) == 1


@pytest.mark.parametrize("fresh_url", BACKENDS, indirect=True)
def test_an_upgrade_from_0002_outlines_what_was_stored_before(fresh_url: str) -> None:
    """`db upgrade` from revision 0002 outlines the messages stored then. On SQLite a message whose text an import
    would not write now stays without (its conversation is then read whole, as before the upgrade); PostgreSQL
    stores the text beside the JSONB, so every message is outlined there."""
    messages = [*long_trace(40), *every_kind("text", conversation_id="c-every")]
    with Store.open(fresh_url) as store:
        import_messages(store, messages)
        expected = _all_outlines(store)
        odd = store.get_conversation_outline("c-every")
        assert odd is not None and len(expected) == len(messages)
        sqlite = store.backend == "sqlite"
    odd_row = odd.outlines[0][0]
    engine = make_engine(fresh_url)
    try:
        with write_transaction(engine) as conn:  # a store as revision 0002 left it: no outline tables
            command.downgrade(_config(conn), "0002")
            if sqlite:
                conn.execute(text("UPDATE messages SET body = ' ' || body WHERE id = :id"), {"id": odd_row})
        result = upgrade(engine)
    finally:
        engine.dispose()
    assert (result.before, result.outlined) == ("0002", len(messages) - sqlite)
    with Store.open(fresh_url) as store:
        after = _all_outlines(store)
        assert after.keys() == {pk for pk in expected if not (sqlite and pk == odd_row)}
        if sqlite:  # the same text, so the same outline; PostgreSQL's is of JSONB's key order, checked below
            assert after == {pk: o for pk, o in expected.items() if pk != odd_row}
        assert (store.get_conversation_outline("c-every") is None) == sqlite  # SQLite: read whole, as before
        long = store.get_conversation_outline("c-long")
        assert long is not None
        ((row, outline_text),) = long.outlines
        child = orjson.loads(outline_text)[8][7]
        (piece,) = store.read_spans([(row, child[0], child[1])])
        assert orjson.loads(piece)["msg_id"] == messages[0].intermediate_trace.records[7].msg_id  # type: ignore[union-attr]


def _all_outlines(store: Store) -> dict[int, str]:
    with store.engine.connect() as conn:
        return {pk: outline for pk, outline in conn.execute(MESSAGE_OUTLINES.select())}
