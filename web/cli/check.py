"""``traceloupe check FILE...``: one line per record that lost its type, and per recorded call of a tool that is
not among the tools the file's request contexts store for its turn; exit 1 if any, 2 on unreadable input. A note
(not a failure) per imported record that keeps data the stored format has no place for, or is a placeholder."""

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
    from core.formats.records import import_marks
    from core.integrity import find_damage
    from core.reader import StoreLine, read_path
    from core.request_context.calls import RecordedCalls, TurnTracker, undefined_tool_calls
    from core.store.request_contexts import is_request_line, read_request_lines
    from web.cli.terminal import echo
    from web.cli.where import record_root, skipped_note, where

    status = EXIT_CLEAN
    messages = damaged = undefined = unreadable = imported = 0
    for name in ns.files:
        others: list[StoreLine] = []
        roles: dict[tuple[str, str], str] = {}
        turns = TurnTracker()
        calls: list[RecordedCalls] = []
        try:
            for record in read_path(name, store_lines=others):
                messages += 1
                message = record.message
                roles[(message.conversation_id, message.msg_id)] = message.role
                found = turns.calls(message, record_root(record), where(record))
                if found.calls:
                    calls.append(found)
                for mark in import_marks(record.raw, record_root(record)):
                    imported += 1
                    echo(f"{where(record)}: note: {mark}")
                for damage in find_damage(message, record_root(record)):
                    damaged += 1
                    status = max(status, EXIT_DAMAGED)
                    echo(f"{where(record)}: {damage.explain()}")
            # The contexts may follow the messages (an export writes them after): the calls are checked once read.
            for call in undefined_tool_calls(calls, read_request_lines(others, roles)):
                undefined += 1
                status = max(status, EXIT_DAMAGED)
                echo(f"{call.where}: {call.explain()}")
            skipped = [line for line in others if not is_request_line(line)]
            if skipped:
                echo(skipped_note(name, skipped), file=sys.stderr)
        except InputError as exc:
            echo(f"error: {exc}", file=sys.stderr)
            status = EXIT_UNREADABLE
            unreadable += 1
    if unreadable:
        return status  # the error lines say it all; a summary would bury them
    found_parts = [f"{damaged} damaged record{'s' * (damaged != 1)}"] if damaged else []
    if undefined:
        found_parts.append(f"{undefined} call{'s' * (undefined != 1)} of a tool not among the stored tools")
    verdict = "; ".join(found_parts) or "clean"
    if imported:
        verdict += f" ({imported} note{'s' * (imported != 1)} on imported data)"
    echo(f"checked {messages} message{'s' * (messages != 1)} in {len(ns.files)} file(s): {verdict}", file=sys.stderr)
    return status
