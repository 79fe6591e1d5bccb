"""``traceloupe diff FILE --left P --right Q``: a readable structural diff of two providers' request bodies.

One line per difference at a JSON pointer: ``+`` only the right body has it, ``-`` only the left,
``~`` both, with different values. Exit 0 when the bodies are equal, 1 when they differ, 2 on an
error (one line on stderr: a bad file, an unknown name, a damaged record).
"""

from __future__ import annotations

import argparse
import json
import sys

from web.cli.payload import add_request_arguments

EXIT_SAME, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2


def register(parser: argparse.ArgumentParser) -> None:
    add_request_arguments(parser)
    parser.add_argument("--left", required=True, metavar="P", help="dialect of the left body")
    parser.add_argument("--right", required=True, metavar="Q", help="dialect of the right body")
    parser.add_argument("--width", type=int, default=100, metavar="N", help="shorten values to N characters (0: never)")
    parser.add_argument("--json", action="store_true", help="print the changes as a JSON array")


def run(ns: argparse.Namespace) -> int:
    from core.errors import MisuseError
    from core.providers.diffing import format_change, structural_diff
    from web.cli.payload import build_request

    try:
        left = build_request(ns, ns.left)
        right = build_request(ns, ns.right)
    except MisuseError as exc:  # damaged records (ContractError) included
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    changes = structural_diff(left.body, right.body)
    if ns.json:
        print(json.dumps([c.to_json() for c in changes], indent=2, ensure_ascii=False))
    else:
        print(f"--- {ns.left}\n+++ {ns.right}")
        for change in changes:
            print(format_change(change, ns.width))
        print(f"{len(changes)} difference{'s' * (len(changes) != 1)}", file=sys.stderr)
    return EXIT_DIFFERENT if changes else EXIT_SAME
