"""``traceloupe keys create|list|revoke``: the API keys programs present (OTLP exporters: scope ``ingest``).

``create`` prints the key once, on standard output alone (a script captures it); the store keeps its hash.
``list`` never shows a key, only the first characters that tell keys apart.
"""

from __future__ import annotations

import argparse
import dataclasses
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from core.store import Store
    from core.store.api_keys import KeyRecord


def _expiry(text: str) -> datetime:
    """``2027-01-31`` (00:00 UTC that day) or an ISO time with its zone (a time without one is read as UTC)."""
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        when = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD) or an ISO time: {text[:40]!r}") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def register(parser: argparse.ArgumentParser) -> None:
    """``create --scope S [--name N] [--user U] [--expires DATE]``, ``list [--json]``, ``revoke ID``."""
    from core.store.api_keys import SCOPES

    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="make a key and print it, once")
    create.add_argument("--scope", choices=SCOPES, required=True, help="what the key may do")
    create.add_argument("--name", default="", help="a name to tell the key apart in a listing")
    create.add_argument("--user", default=None, help="the account the key acts for")
    create.add_argument("--expires", type=_expiry, default=None, help="DATE (00:00 UTC) or ISO time it stops working")
    listing = sub.add_parser("list", help="every key: id, name, scope, first characters, times (never the key)")
    listing.add_argument("--json", action="store_true", help="print a JSON array")
    revoke = sub.add_parser("revoke", help="stop a key from working (it stays listed)")
    revoke.add_argument("id", type=int, metavar="ID")
    for each in (create, listing, revoke):
        add_db_argument(each)


def _when(ms: int | None) -> str:
    return "" if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M")


def _fields(record: KeyRecord) -> dict[str, object]:
    """Every field of the record (what anyone may see of a key), ``user_name`` as ``user``."""
    return {"user" if name == "user_name" else name: value for name, value in dataclasses.asdict(record).items()}


def run(ns: argparse.Namespace) -> int:
    """Do the action; exit 0, or 1 for an unknown key id or bad input."""
    import sys

    from core.accounts import Accounts
    from core.jsonio import dumps
    from web.cli.terminal import cell, echo
    from web.cli.users import CLIENT

    def body(store: Store) -> int:
        keys = store.api_keys
        if ns.action == "create":
            if ns.user is not None and Accounts(store).account(ns.user) is None:
                echo(f"traceloupe keys: no account {ns.user!r} (traceloupe users list)", file=sys.stderr)
                return 1
            record, plaintext = keys.create(ns.scope, ns.name, user=ns.user, expires=ns.expires, client=CLIENT)
            echo(f"key {record.id} ({record.scope}) made: it is shown once, store it now", file=sys.stderr)
            print(plaintext)
            return 0
        if ns.action == "revoke":
            revoked = keys.revoke(ns.id, client=CLIENT)
            print(f"key {ns.id} revoked" if revoked else f"key {ns.id} was already revoked")
            return 0
        records = keys.list()
        if ns.json:
            sys.stdout.buffer.write(dumps([_fields(r) for r in records]) + b"\n")
            return 0
        print(f"{'id':>5} {'scope':<7} {'key':<14} {'name':<24} {'user':<16} {'created':<16} {'last used':<16} state")
        for r in records:
            state = "revoked " + _when(r.revoked_at) if r.revoked_at is not None else ""
            if not state and r.expires_at is not None:
                state = "expires " + _when(r.expires_at)
            print(
                f"{r.id:>5} {r.scope:<7} {r.prefix + '…':<14} {cell(r.name, 24):<24} {cell(r.user_name or '', 16):<16} "
                f"{_when(r.created_at):<16} {_when(r.last_used_at):<16} {state}"
            )
        return 0

    return run_with_store(ns, body)
