"""The outline each SQLite import stores beside a message: byte spans into the stored text that hold exactly.

The dashboard opens a long trace from these spans without reading the rest of the text
(``web.timeline.stored``); a span one byte off would show the wrong record, or none.
``tests/web/test_web_outline.py`` holds the order made from outlines to the typed timeline.
"""

from __future__ import annotations

from typing import Any

import orjson
from alembic import command
from hypothesis import HealthCheck, given, settings
from sqlalchemy import delete, text

from core import MESSAGE_ADAPTER
from core.store import Store
from core.store.engine import make_engine, write_transaction
from core.store.outline import TAIL_LIMIT, dump_with_outline
from core.store.schema import _config, upgrade
from core.store.tables import MESSAGE_OUTLINES
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


def test_a_sqlite_store_reads_pages_of_a_trace_by_span(tmp_path: Any) -> None:
    (message,) = long_trace(300)
    with Store.open(str(tmp_path / "s.db")) as store:
        import_messages(store, [message])
        stored = store.get_conversation_outline(message.conversation_id)
        assert stored is not None and stored.summary.records == 300
        ((row, text),) = stored.outlines
        outline = orjson.loads(text)
        spans = [(row, child[0], child[1]) for child in outline[8]]
        records = [orjson.loads(piece) for piece in store.read_spans(spans)]
        assert [r["msg_id"] for r in records] == [r.msg_id for r in message.intermediate_trace.records]
        assert store.read_spans([(row, 0, outline[1])]) == [store.get_bodies([row])[0].encode()]


def test_messages_without_an_outline_are_read_whole(tmp_path: Any) -> None:
    """A store upgraded from revision 0002 holds messages imported without outlines: no outline is offered."""
    (message,) = long_trace(20)
    with Store.open(str(tmp_path / "s.db")) as store:
        import_messages(store, [message])
        with write_transaction(store.engine) as conn:
            conn.execute(delete(MESSAGE_OUTLINES))
        assert store.get_conversation_outline(message.conversation_id) is None
        assert len(store.get_conversation_json(message.conversation_id).bodies) == 1


def test_postgresql_stores_no_outline(db_url: str) -> None:
    """JSONB re-renders the text, so byte spans would point anywhere: PostgreSQL offers none and keeps none."""
    (message,) = long_trace(20)
    with Store.open(db_url) as store:
        import_messages(store, [message])
        stored = store.get_conversation_outline(message.conversation_id)
        if store.backend == "postgresql":
            assert stored is None
            with store.engine.connect() as conn:
                assert conn.execute(MESSAGE_OUTLINES.select()).first() is None
        else:
            assert stored is not None and len(stored.outlines) == 1


def test_an_upgrade_from_0002_outlines_what_was_stored_before(tmp_path: Any) -> None:
    """`db upgrade` from revision 0002 outlines the messages stored then, except one whose text an import would
    not write now (its conversation is then read whole, as before the upgrade)."""
    url = str(tmp_path / "s.db")
    messages = [*long_trace(40), *every_kind("text", conversation_id="c-every")]
    with Store.open(url) as store:
        import_messages(store, messages)
        expected = _all_outlines(store)
        odd = store.get_conversation_outline("c-every")
        assert odd is not None and len(expected) == len(messages)
    engine = make_engine(url)
    try:
        with write_transaction(engine) as conn:  # a store as revision 0002 left it: no outline table
            command.downgrade(_config(conn), "0002")
            odd_row = odd.outlines[0][0]
            conn.execute(text("UPDATE messages SET body = ' ' || body WHERE id = :id"), {"id": odd_row})
        result = upgrade(engine)
    finally:
        engine.dispose()
    assert (result.before, result.outlined) == ("0002", len(messages) - 1)
    with Store.open(url) as store:
        assert _all_outlines(store) == {pk: o for pk, o in expected.items() if pk != odd_row}
        assert store.get_conversation_outline("c-every") is None  # read whole, as before
        assert store.get_conversation_outline("c-long") is not None


def _all_outlines(store: Store) -> dict[int, str]:
    with store.engine.connect() as conn:
        return {pk: outline for pk, outline in conn.execute(MESSAGE_OUTLINES.select())}
