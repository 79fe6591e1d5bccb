"""A PostgreSQL store keeps a fixed set of connections: a burst of threads reuses them, it does not open new ones."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

from core.store import Store
from core.store.engine import DEFAULT_SETTINGS, read_transaction
from tests.store.store_pg import pg_database


@pytest.mark.postgres
def test_bursts_of_readers_reuse_the_same_server_processes() -> None:
    with pg_database() as url, Store.open(url) as store:
        size = DEFAULT_SETTINGS.pool_size
        together = threading.Barrier(size)

        def backend_pid(_: int) -> int:
            with read_transaction(store.engine) as conn:
                pid = int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
                together.wait(timeout=30)  # the whole pool checked out at once, then each burst waits for it
                return pid

        rounds = []
        for _ in range(3):
            with ThreadPoolExecutor(40) as pool:
                rounds.append(set(pool.map(backend_pid, range(3 * size))))
        assert len(rounds[0]) == size  # the first burst opened the whole pool
        assert rounds[1] | rounds[2] <= rounds[0]  # the later bursts started no new server process
