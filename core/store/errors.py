"""Errors the store raises on purpose, in Traceloupe's error tree (see ``core.errors``)."""

from __future__ import annotations

from sqlalchemy.exc import InterfaceError, OperationalError, SQLAlchemyError

from core.errors import MisuseError, TraceloupeError


class StoreError(TraceloupeError):
    """The database cannot be used as asked: an unsupported URL, a schema that needs an upgrade."""


class SchemaOutOfDate(StoreError):
    """The database holds an older schema; ``traceloupe db upgrade`` brings it to the current one."""


class InvalidQueryError(MisuseError, ValueError):
    """A list or search request names a sort or a filter that is not on the allowlist, or a bad cursor."""


DATABASE_LOST: tuple[type[Exception], ...] = (StoreError, OperationalError, InterfaceError)
"""The database cannot answer (gone, locked, unreachable, or not as Traceloupe needs it)."""
DATABASE_ERRORS: tuple[type[Exception], ...] = (SQLAlchemyError,)
"""Any failure the database driver reports; callers above the store catch these, never the driver's own names."""
