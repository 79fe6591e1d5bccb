"""The rows derived from a message or a conversation go with it: by foreign key on SQLite, by a trigger per statement
on PostgreSQL (revision 0034), whose derived tables have no foreign key for the import to check."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from sqlalchemy import Connection, delete, select, text

from core.reader import read_bytes
from core.store import ConversationQuery, Store
from core.store.engine import read_transaction, write_transaction
from core.store.search_pieces import PIECE_STRIDE
from core.store.tables import CONVERSATIONS, MESSAGES

BY_MESSAGE = ("message_outlines", "message_texts", "message_search_pieces", "search_chunks")
BY_CONVERSATION = ("conversation_grams", "conversation_kinds")
PG_ONLY = {"message_texts", "search_chunks", "conversation_grams"}
"""Tables (or, for ``conversation_grams``, a table of that name) that hold rows on PostgreSQL only."""


def _line(conversation_id: str, msg_id: str, content: str, ts: int) -> bytes:
    message = {"role": "user", "msg_type": "text", "conversation_id": conversation_id, "msg_id": msg_id,
               "create_ts": ts, "content": content}  # fmt: skip
    return orjson.dumps(message) + b"\n"


def _import(store: Store) -> None:
    long = "a long text " * (PIECE_STRIDE // 12 + 100)  # past one piece: search pieces too
    data = b"".join(
        _line(cid, f"{cid}-{k}", text_, k)
        for cid in ("gone", "kept")
        for k, text_ in enumerate((f"question of {cid} quokka", long, "short answer"))
    )
    store.import_records(read_bytes(data, source="t.jsonl"), source="t.jsonl")


def _rows(conn: Connection, tables: tuple[str, ...], key: str, pks: list[int]) -> dict[str, int]:
    """Rows of each table (those the backend fills) naming one of ``pks`` in ``key``."""
    found: dict[str, int] = {}
    for table in tables:
        if table in PG_ONLY and conn.dialect.name != "postgresql":
            continue
        count = conn.execute(text(f"SELECT count(*) FROM {table} WHERE {key} IN ({', '.join(map(str, pks))})"))
        found[table] = count.scalar_one()
    return found


def _pks(conn: Connection, conversation_id: str) -> tuple[int, list[int]]:
    pk = conn.execute(select(CONVERSATIONS.c.id).where(CONVERSATIONS.c.conversation_id == conversation_id))
    conversation = pk.scalar_one()
    messages = conn.execute(select(MESSAGES.c.id).where(MESSAGES.c.conversation_pk == conversation).order_by("id"))
    return conversation, list(messages.scalars())


def _derived(conn: Connection, conversation_id: str) -> dict[str, int]:
    conversation, messages = _pks(conn, conversation_id)
    return {
        **_rows(conn, BY_MESSAGE, "message_pk", messages),
        **_rows(conn, BY_CONVERSATION, "conversation_pk", [conversation]),
    }


def _holds_some(found: dict[str, Any]) -> bool:
    return all(count > 0 for table, count in found.items() if table != "message_outlines")


def test_deleting_a_conversation_deletes_every_row_derived_from_it_and_its_messages(store: Store) -> None:
    _import(store)
    with read_transaction(store.engine) as conn:
        before = {cid: _derived(conn, cid) for cid in ("gone", "kept")}
        gone = _pks(conn, "gone")
    assert _holds_some(before["gone"]) and before["gone"] == before["kept"]
    with write_transaction(store.engine) as conn:
        conn.execute(delete(CONVERSATIONS).where(CONVERSATIONS.c.conversation_id == "gone"))
    with read_transaction(store.engine) as conn:
        left = {
            **_rows(conn, BY_MESSAGE, "message_pk", gone[1]),
            **_rows(conn, BY_CONVERSATION, "conversation_pk", [gone[0]]),
        }
        assert set(left.values()) == {0}
        assert _derived(conn, "kept") == before["kept"]
    assert [c.conversation_id for c in store.iter_conversations(ConversationQuery(search="quokka"))] == ["kept"]


def test_deleting_messages_deletes_the_rows_derived_from_them_only(store: Store) -> None:
    _import(store)
    with read_transaction(store.engine) as conn:
        _, messages = _pks(conn, "gone")
        before = _rows(conn, BY_MESSAGE, "message_pk", messages[2:])
    with write_transaction(store.engine) as conn:
        conn.execute(delete(MESSAGES).where(MESSAGES.c.id.in_(messages[:2])))
    with read_transaction(store.engine) as conn:
        assert set(_rows(conn, BY_MESSAGE, "message_pk", messages[:2]).values()) == {0}
        assert _rows(conn, BY_MESSAGE, "message_pk", messages[2:]) == before


@pytest.mark.postgres
def test_postgres_derived_tables_have_no_foreign_key_and_empty_with_a_truncate(pg_session_url: str) -> None:
    with Store.open(pg_session_url) as store:
        with read_transaction(store.engine) as conn:
            keyed = conn.execute(text("SELECT conrelid::regclass::text FROM pg_constraint WHERE contype = 'f'"))
            assert set(keyed.scalars()).isdisjoint(BY_MESSAGE + BY_CONVERSATION)
        _import(store)
        with write_transaction(store.engine) as conn:
            conn.execute(text("TRUNCATE conversations RESTART IDENTITY CASCADE"))
        with read_transaction(store.engine) as conn:
            for table in BY_MESSAGE + BY_CONVERSATION:
                assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one() == 0
