"""``traceloupe audit``: who did what on a shared server, newest first.

``--since`` takes a date or a date and time (ISO 8601, local time unless it names a zone) or an age
(``30m``, ``12h``, ``7d``); ``--user`` keeps one account's events.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import datetime
from typing import TYPE_CHECKING

from web.cli import flags
from web.cli.db import add_db_argument, run_with_store
from web.cli.terminal import echo, timestamp

if TYPE_CHECKING:
    from core.store import Store

_AGE = re.compile(r"(\d{1,6})([mhd])")
_UNIT_MS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000}


def since_ms(text: str) -> int:
    """``--since``: an ISO date or date and time, or an age such as ``12h``, as milliseconds since the epoch."""
    age = _AGE.fullmatch(text.strip())
    if age is not None:
        return int(time.time() * 1000) - int(age[1]) * _UNIT_MS[age[2]]
    try:
        return int(datetime.fromisoformat(text.strip()).timestamp() * 1000)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--since {text!r}: give a date (2026-01-31), a date and time (2026-01-31T09:00) or an age (12h, 7d)"
        ) from None


def register(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--since``, ``--user``, ``--json``, ``--limit``."""
    add_db_argument(parser)
    parser.add_argument("--since", type=since_ms, metavar="WHEN", help="only events from then on (date or age: 7d)")
    parser.add_argument("--user", metavar="NAME", help="only what this account did")
    parser.add_argument("--json", action="store_true", help="print a JSON array (for scripts)")
    parser.add_argument("--limit", type=flags.LIMIT, default=1000, help="at most this many (default: %(default)s)")


def run(ns: argparse.Namespace) -> int:
    """Print the audit log."""
    from core.accounts import Accounts
    from core.jsonio import dumps

    def body(store: Store) -> int:
        events = Accounts(store).events(since=ns.since, actor=ns.user, limit=ns.limit)
        if ns.json:
            rows = [
                {"at": e.at, "actor": e.actor, "action": e.action, "target": e.target, "detail": e.detail,
                 "client": e.client}
                for e in events
            ]  # fmt: skip
            sys.stdout.buffer.write(dumps(rows, indent=True) + b"\n")
            return 0
        print(f"{'at':<16} {'user':<16} {'action':<20} {'target':<24} client")
        for e in events:
            detail = f"  {dumps(e.detail).decode()}" if e.detail else ""
            echo(
                f"{timestamp(e.at):<16} {e.actor or '-':<16} {e.action:<20} {e.target or '':<24} {e.client or ''}"
                f"{detail}"
            )
        return 0

    return run_with_store(ns, body)
