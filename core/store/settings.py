"""Connection settings of a store, with their defaults (each backend reads the ones that concern it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """Connection settings with their defaults; the busy timeout bounds how long a writer waits for the lock."""

    busy_timeout_ms: int = 5_000
    write_wait_ms: int = 120_000
    """SQLite only: how long a writer keeps retrying for the lock past the busy timeout.

    Imports hold the lock for their whole write (a 100,000-message file: about ten
    seconds), longer than the busy timeout; a run being recorded meanwhile waits for it
    instead of failing with "database is locked". Retrying is safe: nothing was written.
    """
    slow_write_ms: int = 2_000
    """A write transaction that holds the lock longer is logged (``traceloupe.store``), to find lock holders."""
    statement_timeout_ms: int = 30_000
    """PostgreSQL only: a search or list query that runs longer is cancelled instead of holding a worker."""
    pool_size: int = 16
    """PostgreSQL only: connections a process keeps open; past them a thread waits for one to be returned.

    Not opened and closed on demand: under load that churned a new server process per request or so,
    a third of a core for PostgreSQL alone. Sixteen per process leave room for several processes and
    workers within PostgreSQL's default of 100."""


DEFAULT_SETTINGS = EngineSettings()
