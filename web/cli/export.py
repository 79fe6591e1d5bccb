"""``traceloupe export``: the whole stored state as JSONL, ready to import again.

Every message's JSON text as the import wrote it, conversation by conversation, then every other
record (request contexts, runs, step runs and their steps, suites, suite runs and their items) as one
``{"traceloupe_<kind>": ...}`` line each (``core.store.export_lines``; ``--no-runs`` keeps only the request
contexts, which are part of the trace).
A file written with ``-o`` is created readable by its owner only: traces hold whatever the agent saw.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any, BinaryIO

from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from core.store import Store

PRIVATE_FILE_MODE = 0o600


def register(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--conversation``, ``--no-runs`` and ``-o``."""
    add_db_argument(parser)
    parser.add_argument("--conversation", metavar="ID", default=None, help="only this conversation")
    parser.add_argument(
        "--no-runs",
        action="store_true",
        help="messages and their request contexts only, without runs, step runs, suites and suite runs",
    )
    parser.add_argument("-o", "--output", metavar="FILE", default=None, help="write here (mode 0600) instead of stdout")


def run(ns: argparse.Namespace) -> int:
    """Write the JSONL: conversations one after another, each in order, then every other record."""
    from core.store.jsonio import dumps

    def body(store: Store) -> int:
        texts = store.export_texts(ns.conversation)
        others: Iterator[dict[str, Any]] = store.export_records(ns.conversation, trace_only=ns.no_runs)
        out: BinaryIO = _private_file(ns.output) if ns.output else sys.stdout.buffer
        try:
            for text in texts:
                out.write(text.encode() + b"\n")
            for line in others:
                out.write(dumps(line, sort_keys=True) + b"\n")  # the same bytes from either backend
            out.flush()
        finally:
            if ns.output:
                out.close()
        return 0

    return run_with_store(ns, body)


def _private_file(path: str) -> BinaryIO:
    """``path`` opened for writing, truncated, mode 0600 (also when it existed with a wider mode)."""
    from core.errors import InputError

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE_MODE)
    except OSError as exc:
        raise InputError(f"cannot write: {exc.strerror or exc}", source=path) from None
    os.fchmod(fd, PRIVATE_FILE_MODE)
    return os.fdopen(fd, "wb")
