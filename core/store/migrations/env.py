"""Alembic environment: migrations run on the connection the store hands over, inside its transaction.

There is no alembic.ini: ``core.store.schema`` builds the configuration in code, so the
migrations ship inside the package and ``traceloupe db upgrade`` needs no file on disk.
"""

from __future__ import annotations

from alembic import context

from core.store.tables import METADATA

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run migrations with `traceloupe db upgrade` (core.store.schema.upgrade), not the alembic CLI")

context.configure(connection=connection, target_metadata=METADATA, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
