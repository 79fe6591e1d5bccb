"""``traceloupe payload FILE --provider P``: the request body a provider would receive, as JSON.

Default: the whole conversation as history. ``--upto MSG_ID`` gives the request that produced that
message (everything strictly before it in the expanded history). ``--phases`` prints every phase's
output, the warnings and the provenance map instead of the body alone. Errors are one line on
stderr: exit 1 for a damaged record (the seed's contract error), 2 for a bad file or an unknown name.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.messages.union import Message
    from core.providers import RequestOptions, RequestResult

EXIT_OK, EXIT_DAMAGED, EXIT_ERROR = 0, 1, 2


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments ``payload`` and ``diff`` share: the file, the conversation, the cut and the options."""
    parser.add_argument("file", metavar="FILE", help=".json or .jsonl file of stored messages (- for stdin)")
    parser.add_argument("--conversation", metavar="ID", help="conversation id (needed when FILE holds several)")
    parser.add_argument("--upto", metavar="MSG_ID", help="build the request that produced this message")
    parser.add_argument(
        "--model", help="model name (default: the dialect's); it chooses the profile of rules the body follows"
    )
    parser.add_argument("--max-tokens", type=int, metavar="N", help="output token limit")
    parser.add_argument("--thinking", choices=("on", "off"), help="switch provider reasoning on or off")
    parser.add_argument(
        "--attachments-root",
        type=Path,
        metavar="DIR",
        help="read Path attachments from under DIR only (default: none are read; they degrade to text)",
    )


def register(parser: argparse.ArgumentParser) -> None:
    add_request_arguments(parser)
    parser.add_argument("--provider", required=True, metavar="P", help="dialect name, e.g. openai, anthropic")
    parser.add_argument("--phases", action="store_true", help="print every phase's output, warnings, provenance")


def run(ns: argparse.Namespace) -> int:
    from core.errors import ContractError, MisuseError

    try:
        result = build_request(ns, ns.provider)
    except ContractError as exc:
        print(f"error: {exc}; {exc.explanation}", file=sys.stderr)
        return EXIT_DAMAGED
    except MisuseError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if ns.phases:
        out = {"phases": result.phases, "warnings": result.warnings_json(), "provenance": result.provenance}
    else:
        out = result.body
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return EXIT_OK


def build_request(ns: argparse.Namespace, provider: str) -> RequestResult:
    """Read the file, pick the conversation and build one provider's request (raises MisuseError subclasses)."""
    from core.providers import ChatLLM, get_dialect

    dialect = get_dialect(provider)  # an unknown provider fails before the file is read
    messages = load_conversation(ns.file, ns.conversation)
    return ChatLLM(dialect, request_options(ns)).construct_request_params(messages, upto=ns.upto)


def request_options(ns: argparse.Namespace) -> RequestOptions:
    from core.providers import RequestOptions

    thinking = None if ns.thinking is None else ns.thinking == "on"
    return RequestOptions(
        model=ns.model, max_tokens=ns.max_tokens, thinking=thinking, attachments_root=ns.attachments_root
    )


def load_conversation(path: str, conversation_id: str | None) -> list[Message]:
    """The messages of one conversation in FILE, ordered by create_ts then file position (FORMAT.md)."""
    from core.errors import UnknownNameError
    from core.reader import read_path

    groups: dict[str, list[tuple[int, int, Message]]] = {}
    for position, record in enumerate(read_path(path)):
        msg = record.message
        groups.setdefault(msg.conversation_id, []).append((msg.create_ts, position, msg))
    if conversation_id is None:
        if len(groups) > 1:
            names = ", ".join(repr(name) for name in sorted(groups))
            raise UnknownNameError(
                f"{path} holds {len(groups)} conversations ({names}); choose one with --conversation"
            )
        if not groups:
            raise UnknownNameError(f"{path} holds no messages")
        conversation_id = next(iter(groups))
    chosen = groups.get(conversation_id)
    if chosen is None:
        names = ", ".join(repr(name) for name in sorted(groups))
        raise UnknownNameError(f"no conversation {conversation_id!r} in {path}; it holds {names}")
    return [msg for _, _, msg in sorted(chosen, key=lambda item: item[:2])]
