"""Procrastinate's schema on the store's PostgreSQL database, applied once beside the store's migrations.

Procrastinate's ``schema.sql`` creates types and tables without ``IF NOT EXISTS``, so applying it
twice fails; it is applied only when its jobs table is absent, inside the migration's transaction
(which holds the migration advisory lock, so two upgrades at once apply it once).
"""

from __future__ import annotations

from sqlalchemy import Connection, text

QUEUE_TABLE = "procrastinate_jobs"


def queue_schema_present(conn: Connection) -> bool:
    """Whether Procrastinate's tables exist in the database ``conn`` reaches."""
    return conn.execute(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": QUEUE_TABLE}).scalar() is True


def ensure_queue_schema(conn: Connection) -> bool:
    """Apply Procrastinate's schema unless present; True when this call applied it. PostgreSQL only."""
    if queue_schema_present(conn):
        return False
    from procrastinate.schema import SchemaManager

    driver = conn.connection.driver_connection
    assert driver is not None
    # The raw psycopg connection, in the same transaction: the script is many statements, no parameters.
    driver.execute(SchemaManager.get_schema())
    return True
