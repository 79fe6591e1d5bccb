"""``traceloupe db``: schema upgrade and status; also the ``--db`` option every store command shares."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.store import Store

DB_HELP = "database URL or SQLite file (default: $TRACELOUPE_DATABASE_URL, else ./traceloupe.db)"


def add_db_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--db URL`` option, the same on every command that opens the store."""
    parser.add_argument("--db", metavar="URL", default=None, help=DB_HELP)


def missing_sqlite_file(db: str | None) -> Path | None:
    """The SQLite file ``--db`` names when it does not exist yet; None for an existing file or a server URL."""
    from core.store import StoreError
    from core.store.backend import backend_for_url
    from core.store.engine import resolve_url

    try:
        url = resolve_url(db)
        path = backend_for_url(url).database_file(url)
    except StoreError:
        return None  # Store.open says why, in its own words
    return None if path is None or path.exists() else path


def run_with_store(
    ns: argparse.Namespace,
    body: Callable[[Store], int],
    *,
    migrate: bool = True,
    create: bool = False,
    create_with: str | None = None,
) -> int:
    """Open the store named by ``ns.db``, run ``body``; print any failure as one line, never a traceback.

    A SQLite file that does not exist is refused unless ``create`` (a mistyped ``--db`` would
    otherwise give an empty database and an empty answer); when it is created, a line says so.
    ``create_with``: the command line that would create it (a command that takes ``--create``).

    Exit codes: what ``body`` returns, 1 for bad input or an unknown name, 2 when the
    database cannot be used, 130 on Ctrl-C.
    """
    from core.errors import MisuseError
    from core.store import Store, StoreError
    from core.store.errors import DATABASE_ERRORS
    from web.cli.terminal import echo

    missing = missing_sqlite_file(ns.db)
    if missing is not None and not create:
        others = "`traceloupe import` or `traceloupe demo --db`"
        how = f"{others} creates one"
        if create_with:
            how = f"`{create_with}` creates an empty one, {others} one with data"
        echo(f"traceloupe: no database at {missing} (is --db mistyped?); {how}", file=sys.stderr)
        return 2
    if missing is not None and not getattr(ns, "quiet", False):  # a report of what was done, like import's
        echo(f"creating a new database at {missing}", file=sys.stderr)
    try:
        with Store.open(ns.db, migrate=migrate) as store:
            return body(store)
    except MisuseError as exc:
        echo(f"traceloupe: {exc}", file=sys.stderr)
        return 1
    except StoreError as exc:
        echo(f"traceloupe: {exc}", file=sys.stderr)
        return 2
    except DATABASE_ERRORS as exc:
        reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or ["(no detail)"])[0]
        echo(f"traceloupe: database error: {reason}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (``traceloupe export | head``): stop quietly, as cat does.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("traceloupe: interrupted; the file being imported was not stored", file=sys.stderr)
        return 130


def register(parser: argparse.ArgumentParser) -> None:
    """``db upgrade`` and ``db status``."""
    parser.add_argument(
        "action",
        choices=("upgrade", "status"),
        help="upgrade: apply the migrations (and, on PostgreSQL, the job queue's schema); "
        "status: revision, row counts and (SQLite) PRAGMA quick_check",
    )
    add_db_argument(parser)


def run(ns: argparse.Namespace) -> int:
    """Upgrade the schema, or print its revision and row counts."""
    from core.store import head_revision, upgrade

    def do_upgrade(store: Store) -> int:
        result = upgrade(store.engine)
        if result.before == result.after:
            print(f"schema already at {result.after}")
        else:
            print(f"schema upgraded from {result.before or 'empty'} to {result.after}")
        if result.queue_schema:
            print("job queue schema (Procrastinate) applied")
        if result.outlined:
            print(f"outlined {result.outlined} messages stored before the upgrade (long traces now open by page)")
        return 0

    def do_status(store: Store) -> int:
        from core.store.schema import current_revision

        with store.engine.connect() as conn:
            revision = current_revision(conn)
        print(f"database: {store.engine.url.render_as_string(hide_password=True)}")
        print(f"schema: {revision or 'empty'} (this Traceloupe: {head_revision()})")
        if revision == head_revision():
            for table, count in store.counts().items():
                print(f"{table}: {count}")
        with store.engine.connect() as conn:
            check = store.db.integrity_check(conn)
        if check is None:
            return 0
        print(f"quick_check: {'; '.join(check)}")
        return 0 if check == ["ok"] else 1

    upgrading = ns.action == "upgrade"
    return run_with_store(ns, do_upgrade if upgrading else do_status, migrate=False, create=upgrading)
