"""``traceloupe check FILE...``: one line per record that lost its type; exit 1 if any, 2 on unreadable input."""

from __future__ import annotations

import argparse
import sys

EXIT_CLEAN, EXIT_DAMAGED, EXIT_UNREADABLE = 0, 1, 2


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "files", nargs="+", metavar="FILE", help=".json or .jsonl files of stored messages (- for stdin)"
    )


def run(ns: argparse.Namespace) -> int:
    from core.errors import InputError
    from core.integrity import find_damage
    from core.reader import StoreLine, read_path
    from web.cli.terminal import echo
    from web.cli.where import record_root, skipped_note, where

    status = EXIT_CLEAN
    messages = damaged = unreadable = 0
    for name in ns.files:
        others: list[StoreLine] = []
        try:
            for record in read_path(name, store_lines=others):
                messages += 1
                for damage in find_damage(record.message, record_root(record)):
                    damaged += 1
                    status = max(status, EXIT_DAMAGED)
                    echo(f"{where(record)}: {damage.explain()}")
            if others:
                echo(skipped_note(name, others), file=sys.stderr)
        except InputError as exc:
            echo(f"error: {exc}", file=sys.stderr)
            status = EXIT_UNREADABLE
            unreadable += 1
    if unreadable:
        return status  # the error lines say it all; a summary would bury them
    verdict = "clean" if damaged == 0 else f"{damaged} damaged record{'s' * (damaged != 1)}"
    echo(f"checked {messages} message{'s' * (messages != 1)} in {len(ns.files)} file(s): {verdict}", file=sys.stderr)
    return status
