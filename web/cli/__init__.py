"""The ``traceloupe`` command line.

Each subcommand lives in its own module with ``register(subparsers)``; the module
is imported only when its command runs, so ``traceloupe --help`` stays fast
(no Litestar, no SQLAlchemy at start-up).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

# name -> (module, one-line help). Adding a command is one module and one line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "check": ("web.cli.check", "report records that lost their type on the JSON round trip (TFROB-299)"),
    "repair": ("web.cli.repair", "write a repaired JSONL, inferring each damaged record's class"),
    "payload": ("web.cli.payload", "print the request body a provider would receive for a conversation"),
    "diff": ("web.cli.diff", "print a structural diff of two providers' request bodies"),
    "stub-provider": ("web.cli.stub_provider", "serve a scriptable loopback stand-in for the LLM providers"),
    "serve": ("web.cli.serve", "serve the dashboard on 127.0.0.1 (a non-loopback host needs --allow-remote)"),
    "demo": ("web.cli.demo", "build a demo database, start the stub provider and serve the dashboard over them"),
    "import": ("web.cli.importer", "store .json/.jsonl files in the database, each all-or-nothing"),
    "export": ("web.cli.export", "write stored messages as JSONL, exactly as imported"),
    "conversations": ("web.cli.conversations", "list stored conversations with their figures"),
    "runs": ("web.cli.runs", "list recorded replays"),
    "replay": ("web.cli.replay", "re-run a stored conversation against a provider and record the run"),
    "suite": ("web.cli.suite", "save a set of conversations as a suite, replay it in bulk and report regressions"),
    "models": ("web.cli.models", "list what the model table says about each provider's models (limits, capabilities)"),
    "rules": ("web.cli.rules", "list each provider's request-time rules: id, severity and source (preflight, fixes)"),
    "db": ("web.cli.db", "upgrade the database schema or show its status"),
    "keys": ("web.cli.keys", "make, list and revoke the API keys programs present (OTLP exporters: --scope ingest)"),
    "users": ("web.cli.users", "the accounts of a shared server: create, list, set-role, disable, reset-password"),
    "audit": ("web.cli.audit", "show who did what on a shared server: logins, imports, replays, account changes"),
    "worker": ("web.cli.worker", "run queued replay jobs from a PostgreSQL store (start one per machine or more)"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="traceloupe",
        description="Review, replay and diff LLM agent traces.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (_, help_text) in COMMANDS.items():
        sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in COMMANDS:
        parser = build_parser()
        if not args:
            parser.print_help()
            return 0
        parser.parse_args(args)  # prints help or "invalid choice" and exits
        return 2
    try:
        module = importlib.import_module(COMMANDS[args[0]][0])
        parser = argparse.ArgumentParser(prog=f"traceloupe {args[0]}", description=COMMANDS[args[0]][1])
        module.register(parser)
        try:
            ns = parser.parse_args(args[1:])
        except SystemExit as exited:  # argparse printed the usage and its one line (a bad flag), or the help
            return exited.code if isinstance(exited.code, int) else 2
        code: int = module.run(ns)
    except KeyboardInterrupt:
        print(f"traceloupe {args[0]}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # a bug: one line that says so, never a traceback (unless asked for)
        return _internal_error(args[0], exc)
    return code


EXIT_INTERNAL_ERROR = 70  # EX_SOFTWARE in sysexits.h
EXIT_INTERRUPTED = 130
TRACEBACK_VARIABLE = "TRACELOUPE_TRACEBACK"


def _internal_error(command: str, exc: Exception) -> int:
    from web.cli.terminal import echo

    if os.environ.get(TRACEBACK_VARIABLE):
        traceback.print_exception(exc)
    detail = " ".join(str(exc).split())[:300]
    echo(
        f"traceloupe {command}: internal error ({type(exc).__name__}{': ' if detail else ''}{detail}); "
        f"this is a bug in Traceloupe: {TRACEBACK_VARIABLE}=1 shows where",
        file=sys.stderr,
    )
    return EXIT_INTERNAL_ERROR
