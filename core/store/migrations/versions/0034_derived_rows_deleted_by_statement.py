"""PostgreSQL: the rows derived from a message or a conversation deleted by one trigger per statement, in place of a
foreign key each; the chunks' grams compared bytewise.

A foreign key checks every row inserted into the table that holds it: a ``SELECT ... FOR KEY SHARE`` of the row it
names, run by a trigger per row. The import writes each message's outline, exact text, search chunks and pieces,
and each new conversation's search row and kinds, in the transaction that inserts the message or the conversation
(or, for the kinds of a stored conversation, that updates its figures), under the import lock
(``core.store.importer``) that every delete of a message or a conversation also holds: the check could never fail.
These tables lose their foreign keys; one ``AFTER DELETE`` trigger per statement on ``messages`` and on
``conversations`` deletes the derived rows of every deleted parent at once, from the statement's transition table
(https://www.postgresql.org/docs/15/sql-createtrigger.html), as ``ON DELETE CASCADE`` did, and one per ``TRUNCATE``
empties them as ``TRUNCATE ... CASCADE`` did. The upgrade's backfill of outlines locks the messages it reads as the
keys did. The messages keep their key to the conversations (a stored conversation receives messages), and SQLite
its foreign keys.

``search_chunks.grams`` were compared in the database's collation, through ``strcoll`` unless it is ``C``; they are
only ever compared for equality (the GIN index's ``@>``), so ``COLLATE "C"``, as ``conversation_grams.grams``
(revision 0031): bytewise, the same answers.
"""

from __future__ import annotations

from alembic import op

revision = "0034"
down_revision = "0033"

DERIVED = {
    ("messages", "message_pk"): ("message_outlines", "message_texts", "message_search_pieces", "search_chunks"),
    ("conversations", "conversation_pk"): ("conversation_grams", "conversation_kinds"),
}
"""Each parent table and the key naming it, and the tables whose rows it deletes."""


def _function(verb: str, parent: str) -> str:
    return f"traceloupe_{verb}_{parent}_rows"


def _triggers_sql(parent: str, key: str, tables: tuple[str, ...]) -> str:
    """The delete trigger, and a truncate trigger that empties the derived tables as ``TRUNCATE ... CASCADE`` did."""
    deletes = "".join(f"  DELETE FROM {table} WHERE {key} IN (SELECT id FROM gone);\n" for table in tables)  # noqa: S608
    return f"""
CREATE FUNCTION {_function("delete", parent)}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
{deletes}  RETURN NULL;
END $$;
CREATE TRIGGER {parent}_delete_derived AFTER DELETE ON {parent} REFERENCING OLD TABLE AS gone
FOR EACH STATEMENT EXECUTE FUNCTION {_function("delete", parent)}();
CREATE FUNCTION {_function("truncate", parent)}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE {", ".join(tables)};
  RETURN NULL;
END $$;
CREATE TRIGGER {parent}_truncate_derived AFTER TRUNCATE ON {parent}
FOR EACH STATEMENT EXECUTE FUNCTION {_function("truncate", parent)}()
"""


def _grams_collation(collation: str) -> None:
    op.execute(f"ALTER TABLE search_chunks ALTER COLUMN grams TYPE text[] COLLATE {collation}")


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")  # every chunk rewritten: the engine's timeout is for requests
    for (parent, key), tables in DERIVED.items():
        for table in tables:
            op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_{key}_fkey")
        op.execute(_triggers_sql(parent, key, tables))
    _grams_collation('"C"')


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")
    _grams_collation("pg_catalog.default")
    for (parent, key), tables in DERIVED.items():
        for verb in ("delete", "truncate"):
            op.execute(f"DROP TRIGGER {parent}_{verb}_derived ON {parent}")
            op.execute(f"DROP FUNCTION {_function(verb, parent)}()")
        for table in tables:
            op.execute(
                f"ALTER TABLE {table} ADD CONSTRAINT {table}_{key}_fkey "
                f"FOREIGN KEY ({key}) REFERENCES {parent}(id) ON DELETE CASCADE"
            )
