"""PostgreSQL's planner statistics and GIN pending lists, settled after a bulk import.

The planner picks its plans from each table's statistics. A bulk import changes them at once, and
autovacuum (when it runs at all) catches up only later: until then a list page can hash-join every
outline in the store to read three (``bench/PERFORMANCE.md``), and a search builds every match before
sorting. PostgreSQL's manual says to run ``ANALYZE`` after loading data; an import that grew the
messages by a tenth or more does, on the tables it wrote.

A GIN index (the search's trigrams and grams) takes new entries into a pending list, merged into the index only
once the list passes ``gin_pending_list_limit`` or by a vacuum; every search reads the list whole until then
(https://www.postgresql.org/docs/current/gin-implementation.html#GIN-FAST-UPDATE). An import of ``MIN_ROWS``
messages or more merges it at once (``gin_clean_pending_list``), on the indexes the store's user owns (the
function's rule, as ``ANALYZE``'s).

The same import then vacuums the tables it wrote (outside its transaction, as ``VACUUM`` must run): a fresh row's
visibility is otherwise settled by the first query that reads it, which then writes the page back, and an
index-only scan (the list's walk in its order) reads the heap row by row until the visibility map is set
(https://www.postgresql.org/docs/current/routine-vacuuming.html#VACUUM-FOR-VISIBILITY-MAP). Autovacuum would do it
later, when it runs at all: a server may have it off.
"""

from __future__ import annotations

from sqlalchemy import Engine, text

from core.store.backend import backend_of
from core.store.engine import write_transaction

MIN_ROWS = 1000
"""Fewer new messages than this never refresh the statistics (the planner's guess is good enough)."""
SHARE = 0.1
"""The share of the stored messages (as last counted) that an import must add, as autovacuum's default rule."""
IMPORTED_TABLES = (
    "conversations",
    "messages",
    "message_outlines",
    "message_texts",
    "search_chunks",
    "conversation_kinds",
    "conversation_grams",
    "runs",
)
GIN_TABLES = ("search_chunks", "conversation_grams")
"""The imported tables with GIN indexes (``core.store.pg_search``)."""
_MERGE_PENDING = text(
    "SELECT gin_clean_pending_list(i.indexrelid) FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
    " WHERE a.amname = 'gin' AND i.indrelid = ANY(CAST(:tables AS regclass[])) AND pg_has_role(c.relowner, 'USAGE')"
)


def analyze_after_import(engine: Engine, new_messages: int) -> bool:
    """Merge the GIN pending lists after an import of ``MIN_ROWS`` messages or more, and ``ANALYZE`` and vacuum the
    imported tables when ``new_messages`` is a large share of the store; True when it analyzed."""
    if not backend_of(engine).analyzes_after_import or new_messages < MIN_ROWS:
        return False
    with write_transaction(engine, label="the statistics after an import") as conn:
        backend_of(engine).unbounded_statements(conn)  # part of the import: the engine's timeout is for requests
        conn.execute(_MERGE_PENDING, {"tables": list(GIN_TABLES)})
        counted = conn.execute(text("SELECT reltuples FROM pg_class WHERE oid = 'messages'::regclass")).scalar_one()
        if new_messages < SHARE * max(counted, 0):
            return False
        conn.execute(text(f"ANALYZE {', '.join(IMPORTED_TABLES)}"))  # table names are constants above
    _vacuum(engine)
    return True


def _vacuum(engine: Engine) -> None:
    # Index cleanup off: an import mostly adds rows (what a replace left dead is a later vacuum's), and the GIN
    # pending lists were merged above.
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("SET statement_timeout = 0"))  # part of the import, as above
        try:
            conn.execute(text(f"VACUUM (INDEX_CLEANUP OFF) {', '.join(IMPORTED_TABLES)}"))
        finally:
            conn.execute(text("RESET statement_timeout"))
