"""PostgreSQL session advisory locks held for the length of a block (the job queue's provider slots).

A session lock belongs to the connection that took it, so a lock is held on a pooled connection of
its own for the whole block: a killed process's connections close and the server frees its locks.
Those connections are not the store's pool, which serves short transactions.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, text

from core.store.engine import ping_when_idle

_TRY_LOCK = text("SELECT pg_try_advisory_lock(:space, :key)")
_UNLOCK = text("SELECT pg_advisory_unlock(:space, :key)")


class SessionLocks:
    """Advisory locks (two-key form) of the database ``engine`` reaches, on at most ``connections`` connections
    at once (and as many more past them)."""

    def __init__(self, engine: Engine, connections: int) -> None:
        self._engine = create_engine(engine.url, pool_size=connections, max_overflow=connections)
        ping_when_idle(self._engine)

    @contextmanager
    def hold_first_free(self, space: int, keys: Sequence[int], *, poll: float) -> Iterator[int]:
        """Hold the first of ``keys`` that is free for the block (waiting ``poll`` seconds between tries); its key."""
        with self._engine.connect() as conn:
            held = None
            while held is None:
                for key in keys:
                    taken = conn.execute(_TRY_LOCK, {"space": space, "key": key}).scalar()
                    conn.commit()  # no transaction stays open while the block runs
                    if taken:
                        held = key
                        break
                else:
                    time.sleep(poll)
            try:
                yield held
            finally:
                # Unlocked before the connection returns to the pool, where another caller would inherit it.
                conn.execute(_UNLOCK, {"space": space, "key": held})
                conn.commit()

    def close(self) -> None:
        """Close the connections (the locks they hold end with them)."""
        self._engine.dispose()
