"""A test-only shortcut for the first use of an empty SQLite store: instead of running every migration
again, copy in a database the real migrations built once in this process (``sqlite3`` backup API).

Only ``core.store.schema.ensure_schema``'s call on an empty file is served from the copy; an explicit
``upgrade`` (``traceloupe db upgrade``), PostgreSQL, and a file holding any table take the real path,
as does every test in a module that sets ``REAL_MIGRATIONS = True`` (the tests of the migrations).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Engine

from core.store import schema
from core.store.engine import make_engine
from core.store.schema import UpgradeResult, head_revision

Upgrade = Callable[[Engine], UpgradeResult]


class MigratedTemplate:
    """One SQLite file at the head revision, made by ``real_upgrade`` on first need."""

    def __init__(self, real_upgrade: Upgrade) -> None:
        self.real_upgrade = real_upgrade
        self._dir: Path | None = None
        self._path: Path | None = None
        self._lock = threading.Lock()  # two threads opening one new file: one copies, the other sees tables

    def path(self) -> Path:
        if self._path is None:
            self._dir = Path(tempfile.mkdtemp(prefix="traceloupe-template-"))
            path = self._dir / "head.db"
            engine = make_engine(f"sqlite:///{path}")
            try:
                self.real_upgrade(engine)
            finally:
                engine.dispose()
            self._path = path
        return self._path

    def upgrade(self, engine: Engine) -> UpgradeResult:
        """``schema.upgrade`` for ``ensure_schema``: the template's copy when ``engine`` is an empty SQLite file."""
        if engine.dialect.name != "sqlite":
            return self.real_upgrade(engine)
        with self._lock:
            return self._copy_into(engine)

    def _copy_into(self, engine: Engine) -> UpgradeResult:
        raw = engine.raw_connection()
        try:
            target = raw.driver_connection
            assert isinstance(target, sqlite3.Connection)
            if target.execute("SELECT count(*) FROM sqlite_master").fetchone() != (0,):
                return self.real_upgrade(engine)
            source = sqlite3.connect(self.path())
            try:
                source.backup(target)
            finally:
                source.close()
        finally:
            raw.close()
        return UpgradeResult(before=None, after=head_revision())

    def remove(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


REAL_UPGRADE: Upgrade = schema.upgrade
TEMPLATE = MigratedTemplate(REAL_UPGRADE)
