"""PostgreSQL: each conversation's id and title grams stored in a column, most written by the import, in place of
two expression indexes.

Revision 0020 indexed ``traceloupe_grams(lower(...))`` of every conversation's id and of its title: the server
computed both for each new row and kept them in two GIN indexes, and that was most of the cost of inserting a
conversation. Now ``conversations.search_grams`` holds the distinct grams of both under one plain GIN index
(``core.store.pg_search.conversation_grams``), its text compared bytewise (``COLLATE "C"``) where the database's
collation called ``strcoll`` for every comparison the index made. The import writes the grams of an ASCII id and
title itself (its ``lower`` is the server's there); a trigger fills the others from the server's ``lower``, as the
indexes did, and refills the column whenever a writer changes an id or a title. SQLite: nothing changes.
"""

from __future__ import annotations

from alembic import op

from core.store.grams import GRAMS_FUNCTION

revision = "0031"
down_revision = "0029"

EXPRESSION_INDEXES = {
    "ix_search_conversations_id_grams": f"conversations USING gin ({GRAMS_FUNCTION}(lower(conversation_id)))",
    "ix_search_conversations_title_grams": f"conversations USING gin ({GRAMS_FUNCTION}(lower(title)))",
}
COLUMN_INDEX = "ix_search_conversations_grams"
FILL_FUNCTION = "traceloupe_conversation_grams"
SERVER_GRAMS = (
    f"ARRAY(SELECT DISTINCT unnest({GRAMS_FUNCTION}(lower(NEW.conversation_id)) || {GRAMS_FUNCTION}(lower(NEW.title))))"
)
"""The grams the expression indexes held, of the row at hand, each once."""
TRIGGERS = {
    "conversations_search_grams_insert": "BEFORE INSERT ON conversations FOR EACH ROW WHEN (NEW.search_grams IS NULL)",
    "conversations_search_grams_update": (
        "BEFORE UPDATE OF conversation_id, title ON conversations FOR EACH ROW WHEN ("
        "NEW.conversation_id IS DISTINCT FROM OLD.conversation_id OR NEW.title IS DISTINCT FROM OLD.title)"
    ),
}


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")  # every conversation rewritten: the engine's timeout is for requests
    op.execute('ALTER TABLE conversations ADD COLUMN search_grams text[] COLLATE "C"')
    op.execute(
        f"CREATE FUNCTION {FILL_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$ "
        f"BEGIN NEW.search_grams := {SERVER_GRAMS}; RETURN NEW; END $$"
    )
    for name, when in TRIGGERS.items():
        op.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION {FILL_FUNCTION}()")
    op.execute(f"UPDATE conversations SET search_grams = {SERVER_GRAMS.replace('NEW.', '')}")  # noqa: S608 - a constant
    op.execute("ALTER TABLE conversations ALTER COLUMN search_grams SET NOT NULL")
    for name in EXPRESSION_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    op.execute(f"CREATE INDEX {COLUMN_INDEX} ON conversations USING gin (search_grams)")
    op.execute("ANALYZE conversations")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")
    op.execute(f"DROP INDEX IF EXISTS {COLUMN_INDEX}")
    for name in TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name} ON conversations")
    op.execute(f"DROP FUNCTION IF EXISTS {FILL_FUNCTION}()")
    op.execute("ALTER TABLE conversations DROP COLUMN search_grams")
    for name, target in EXPRESSION_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON {target}")
