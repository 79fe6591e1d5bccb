"""``traceloupe export``: every stored message as JSONL, exactly as imported, ready to import again."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from core.store import Store


def register(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--conversation`` and ``-o``."""
    add_db_argument(parser)
    parser.add_argument("--conversation", metavar="ID", default=None, help="only this conversation")
    parser.add_argument("-o", "--output", metavar="FILE", default=None, help="write here instead of stdout")


def run(ns: argparse.Namespace) -> int:
    """Write the JSONL; conversations one after another, each in order."""
    from core.store.jsonio import dumps

    def body(store: Store) -> int:
        bodies = store.export_bodies(ns.conversation)
        out = open(ns.output, "wb") if ns.output else sys.stdout.buffer  # noqa: SIM115, PTH123 - closed below
        try:
            for item in bodies:
                out.write(dumps(item) + b"\n")
            out.flush()
        finally:
            if ns.output:
                out.close()
        return 0

    return run_with_store(ns, body)
