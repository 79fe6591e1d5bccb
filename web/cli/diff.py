"""``traceloupe diff FILE --left P --right Q``: two providers' request bodies compared, grouped by cause.

The same diff the dashboard's diff page and ``/api/conversations/{id}/diff`` show (``core.providers.request_diff``):
turns paired by the message they came from, each change with its likely cause. Plain text prints each cause's
group (title, explanation, the adapters' warnings, then one line per change at its JSON pointer: ``+`` only the
right body has it, ``-`` only the left, ``~`` both, with different values); ``--json`` prints what the API
answers. Exit 0 when the bodies are equal, 1 when they differ, 2 on an error (one line on stderr: a bad file,
an unknown name, a damaged record).
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from web.cli import flags
from web.cli.payload import add_request_arguments

if TYPE_CHECKING:
    from core.providers.request_diff import RequestDiff

EXIT_SAME, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2


def register(parser: argparse.ArgumentParser) -> None:
    add_request_arguments(parser)
    parser.add_argument("--left", required=True, metavar="P", help="provider of the left body")
    parser.add_argument("--right", required=True, metavar="Q", help="provider of the right body")
    parser.add_argument(
        "--width", type=flags.WIDTH, default=100, metavar="N", help="shorten values to N characters (0: never)"
    )
    parser.add_argument("--json", action="store_true", help="print the diff as the API gives it (JSON)")


def run(ns: argparse.Namespace) -> int:
    from core.errors import MisuseError
    from core.providers import ChatLLM, get_dialect
    from core.providers.request_diff import diff_requests
    from web.cli.payload import load_conversation, request_options, say_request_error
    from web.cli.terminal import echo

    try:
        dialects = get_dialect(ns.left), get_dialect(ns.right)  # an unknown provider fails before the file is read
        trace = load_conversation(ns.file, ns.conversation)
        messages, stored = trace.messages, trace.context(ns.upto)
        left, right = (
            ChatLLM(d, request_options(ns, stored, name)).construct_request_params(messages, upto=ns.upto)
            for d, name in zip(dialects, (ns.left, ns.right), strict=True)
        )
    except MisuseError as exc:
        say_request_error(exc)
        return EXIT_ERROR
    diff = diff_requests(left, right)
    if ns.json:
        out = {
            "conversation_id": messages[0].conversation_id,
            "left": ns.left,
            "right": ns.right,
            "upto": ns.upto,
            "changes": diff.changes_json(),
            "causes": diff.counts,
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for line in summary_lines(diff, ns.width):
            echo(line)
    return EXIT_DIFFERENT if diff.changes else EXIT_SAME


def summary_lines(diff: RequestDiff, width: int) -> list[str]:
    """The diff page's summary as text: a heading per cause, its explanation and warnings, then its changes."""
    from core.providers.diffing import format_change

    count = len(diff.changes)
    lines = [
        f"--- {diff.left.dialect}",
        f"+++ {diff.right.dialect}",
        f"{count} difference{'s' * (count != 1)}, by cause",
    ]
    for group in diff.groups:
        figures = [f"{len(group.changes)} change{'s' * (len(group.changes) != 1)}"]
        if group.warnings:
            figures.append(f"{len(group.warnings)} warning{'s' * (len(group.warnings) != 1)}")
        lines += ["", f"# {group.title}: {', '.join(figures)}", f"#   {group.explanation}"]
        lines += [f"! {side} {warning}" for side, warning in group.warnings]
        lines += [format_change(item.change, width) for item in group.changes]
    return lines
