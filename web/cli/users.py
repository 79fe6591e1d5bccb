"""``traceloupe users``: the accounts of a shared server.

::

    users create NAME --role admin|reviewer|viewer [--create]
    users list [--json]
    users set-role NAME ROLE
    users disable NAME | users enable NAME
    users reset-password NAME

A password is asked twice on a terminal (never echoed), or read as one line from standard input
(``printf '%s\\n' "$PW" | traceloupe users create ...``); it is never an argument, so it stays out
of the shell's history and the process list. There is no default password and no default account.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from typing import TYPE_CHECKING

from web.cli.db import add_db_argument, run_with_store
from web.cli.terminal import echo, timestamp

if TYPE_CHECKING:
    from core.accounts import Accounts
    from core.store import Store
    from core.store.users import UserView

ROLES = ("admin", "reviewer", "viewer")


def register(parser: argparse.ArgumentParser) -> None:
    """The ``create``, ``list``, ``set-role``, ``disable``, ``enable`` and ``reset-password`` actions."""
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="add an account (the password is asked, or read from stdin)")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--role", choices=ROLES, required=True, help="what the account may do")
    create.add_argument(
        "--create", action="store_true", help="create the SQLite database when it does not exist (default: refuse)"
    )
    listing = actions.add_parser("list", help="list the accounts with their role")
    listing.add_argument("--json", action="store_true", help="print a JSON array (for scripts)")
    set_role = actions.add_parser("set-role", help="give an account another role (its sessions end)")
    set_role.add_argument("name", metavar="NAME")
    set_role.add_argument("role", choices=ROLES, metavar="ROLE")
    for action, text in (
        ("disable", "stop an account from logging in (its sessions end)"),
        ("enable", "let a disabled account log in again"),
        ("reset-password", "set a new password (asked, or read from stdin); every session of the account ends"),
    ):
        actions.add_parser(action, help=text).add_argument("name", metavar="NAME")
    for sub in actions.choices.values():
        add_db_argument(sub)


def read_password(prompt: str = "Password") -> str | None:
    """The new password: asked twice on a terminal, else the first line of standard input; None when they differ."""
    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass(f"{prompt}: ")
    if getpass.getpass(f"{prompt} (again): ") != first:
        return None
    return first


def run(ns: argparse.Namespace) -> int:
    """Do the action on the store's accounts."""
    from core.accounts import Accounts, Role

    def body(store: Store) -> int:
        accounts = Accounts(store)
        if ns.action == "list":
            return _list(accounts, json=ns.json)
        if ns.action == "set-role":
            _show(accounts.set_role(ns.name, Role(ns.role), client=CLIENT))
        elif ns.action in ("disable", "enable"):
            _show(accounts.set_disabled(ns.name, ns.action == "disable", client=CLIENT))
        else:
            if ns.action == "reset-password":
                accounts.users()  # nothing to ask when the database cannot be read
            password = read_password()
            if password is None:
                echo("traceloupe users: the two passwords differ; nothing was changed", file=sys.stderr)
                return 1
            if ns.action == "create":
                _show(accounts.create(ns.name, Role(ns.role), password, client=CLIENT))
            else:
                _show(accounts.reset_password(ns.name, password, client=CLIENT))
        return 0

    return run_with_store(ns, body, create=getattr(ns, "create", False))


CLIENT = "command line"
"""The audit log's client address for what was done here."""


def _show(user: UserView) -> None:
    state = " (disabled)" if user.disabled else ""
    echo(f"{user.name}: {user.role.value}{state}")


def _list(accounts: Accounts, *, json: bool) -> int:
    from core.jsonio import dumps

    found = accounts.users()
    if json:
        rows = [
            {"name": u.name, "role": u.role.value, "disabled": u.disabled, "created_at": u.created_at} for u in found
        ]
        sys.stdout.buffer.write(dumps(rows, indent=True) + b"\n")
        return 0
    print(f"{'name':<24} {'role':<10} {'state':<9} created")
    for u in found:
        echo(f"{u.name:<24} {u.role.value:<10} {'disabled' if u.disabled else 'active':<9} {timestamp(u.created_at)}")
    return 0
