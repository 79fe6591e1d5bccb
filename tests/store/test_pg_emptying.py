"""The session database emptied between PostgreSQL store tests (``tests.store.pg_emptying``) is as a TRUNCATE of
the tests' tables left it: no row in any of them, the others kept, and every row numbered from the start again."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select, table, text

from core.accounts import Role
from core.store import Store
from core.store.engine import make_engine, resolve_url, write_transaction
from core.store.tables import CONVERSATIONS, MESSAGES
from core.store.users import create_user
from tests.store.pg_emptying import Emptying
from tests.store.store_pg import pg_database
from tests.web.web_corpus import every_kind, import_messages

pytestmark = pytest.mark.postgres


def _ids(store: Store) -> list[list[int]]:
    with store.engine.connect() as conn:
        return [list(conn.execute(select(t.c.id).order_by(t.c.id)).scalars()) for t in (CONVERSATIONS, MESSAGES)]


def test_an_emptied_database_holds_no_test_rows_keeps_the_others_and_numbers_rows_from_one_again() -> None:
    with pg_database() as url, Store.open(url) as store:
        import_messages(store, every_kind("first", conversation_id="c-1"))
        create_user(store.engine, "ada", Role.ADMIN, "not-a-hash")
        first = _ids(store)
        with store.engine.connect() as conn:
            secrets = conn.execute(text("SELECT count(*) FROM app_secrets")).scalar()
        import_messages(store, every_kind("dropped", conversation_id="c-2"), source="dropped.jsonl")
        with write_transaction(store.engine) as conn:
            conn.execute(text("DELETE FROM conversations WHERE conversation_id = 'c-2'"))  # its numbers stay used
        engine = make_engine(resolve_url(url))
        try:
            with engine.begin() as conn:
                emptying = Emptying.read(conn)
                emptying.empty(conn)
            with engine.connect() as conn:
                counts = {t: conn.execute(select(func.count()).select_from(table(t))).scalar() for t in emptying.tables}
                assert conn.execute(text("SELECT count(*) FROM app_secrets")).scalar() == secrets
        finally:
            engine.dispose()
        assert {"conversations", "messages", "search_chunks", "users", "audit_events"} <= set(counts)
        assert set(counts.values()) == {0}, counts
        import_messages(store, every_kind("first", conversation_id="c-1"))
        assert _ids(store) == first
