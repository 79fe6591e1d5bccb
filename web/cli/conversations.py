"""``traceloupe conversations``: the conversation list with its figures, as a table or as JSON."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, BinaryIO

from web.cli import flags
from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from core.store import Store

TITLE_CHARS = 60


def register(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--json`` and the list's filters."""
    from core.store import SORTS

    add_db_argument(parser)
    parser.add_argument("--json", action="store_true", help="print a JSON array (for scripts)")
    parser.add_argument("--search", metavar="TEXT", default=None, help="only conversations containing this text")
    parser.add_argument("--kind", metavar="KIND", default=None, help="only those holding this kind (user:image, tool)")
    parser.add_argument("--damaged", action="store_true", default=None, help="only those with damaged records")
    parser.add_argument("--with-runs", action="store_true", default=None, help="only those with runs")
    parser.add_argument("--sort", choices=tuple(SORTS), default="recent")
    parser.add_argument("--limit", type=flags.LIMIT, default=None, help="at most this many (default: all)")


def run(ns: argparse.Namespace) -> int:
    """Print the matching conversations."""
    import itertools

    from core.store import ConversationQuery
    from web.cli.terminal import cell, echo, timestamp
    from web.list_query import KIND_FILTERS

    if ns.kind is not None and ns.kind not in KIND_FILTERS:  # the dashboard's 400 says the same
        echo(
            f"traceloupe conversations: unknown kind {ns.kind!r}; expected one of: {', '.join(KIND_FILTERS)}",
            file=sys.stderr,
        )
        return 2

    def body(store: Store) -> int:
        q = ConversationQuery(
            search=ns.search, kind=ns.kind, has_damaged=ns.damaged, has_runs=ns.with_runs, sort=ns.sort, limit=500
        )
        # Written as read, page by page: ``| head`` answers at once and memory holds one page, whatever the store.
        items = itertools.islice(store.iter_conversations(q), ns.limit)
        if ns.json:
            write_json_array(sys.stdout.buffer, (dataclasses.asdict(c) for c in items))
            return 0
        print(
            f"{'conversation':<36} {'turns':>5} {'records':>7} {'damaged':>7} {'runs':>4}  {'last activity':<16}  title"
        )
        for c in items:
            print(
                f"{cell(c.conversation_id, 36)} {c.turns:>5} {c.records:>7} {c.damaged:>7} {c.runs:>4}  "
                f"{timestamp(c.last_activity):<16}  {cell(c.title, TITLE_CHARS).rstrip()}"
            )
        return 0

    return run_with_store(ns, body)


def write_json_array(out: BinaryIO, items: Iterable[dict[str, Any]]) -> None:
    """``items`` as an indented JSON array, each written as soon as it comes."""
    import orjson

    separator = b"[\n"
    for item in items:
        out.write(
            separator + b"\n".join(b"  " + line for line in orjson.dumps(item, option=orjson.OPT_INDENT_2).split(b"\n"))
        )
        separator = b",\n"
    out.write(b"[]\n" if separator == b"[\n" else b"\n]\n")
