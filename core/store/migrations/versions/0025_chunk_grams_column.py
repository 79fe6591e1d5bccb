"""PostgreSQL: each search chunk's grams stored in a column, written by the import, in place of an expression index.

Revision 0020 indexed ``traceloupe_grams(folded)`` of every chunk: the server computed each chunk's grams
in SQL, every pair kept as many times as it occurs, and indexing them was most of an import's time. The
import now writes each chunk's distinct grams itself (``core.store.pg_search.with_grams``, from the
function SQLite's grams come from) into ``search_chunks.grams``, under a plain GIN index. The chunks stored
before get theirs here from the same SQL function, deduplicated. The conversations' id and title keep their
expression indexes (one short text per conversation). SQLite: nothing changes.
"""

from __future__ import annotations

from alembic import op

from core.store.grams import GRAMS_FUNCTION

revision = "0025"
down_revision = "0024"

EXPRESSION_INDEX = "ix_search_chunks_grams"
COLUMN_INDEX = "ix_search_chunks_grams_column"


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")  # every chunk rewritten: the engine's timeout is for requests
    op.execute("ALTER TABLE search_chunks ADD COLUMN grams text[]")
    op.execute(f"UPDATE search_chunks SET grams = ARRAY(SELECT DISTINCT unnest({GRAMS_FUNCTION}(folded)))")  # noqa: S608 - a constant
    op.execute("ALTER TABLE search_chunks ALTER COLUMN grams SET NOT NULL")
    op.execute(f"DROP INDEX IF EXISTS {EXPRESSION_INDEX}")
    op.execute(f"CREATE INDEX {COLUMN_INDEX} ON search_chunks USING gin (grams)")
    op.execute("ANALYZE search_chunks")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")
    op.execute(f"DROP INDEX IF EXISTS {COLUMN_INDEX}")
    op.execute("ALTER TABLE search_chunks DROP COLUMN grams")
    op.execute(f"CREATE INDEX {EXPRESSION_INDEX} ON search_chunks USING gin ({GRAMS_FUNCTION}(folded))")
