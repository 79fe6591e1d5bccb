"""PostgreSQL: a conversation's id and title folded for search as its messages' texts are, and stored folded.

The needle and the messages' chunks are folded by ``core.store.casefold`` (Unicode case folding, character by
character), but the ids and titles by the server's ``lower``, which leaves a final sigma as it is and folds by
the database's locale (ASCII letters only under ``C``): "ΣΟΦΟΣ" did not find a conversation whose id or title is
"σοφος". Now ``conversation_grams`` holds each conversation's id and title folded, beside their grams, under the
trigram indexes that were on ``lower`` of the conversations' columns: the import folds them as it folds the
messages, and ``traceloupe_fold``, the same fold in SQL, serves the trigger and this migration. SQLite: nothing
changes (it folds with the same function in Python).
"""

from __future__ import annotations

from alembic import op

from core.store.grams import GRAMS_FUNCTION
from core.store.pg_search import FOLD_FUNCTION, fold_function_sql

revision = "0032"
down_revision = "0031"

TABLE = "conversation_grams"
GRAMS = "traceloupe_conversation_grams"
TRIGGER_FUNCTION = "traceloupe_conversation_grams_update"
OLD_INDEXES = {"ix_search_conversations_id": "conversation_id", "ix_search_conversations_title": "title"}
NEW_INDEXES = {"ix_search_conversation_grams_id": "folded_id", "ix_search_conversation_grams_title": "folded_title"}
GRAMS_INDEX = "ix_search_conversation_grams"
"""Dropped while every row is rewritten, and built again: faster than updating it row by row."""


def _grams_function(fold: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION {GRAMS}(conversation_id text, title text) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ARRAY(SELECT DISTINCT unnest({GRAMS_FUNCTION}({fold}(conversation_id)) || {GRAMS_FUNCTION}({fold}(title))))
$$
"""


def _trigger_function(sets: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION {TRIGGER_FUNCTION}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE {TABLE} SET {sets} WHERE conversation_pk = NEW.id;
  RETURN NULL;
END $$
"""  # noqa: S608 - constants


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")  # every conversation: the engine's timeout is for requests
    op.execute(fold_function_sql())
    op.execute(_grams_function(FOLD_FUNCTION))
    op.execute(f"ALTER TABLE {TABLE} ADD COLUMN folded_id text, ADD COLUMN folded_title text")
    op.execute(f"DROP INDEX {GRAMS_INDEX}")
    # The grams made again only where the fold differs from lower(): the server computes them slowly.
    op.execute(
        f"UPDATE {TABLE} g SET folded_id = f.id, folded_title = f.title, "  # noqa: S608 - constants
        f"grams = CASE WHEN f.id = lower(c.conversation_id) AND f.title = lower(c.title) THEN g.grams "
        f"ELSE {GRAMS}(c.conversation_id, c.title) END "
        f"FROM conversations c, LATERAL (SELECT {FOLD_FUNCTION}(c.conversation_id) AS id, "
        f"{FOLD_FUNCTION}(c.title) AS title) f WHERE c.id = g.conversation_pk"
    )
    op.execute(f"ALTER TABLE {TABLE} ALTER COLUMN folded_id SET NOT NULL, ALTER COLUMN folded_title SET NOT NULL")
    op.execute(
        _trigger_function(
            f"grams = {GRAMS}(NEW.conversation_id, NEW.title), folded_id = {FOLD_FUNCTION}(NEW.conversation_id), "
            f"folded_title = {FOLD_FUNCTION}(NEW.title)"
        )
    )
    for name in OLD_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    op.execute(f"CREATE INDEX {GRAMS_INDEX} ON {TABLE} USING gin (grams)")
    for name, column in NEW_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON {TABLE} USING gin ({column} gin_trgm_ops)")
    op.execute(f"ANALYZE {TABLE}")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("SET LOCAL statement_timeout = 0")
    op.execute(_trigger_function(f"grams = {GRAMS}(NEW.conversation_id, NEW.title)"))
    op.execute(_grams_function("lower"))
    for name in NEW_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {name}")
    op.execute(f"DROP INDEX {GRAMS_INDEX}")
    op.execute(
        f"UPDATE {TABLE} g SET grams = {GRAMS}(c.conversation_id, c.title) "  # noqa: S608 - constants
        "FROM conversations c WHERE c.id = g.conversation_pk "
        "AND (g.folded_id <> lower(c.conversation_id) OR g.folded_title <> lower(c.title))"
    )
    op.execute(f"ALTER TABLE {TABLE} DROP COLUMN folded_id, DROP COLUMN folded_title")
    op.execute(f"CREATE INDEX {GRAMS_INDEX} ON {TABLE} USING gin (grams)")
    for name, column in OLD_INDEXES.items():
        op.execute(f"CREATE INDEX {name} ON conversations USING gin (lower({column}) gin_trgm_ops)")
    op.execute(f"DROP FUNCTION IF EXISTS {FOLD_FUNCTION}(text)")
