"""A conversation's content fingerprint: it names what is stored, and it is read without reading the messages."""

from __future__ import annotations

from typing import Any

from sqlalchemy import event

from core import MESSAGE_ADAPTER, Message
from core.reader import Record
from core.store import Store
from core.store.digests import content_fingerprint
from tests.web.web_corpus import import_messages, long_trace, temp_store


def _with_text(message: Message, content: str) -> Message:
    data = MESSAGE_ADAPTER.dump_python(message, mode="json")
    data["content"] = content
    return MESSAGE_ADAPTER.validate_python(data)


def test_the_fingerprint_holds_on_a_repeated_import_and_moves_when_a_message_is_replaced(store: Store) -> None:
    messages = long_trace(20)
    import_messages(store, messages)
    conversation_id = messages[0].conversation_id
    before = content_fingerprint(store.engine, conversation_id)
    import_messages(store, messages, source="same-again.jsonl")
    assert content_fingerprint(store.engine, conversation_id) == before

    changed = _with_text(messages[-1], "a second version of the last message")
    record = Record("again.jsonl", 1, 0, MESSAGE_ADAPTER.dump_python(changed, mode="json"), changed)
    assert store.import_records([record], source="again.jsonl", replace=True).replaced == 1
    after = content_fingerprint(store.engine, conversation_id)
    assert before is not None and after is not None
    assert after[0] == before[0] and after[1] != before[1]


def test_an_unknown_conversation_has_no_fingerprint(store: Store) -> None:
    assert content_fingerprint(store.engine, "nobody") is None


def test_the_fingerprint_reads_an_index_not_the_rows_that_hold_a_long_traces_json() -> None:
    """On SQLite a column stored after a message's JSON is reached through every overflow page of its row:
    a 10,000-record trace's payload page paid for that on every request."""
    store = temp_store(long_trace(20))
    executed: list[tuple[str, Any]] = []

    def keep(conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        executed.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", keep)
    try:
        assert content_fingerprint(store.engine, "c-long") is not None
    finally:
        event.remove(store.engine, "before_cursor_execute", keep)
    reads = [(sql, params) for sql, params in executed if "FROM messages" in sql]
    assert len(reads) == 1
    with store.engine.connect() as conn:
        plan = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + reads[0][0], reads[0][1]).all()
    assert "USING COVERING INDEX" in " ".join(str(row[-1]) for row in plan), plan
