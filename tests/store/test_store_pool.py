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
        together = threading.Barrier(8)

        def backend_pid(_: int) -> int:
            with read_transaction(store.engine) as conn:
                pid = int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
                together.wait(timeout=30)  # eight at once, then each waits for a pooled connection
                return pid

        rounds = []
        for _ in range(3):
            with ThreadPoolExecutor(40) as pool:
                rounds.append(set(pool.map(backend_pid, range(40))))
        assert rounds[2] <= rounds[0] | rounds[1]  # the last burst started no new server process
        assert len(set().union(*rounds)) <= DEFAULT_SETTINGS.pool_size
