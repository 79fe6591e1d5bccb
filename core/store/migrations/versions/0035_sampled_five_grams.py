"""PostgreSQL: the grams of each search chunk and of each conversation's id and title also hold the text's 5-grams
sampled at every fourth place, for needles of eight characters or more.

A long needle made of common trigrams ("zx0500001") made the trigram GIN indexes walk posting lists that grow with
the store. Its sampled 5-grams (``core.store.phase_grams``) are rare: the search now asks the grams' GIN indexes for
the rows holding one of its four phases, and tests those with ``LIKE``. The import writes the new grams itself; here
``traceloupe_grams`` (the trigger's, through ``traceloupe_conversation_grams``) gives them too, and the rows stored
before get theirs from ``traceloupe_sampled_grams``, each table's GIN indexes (its grams' and its trigrams', which
every rewritten row would enter again) dropped and built again: faster than updating them row by row. The downgrade
keeps the grams of one or two characters and brings back revision 0020's function.
SQLite: nothing changes (its index answers needles of one or two characters only).
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import text

from core.store.grams import GRAMS_FUNCTION, MAX_GRAM
from core.store.grams import GRAMS_FUNCTION_SQL as PAIRS_FUNCTION_SQL
from core.store.phase_grams import GRAMS_FUNCTION_SQL, SAMPLED_FUNCTION, SAMPLED_FUNCTION_SQL, WIDTH

revision = "0035"
down_revision = "0034"

BACKFILL = {
    "search_chunks": f"grams || ARRAY(SELECT DISTINCT unnest({SAMPLED_FUNCTION}(folded)))",
    "conversation_grams": (
        f"ARRAY(SELECT DISTINCT unnest(grams || {SAMPLED_FUNCTION}(folded_id) || {SAMPLED_FUNCTION}(folded_title)))"
    ),
}
"""Each table's grams with the sampled 5-grams of its folded texts (none equals a stored character or pair)."""
LONG_ENOUGH = {
    "search_chunks": f"length(folded) >= {WIDTH}",
    "conversation_grams": f"(length(folded_id) >= {WIDTH} OR length(folded_title) >= {WIDTH})",
}
"""The rows that have a 5-gram: the others are left as they are."""


GIN_INDEXES = text(
    "SELECT indexname, indexdef FROM pg_indexes "
    "WHERE schemaname = current_schema() AND tablename = :t AND indexdef LIKE '% USING gin %'"
)
"""A table's GIN indexes and the statements that made them."""


def _rebuilt(statements: dict[str, str]) -> None:
    """Run each table's statement with the table's GIN indexes dropped, and build them again as they were."""
    bind = op.get_bind()
    for table, statement in statements.items():
        indexes = bind.execute(GIN_INDEXES, {"t": table}).all()
        for name, _ in indexes:
            op.execute(f"DROP INDEX {name}")
        op.execute(statement)
        for _, definition in indexes:
            op.execute(definition)
        op.execute(f"ANALYZE {table}")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")  # every chunk's grams: the engine's timeout is for requests
    op.execute(SAMPLED_FUNCTION_SQL)
    op.execute(GRAMS_FUNCTION_SQL)
    _rebuilt(
        {
            table: f"UPDATE {table} SET grams = {grams} WHERE {LONG_ENOUGH[table]}"  # noqa: S608 - constants
            for table, grams in BACKFILL.items()
        }
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")
    op.execute(f"DROP FUNCTION {GRAMS_FUNCTION}(text)")  # a SQL function's body names no dependency: nothing in the way
    op.execute(PAIRS_FUNCTION_SQL)
    op.execute(f"DROP FUNCTION {SAMPLED_FUNCTION}(text)")
    _rebuilt(
        {
            table: f"UPDATE {table} SET grams = ARRAY(SELECT g FROM unnest(grams) AS g WHERE length(g) <= {MAX_GRAM}) "  # noqa: S608
            f"WHERE {LONG_ENOUGH[table]}"
            for table in BACKFILL
        }
    )
