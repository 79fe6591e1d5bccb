"""``traceloupe payload FILE --provider P``: the request body a provider would receive, as JSON.

Default: the whole conversation as history. ``--upto MSG_ID`` gives the request that produced that
message (everything strictly before it in the expanded history). ``--phases`` prints every phase's
output, the warnings and the provenance map instead of the body alone; ``--json`` prints the body with
its warnings and the preflight verdict; ``--report`` prints the capability report (what the provider and
model cannot carry, and the preflight findings), as text or with ``--json`` as JSON.

The request context FILE stores for the request's turn (a ``traceloupe_request`` line, read and checked as
an import reads it: ``core/FORMAT.md``) gives the tools, tool choice, model and parameters the agent sent;
``--tools FILE`` (a tool list in any provider's shape), ``--tool-choice`` and the other flags override it.

Every body is preflighted (SDK types and the provider's request-time rules for the model): findings go
to stderr, one line each. Exit 4 when any finding is an error (the provider would answer 400). Errors
are one line on stderr: exit 1 for a damaged record (the seed's contract error), 2 for a bad file or an
unknown name.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from web.cli import flags
from web.cli.terminal import echo, printable

if TYPE_CHECKING:
    from core.errors import MisuseError
    from core.messages.union import Message
    from core.preflight import CapabilityReport
    from core.providers import RequestOptions, RequestResult
    from core.request_context import StoredRequest

EXIT_OK, EXIT_DAMAGED, EXIT_ERROR, EXIT_PREFLIGHT = 0, 1, 2, 4


def add_request_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments ``payload`` and ``diff`` share: the file, the conversation, the cut and the options."""
    parser.add_argument("file", metavar="FILE", help=".json or .jsonl file of stored messages (- for stdin)")
    parser.add_argument("--conversation", metavar="ID", help="conversation id (needed when FILE holds several)")
    parser.add_argument("--upto", metavar="MSG_ID", help="build the request that produced this message")
    parser.add_argument(
        "--model", help="model name (default: the provider's); it chooses the profile of rules the body follows"
    )
    flags.add_generation_arguments(parser)
    parser.add_argument(
        "--attachments-root",
        type=Path,
        metavar="DIR",
        help="read Path attachments from under DIR only (default: none are read; they degrade to text)",
    )
    flags.add_tool_arguments(parser)


def register(parser: argparse.ArgumentParser) -> None:
    add_request_arguments(parser)
    parser.add_argument("--provider", required=True, metavar="P", help="provider name, e.g. openai, anthropic")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--phases", action="store_true", help="print every phase's output, warnings, provenance")
    shown.add_argument("--report", action="store_true", help="print the capability report for --provider and --model")
    parser.add_argument("--json", action="store_true", help="JSON output: the body with warnings and preflight")


def run(ns: argparse.Namespace) -> int:
    from core.errors import ContractError, MisuseError

    try:
        result = build_request(ns, ns.provider)
    except MisuseError as exc:
        say_request_error(exc)
        return EXIT_DAMAGED if isinstance(exc, ContractError) else EXIT_ERROR
    from core.preflight import capability_report

    report = capability_report(result)
    for warning in result.warnings:
        echo(f"warning: {warning}", file=sys.stderr)
    for finding in report.verdict.findings:
        echo(f"preflight {finding}", file=sys.stderr)
    if ns.report and not ns.json:
        print(report_text(report))
    else:
        print(json.dumps(_output(ns, result, report), indent=2, ensure_ascii=False))
    return EXIT_OK if report.verdict.accepted else EXIT_PREFLIGHT


def _output(ns: argparse.Namespace, result: RequestResult, report: CapabilityReport) -> object:
    """What stdout holds: the body alone unless --report, --phases or --json asks for more."""
    if ns.report:
        return report.to_json()
    if ns.phases:
        return {"phases": result.phases, "warnings": result.warnings_json(), "provenance": result.provenance}
    if ns.json:
        return {"body": result.body, "warnings": result.warnings_json(), "preflight": report.verdict.to_json()}
    return result.body


def report_text(report: CapabilityReport) -> str:
    """The capability report as lines for a terminal (every value from the trace escaped)."""
    lines = [f"{report.provider} {report.model} (profile {report.profile})"]
    if report.cannot_carry:
        lines.append("cannot carry:")
        for entry in report.cannot_carry:
            ids = ", ".join(entry.msg_ids)
            lines.append(f"  {entry.kind} x{len(entry.msg_ids)} ({ids}): {entry.what_happens}")
    else:
        lines.append("cannot carry: nothing (every message goes as it was stored)")
    if report.fixes:
        lines.append(f"rules the builder fixed: {len(report.fixes)}")
        lines.extend(f"  {fix}" for fix in report.fixes)
    verdict = report.verdict
    if verdict.accepted:
        lines.append(f"preflight: accepted by the SDK types and provider rules for {report.model}")
    else:
        lines.append(f"preflight: {len(verdict.errors)} error(s); the provider would answer 400")
    lines.extend(f"  {finding}" for finding in verdict.findings)
    return "\n".join(printable(line) for line in lines)


def build_request(ns: argparse.Namespace, provider: str) -> RequestResult:
    """Read the file, pick the conversation and build one provider's request (raises MisuseError subclasses)."""
    from core.providers import ChatLLM, provider_named

    dialect = provider_named(provider)  # an unknown provider fails before the file is read
    trace = load_conversation(ns.file, ns.conversation)
    options = request_options(ns, trace.context(ns.upto), provider)
    return ChatLLM(dialect, options).construct_request_params(trace.messages, upto=ns.upto)


def say_request_error(exc: MisuseError) -> None:
    """The one line on stderr for a request that cannot be built; a damaged record's adds what it lost."""
    from core.errors import ContractError

    echo(f"error: {exc}; {exc.explanation}" if isinstance(exc, ContractError) else f"error: {exc}", file=sys.stderr)


def request_options(
    ns: argparse.Namespace, stored: StoredRequest | None = None, provider: str | None = None
) -> RequestOptions:
    """The flags' options, with what the stored context holds where no flag sets it (``--tools``, ``--tool-choice``
    and the others override it). MisuseError for a tool choice naming a tool the request does not define."""
    from core.errors import MisuseError
    from core.providers import RequestOptions
    from core.request_context import RequestFieldError, check_tool_choice, to_options

    params = flags.generation_params(ns)
    options = RequestOptions(
        model=ns.model,
        attachments_root=ns.attachments_root,
        tools=ns.tools or (),
        tools_source="given" if ns.tools is not None else "none",
        tool_choice=ns.tool_choice,
        **params.by_name(),
    )
    if stored is not None:
        options = to_options(stored, options, provider)
    if provider is not None and params.effort is not None:
        check_effort(provider, options.model, params.effort)
    try:
        check_tool_choice(options.tools, options.tool_choice)
    except RequestFieldError as exc:
        given = "--tool-choice" if ns.tool_choice is not None else "the stored tool choice"
        raise MisuseError(f"{given} {exc.reason}; give that tool with --tools") from None
    return options


def check_effort(provider: str, model: str | None, effort: str) -> None:
    """MisuseError (exit 2) for an ``--effort`` the model table says the model does not take."""
    from core.errors import MisuseError
    from core.models.reasoning import effort_refusal
    from core.providers import provider_named

    refusal = effort_refusal(provider_named(provider), model, effort)
    if refusal is not None:
        raise MisuseError(refusal)


@dataclass(frozen=True, slots=True)
class TraceFile:
    """One conversation of FILE, in order, and the request contexts the file stores for it."""

    messages: list[Message]
    contexts: list[StoredRequest]

    def context(self, upto: str | None) -> StoredRequest | None:
        """The context of the turn the request is built in (its own, else the conversation's), None if none."""
        from core.request_context.calls import applying, request_turn

        if not self.contexts:
            return None
        return applying(self.contexts, self.messages[0].conversation_id, request_turn(self.messages, upto))


def load_conversation(path: str, conversation_id: str | None) -> TraceFile:
    """The messages of one conversation in FILE, ordered by create_ts then file position (FORMAT.md), and its
    request contexts, checked as an import checks them (``traceloupe_request`` lines, ``core/FORMAT.md``).

    An export's lines of other records (runs, suites) are skipped, with one note on stderr."""
    from core.errors import UnknownNameError
    from core.reader import StoreLine, read_path
    from core.store.request_contexts import is_request_line, read_request_lines
    from web.cli.where import skipped_note

    groups: dict[str, list[tuple[int, int, Message]]] = {}
    lines: list[StoreLine] = []
    roles: dict[tuple[str, str], str] = {}
    for position, record in enumerate(read_path(path, store_lines=lines)):
        msg = record.message
        groups.setdefault(msg.conversation_id, []).append((msg.create_ts, position, msg))
        roles[(msg.conversation_id, msg.msg_id)] = msg.role
    contexts = read_request_lines(lines, roles)
    others = [line for line in lines if not is_request_line(line)]
    if others:
        echo(skipped_note(path, others), file=sys.stderr)
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
    messages = [msg for _, _, msg in sorted(chosen, key=lambda item: item[:2])]
    return TraceFile(messages, [c for c in contexts if c.conversation_id == conversation_id])
