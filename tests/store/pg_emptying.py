"""The session's PostgreSQL database emptied between tests as ``TRUNCATE <roots> RESTART IDENTITY CASCADE`` would
leave it, at the cost of the rows a test left behind.

A TRUNCATE gives every table it names (and each one cascaded to) new files, whether it holds rows or not: on
the test server that was most of a store test's set-up. Here only the tables that hold rows are emptied, with
DELETE (children before parents), and every sequence of the tables TRUNCATE would empty starts again where its
``RESTART IDENTITY`` would start it.
"""

from __future__ import annotations

import graphlib
from dataclasses import dataclass

from sqlalchemy import Connection, text

ROOTS = (
    "conversations", "messages", "conversation_kinds", "runs", "suites", "api_keys", "ingest_batches",
    "ingest_links", "ingest_outputs", "live_conversations", "users", "audit_events",
    # Derived from a message or a conversation, without a foreign key to find them by (revision 0034).
    "message_outlines", "message_texts", "message_search_pieces", "search_chunks", "conversation_grams",
)  # fmt: skip
"""The tables a store test starts without rows; the tables that refer to them are emptied with them."""

_FOREIGN_KEYS = text(
    "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint "
    "WHERE contype = 'f' AND connamespace = 'public'::regnamespace"
)
_SEQUENCES = text(
    "SELECT s.oid::regclass::text, t.relname, q.seqstart FROM pg_depend d "
    "JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S' "
    "JOIN pg_class t ON t.oid = d.refobjid AND t.relnamespace = 'public'::regnamespace "
    "JOIN pg_sequence q ON q.seqrelid = s.oid "
    "WHERE d.classid = 'pg_class'::regclass AND d.refclassid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')"
)


@dataclass(frozen=True)
class Emptying:
    """What emptying a database of Traceloupe's schema takes: its tables in the order they can be deleted from
    (each before any table it refers to) and each table's sequences with their starts."""

    tables: tuple[str, ...]
    sequences: tuple[tuple[str, str, int], ...]

    @classmethod
    def read(cls, conn: Connection) -> Emptying:
        """The tables ``ROOTS`` and every table that refers to one of them, read from ``conn``'s catalog."""
        referrers: dict[str, set[str]] = {}
        for child, parent in conn.execute(_FOREIGN_KEYS):
            referrers.setdefault(parent, set()).add(child)
        closure: set[str] = set()
        todo = list(ROOTS)
        while todo:
            table = todo.pop()
            if table not in closure:
                closure.add(table)
                todo += referrers.get(table, ())
        order: graphlib.TopologicalSorter[str] = graphlib.TopologicalSorter()
        for parent in closure:
            order.add(parent, *(child for child in referrers.get(parent, ()) if child != parent))
        sequences = tuple((seq, table, start) for seq, table, start in conn.execute(_SEQUENCES) if table in closure)
        return cls(tuple(order.static_order()), sequences)

    def empty(self, conn: Connection) -> None:
        """Delete every row of the tables that hold any, and start their sequences again."""
        holding = " UNION ALL ".join(f"SELECT '{t}' WHERE EXISTS (SELECT FROM {t})" for t in self.tables)
        full = set(conn.execute(text(holding)).scalars())
        for table in self.tables:
            if table in full:
                conn.execute(text(f"DELETE FROM {table}"))
        # Every sequence, not only the full tables': a test may have deleted the rows it made.
        restarts = [f"setval('{seq}', {start}, false)" for seq, _table, start in self.sequences]
        if restarts:
            conn.execute(text("SELECT " + ", ".join(restarts)))
