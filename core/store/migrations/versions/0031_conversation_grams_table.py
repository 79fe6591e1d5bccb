"""PostgreSQL: each conversation's id and title grams stored in a table, most written by the import, in place of two
expression indexes.

Revision 0020 indexed ``traceloupe_grams(lower(...))`` of every conversation's id and of its title: the server
computed both for each new row and kept them in two GIN indexes, and that was most of the cost of inserting a
conversation. Now ``conversation_grams`` (the name of SQLite's index of the same grams) holds one row of grams per
conversation, the distinct grams of both, under one plain GIN index, compared bytewise (``COLLATE "C"``) where the
database's collation called ``strcoll`` for every comparison the index made. A table of its own, not a column: the
grams are several times a conversation's row, which the list reads. ``traceloupe_conversation_grams`` gives them as
the indexes did (the server's ``lower``): the import writes those of an ASCII id and title itself
(``core.store.pg_search``, the same there) and asks it for the others; a trigger rewrites them when a writer
changes an id or a title. SQLite: nothing changes.
"""

from __future__ import annotations

from alembic import op

from core.store.grams import GRAMS_FUNCTION

revision = "0031"
down_revision = "0030"

EXPRESSION_INDEXES = {
    "ix_search_conversations_id_grams": f"conversations USING gin ({GRAMS_FUNCTION}(lower(conversation_id)))",
    "ix_search_conversations_title_grams": f"conversations USING gin ({GRAMS_FUNCTION}(lower(title)))",
}
TABLE = "conversation_grams"
INDEX = "ix_search_conversation_grams"
FUNCTION = "traceloupe_conversation_grams"
FUNCTION_SQL = f"""
CREATE FUNCTION {FUNCTION}(conversation_id text, title text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT DISTINCT unnest({GRAMS_FUNCTION}(lower(conversation_id)) || {GRAMS_FUNCTION}(lower(title))))
$$
"""
TRIGGER = "conversations_grams_update"
TRIGGER_FUNCTION = "traceloupe_conversation_grams_update"
TRIGGER_SQL = f"""
CREATE FUNCTION {TRIGGER_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {TABLE} SET grams = {FUNCTION}(NEW.conversation_id, NEW.title) WHERE conversation_pk = NEW.id;
  RETURN NULL;
END $$;
CREATE TRIGGER {TRIGGER} AFTER UPDATE OF conversation_id, title ON conversations FOR EACH ROW
WHEN (NEW.conversation_id IS DISTINCT FROM OLD.conversation_id OR NEW.title IS DISTINCT FROM OLD.title)
EXECUTE FUNCTION {TRIGGER_FUNCTION}()
"""  # noqa: S608 - constants


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")  # every conversation's grams: the engine's timeout is for requests
    op.execute(FUNCTION_SQL)
    op.execute(
        f"CREATE TABLE {TABLE} (conversation_pk integer PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE, "
        'grams text[] COLLATE "C" NOT NULL)'
    )
    op.execute(TRIGGER_SQL)
    op.execute(f"INSERT INTO {TABLE} SELECT id, {FUNCTION}(conversation_id, title) FROM conversations")  # noqa: S608
    for name in EXPRESSION_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    op.execute(f"CREATE INDEX {INDEX} ON {TABLE} USING gin (grams)")
    op.execute(f"ANALYZE {TABLE}")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")
    op.execute(f"DROP TRIGGER IF EXISTS {TRIGGER} ON conversations")
    op.execute(f"DROP FUNCTION IF EXISTS {TRIGGER_FUNCTION}()")
    op.execute(f"DROP TABLE IF EXISTS {TABLE}")
    op.execute(f"DROP FUNCTION IF EXISTS {FUNCTION}(text, text)")
    for name, target in EXPRESSION_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON {target}")
