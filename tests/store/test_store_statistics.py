"""A bulk import on PostgreSQL refreshes the planner's statistics: the next page is planned from its rows."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from sqlalchemy import event, text

from core.store import Store
from core.store.engine import write_transaction
from core.store.schema import _config, upgrade
from core.store.settings import EngineSettings
from core.store.statistics import MIN_ROWS
from tests.store.store_factory import import_texts
from tests.store.store_pg import pg_database


def _analyzed(store: Store) -> dict[str, bool]:
    with store.engine.connect() as conn:
        rows = conn.execute(text("SELECT relname, last_analyze IS NOT NULL FROM pg_stat_user_tables"))
        return {name: done for name, done in rows}


@pytest.mark.postgres
def test_a_bulk_import_analyzes_the_tables_it_wrote_and_a_small_one_does_not() -> None:
    with pg_database() as url, Store.open(url) as store:
        import_texts(store, {f"small-{n}": f"text {n}" for n in range(10)})
        assert not _analyzed(store)["messages"]
        import_texts(store, {f"bulk-{n}": f"text {n}" for n in range(MIN_ROWS)})
        analyzed = _analyzed(store)
        assert all(analyzed[t] for t in ("conversations", "messages", "message_outlines", "search_chunks"))
        with store.engine.connect() as conn:
            estimate = conn.execute(text("SELECT reltuples FROM pg_class WHERE relname = 'messages'")).scalar_one()
        assert estimate == MIN_ROWS + 10  # the planner now knows the rows just written


@pytest.mark.postgres
def test_the_analyze_and_vacuum_after_an_import_run_without_the_engines_statement_timeout() -> None:
    """Part of the import: a large store's ANALYZE or VACUUM must not be cancelled by the timeout meant for requests,
    and the pooled connection gets that timeout back afterwards."""
    seen: list[tuple[str, str]] = []

    def timeout_at_maintenance(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith(("ANALYZE", "VACUUM")):
            seen.append((statement.split()[0], cursor.connection.execute("SHOW statement_timeout").fetchone()[0]))

    settings = EngineSettings(statement_timeout_ms=30_000, pool_size=1)
    with pg_database() as url, Store.open(url, settings=settings) as store:
        event.listen(store.engine, "before_cursor_execute", timeout_at_maintenance)
        import_texts(store, {f"bulk-{n}": f"text {n}" for n in range(MIN_ROWS)})
        with store.engine.connect() as conn:
            assert conn.execute(text("SHOW statement_timeout")).scalar_one() == "30s"
    assert seen == [("ANALYZE", "0"), ("VACUUM", "0")]


@pytest.mark.postgres
def test_a_bulk_import_leaves_its_tables_vacuumed_so_no_reader_rewrites_a_page() -> None:
    """Without a vacuum, every page of a fresh import is dirtied by the first query to read it (hint bits), and an
    index-only scan reads the heap row by row until the visibility map is set; autovacuum may be off."""
    with pg_database() as url, Store.open(url) as store:
        import_texts(store, {f"bulk-{n}": f"text {n}" for n in range(MIN_ROWS)})
        with store.engine.connect() as conn:
            tables = ("conversations", "messages", "search_chunks", "conversation_grams")
            pages = text("SELECT relname, relpages, relallvisible FROM pg_class WHERE relname = ANY(:t)")
            rows = conn.execute(pages, {"t": list(tables)}).all()
        assert {name for name, *_ in rows} == set(tables)
        assert all(pages > 0 and visible == pages for _, pages, visible in rows), rows


_PENDING = text(
    "SELECT c.relname, gin_clean_pending_list(i.indexrelid) FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'gin'"
)


@pytest.mark.postgres
def test_a_bulk_import_leaves_no_gin_entries_pending() -> None:
    """Every search reads a GIN index's pending list whole: a bulk import merges what it added into the index."""
    with pg_database() as url, Store.open(url) as store:
        import_texts(store, {f"bulk-{n}": f"text {n}" for n in range(MIN_ROWS)})
        with store.engine.begin() as conn:
            # The pages merged now: none left by the import.
            pending = {name: pages for name, pages in conn.execute(_PENDING)}
        assert len(pending) >= 5  # the chunks' trigrams and grams, the conversations' grams, ids and titles
        assert pending == dict.fromkeys(pending, 0)


def _stated(store: Store) -> set[tuple[str, str]]:
    with store.engine.connect() as conn:
        rows = conn.execute(text("SELECT tablename, attname FROM pg_stats WHERE schemaname = 'public'"))
        return {(table, column) for table, column in rows}


@pytest.mark.postgres
def test_the_analyze_after_an_import_leaves_out_the_columns_only_read_and_a_downgrade_brings_them_back() -> None:
    """Revision 0033: no plan reads statistics of the bodies, texts and outlines, each read by row id."""
    read_only = {("messages", "body"), ("messages", "search_text"), ("message_texts", "text")}
    read_only.add(("message_outlines", "outline"))
    with pg_database() as url, Store.open(url) as store:
        import_texts(store, {f"bulk-{n}": f"text {n}" for n in range(MIN_ROWS)})
        stated = _stated(store)
        assert {("messages", "conversation_pk"), ("search_chunks", "folded")} <= stated
        assert not stated & read_only
        with write_transaction(store.engine) as conn:
            command.downgrade(_config(conn), "0032")
            conn.execute(text("ANALYZE messages, message_texts, message_outlines"))
        assert read_only <= _stated(store)
        assert upgrade(store.engine).before == "0032"
