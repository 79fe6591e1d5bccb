"""The store fixtures of ``tests/store`` (SQLite and PostgreSQL) for the ingest tests."""

from tests.store.conftest import db_url, pg_session_url, store

__all__ = ["db_url", "pg_session_url", "store"]
