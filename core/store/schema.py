"""Schema migrations: Alembic, driven from code, with an automatic first upgrade of an empty database.

Upgrades run inside one write transaction (DDL is transactional on SQLite and on
PostgreSQL) that also holds the writer lock: BEGIN IMMEDIATE on SQLite, a
transaction-scoped advisory lock on PostgreSQL. Several processes opening the same
fresh database at once therefore migrate it exactly once; the others wait, then
find it current.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine

from core.store.backend import backend_of
from core.store.backfill import backfill_outlines
from core.store.engine import read_transaction, write_transaction
from core.store.errors import SchemaOutOfDate

SCRIPT_LOCATION = "core.store:migrations"
_OUTLINES_REVISION = "0003"
"""The revision that made message outlines: messages stored before it get theirs when the upgrade passes it."""
_MIGRATION_LOCK = 0x7472_6C75  # "trlu": an arbitrary constant shared by every Traceloupe process


@dataclass(frozen=True, slots=True)
class UpgradeResult:
    """The schema revision before and after an upgrade (equal when there was nothing to do)."""

    before: str | None
    after: str
    outlined: int = 0
    """Messages stored before revision 0003 given an outline by this upgrade (``core.store.backfill``)."""
    queue_schema: bool = False
    """PostgreSQL: this upgrade applied the job queue's schema (``core.store.procrastinate_tables``)."""


def _config(conn: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", SCRIPT_LOCATION)
    if conn is not None:
        cfg.attributes["connection"] = conn
    return cfg


@cache
def head_revision() -> str:
    """The newest revision the migrations in this package know."""
    head = ScriptDirectory.from_config(_config()).get_current_head()
    assert head is not None, "the package ships no migrations"
    return head


def current_revision(conn: Connection) -> str | None:
    """The revision the database is at, or None for a database Traceloupe never touched."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine) -> UpgradeResult:
    """Bring the database to the newest schema (``traceloupe db upgrade``)."""
    with write_transaction(engine, rebuilds_tables=True) as conn:
        backend = backend_of(conn)
        backend.lock(conn, _MIGRATION_LOCK)
        before = current_revision(conn)
        outlined = 0
        if before != head_revision():
            command.upgrade(_config(conn), "head")
            if before is not None and before < _OUTLINES_REVISION:  # four-digit revision ids compare as text
                outlined = backfill_outlines(conn)
        queue_schema = False
        if backend.serves_job_queue:
            from core.store.procrastinate_tables import ensure_queue_schema  # the queue's schema, not the store's

            queue_schema = ensure_queue_schema(conn)
    return UpgradeResult(before=before, after=head_revision(), outlined=outlined, queue_schema=queue_schema)


def ensure_schema(engine: Engine) -> None:
    """Upgrade an empty database on first use; refuse one that holds an older schema.

    An older schema is not upgraded silently: the operator runs ``traceloupe db upgrade``
    on purpose (after a backup), as with any migration of data they care about.
    """
    with read_transaction(engine) as conn:
        revision = current_revision(conn)
    if revision == head_revision():
        return
    if revision is None:
        upgrade(engine)
        return
    raise SchemaOutOfDate(
        f"the database schema is at revision {revision}, this Traceloupe needs {head_revision()}: "
        "run `traceloupe db upgrade`"
    )
