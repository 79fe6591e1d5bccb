"""A stored message's outline: where each trace record sits in the stored JSON text, and what placing it needs.

Opening a conversation orders every trace record (by ``create_ts``, split around its user
message) and indexes every tool call and result, but shows one page of cards. Reading a
10,000-record trace's 16 MB of JSON to learn that costs more than the whole page. So the
import, which has both the text it writes and the parser's reading of it, records per
message a small tree that the dashboard reads instead (``web.timeline.stored``)::

    node    = [start, end, msg_id, role, create_ts, calls, results]              # no trace
            | [start, end, msg_id, role, create_ts, calls, results, records_at, children, tail]
    calls   = [tool call id, ...] | null        results = [tool result call_id, ...] | null

``start`` and ``end`` are the node's byte offsets in the stored text; ``records_at`` is where
its trace's ``records`` array opens (``[``), and ``children`` are that array's items, in order.
``tail`` is the node's text after that array (the keys stored after the trace), or null when
longer than TAIL_LIMIT: the message without its trace is its text up to the array, ``[]`` and
the tail, read without walking 16 MB of records to the end of a long trace (SQLite reaches an
offset by following the chain of pages before it).

``msg_id``, ``role`` and ``create_ts`` are the parser's values, or null when the stored JSON
does not hold them plainly (a missing id or stamp is generated per reading, a ``"7"`` stamp is
read as 7): the reader then types that record itself, as ``web.timeline.outline`` does.

Children are recorded only where the parser's reading is a user message with a trace whose
records are the JSON array's items one to one; anything else is a leaf.

Byte offsets hold for the text this module writes, which is what SQLite stores. PostgreSQL
keeps JSONB and renders its own text, so no outline is stored there.
"""

from __future__ import annotations

import io
import secrets
from collections.abc import Iterable
from typing import IO, Any

from core.jsonio import dumps
from core.messages.base import BaseMessage
from core.messages.union import Message
from core.messages.user import UserMessage

OutlineNode = list[Any]

TAIL_LIMIT = 4096
"""Bytes of a message's text after its trace's records that its outline keeps (null beyond)."""


def dump_with_outline(raw: Any, message: BaseMessage) -> tuple[bytes, OutlineNode | None]:
    """The stored JSON text of ``raw`` and the outline of ``message`` in it.

    The text is ``dumps(raw)`` byte for byte, except where ``dumps`` hands a piece to the standard
    library (an integer past 64 bits): each record is written on its own, so only that record's text
    is the standard library's; the value is the same either way.

    The outline is None only when the text cannot be assembled with known offsets (a safety net; the
    dashboard then reads that conversation's text whole).
    """
    out = io.BytesIO()  # one buffer the whole text is written into: no copy of a large text per level
    try:
        outline = _dump(out, raw, message)
    except (_NoOutline, RecursionError):
        return dumps(raw), None
    return out.getvalue(), outline


def dump_streamed(
    raw: dict[str, Any], message: UserMessage, records: Iterable[tuple[Any, Message]], out: IO[bytes]
) -> OutlineNode:
    """``dump_with_outline`` of a message read without its trace's records (``raw`` and ``message`` hold an empty
    trace), its records given one at a time (``core.reader.StreamedRecord``): the same text, written to ``out``
    (empty: the offsets are from its start) as it is made, and the same outline returned."""
    shell, quoted, at = _shell(raw, raw["intermediate_trace"])
    out.write(shell[:at])
    records_at = out.tell()
    out.write(b"[")
    children: list[OutlineNode] = []
    for item, record in records:
        if children:
            out.write(b",")
        children.append(_dump(out, item, record))
    tail = shell[at + len(quoted) :]
    if not children:  # an empty trace is a leaf, as ``dump_with_outline`` has it
        out.write(b"]" + tail)
        return [0, out.tell(), *_facts(raw, message)]
    out.write(b"]")
    out.write(tail)
    return [
        0,
        out.tell(),
        *_facts(raw, message),
        records_at,
        children,
        tail.decode() if len(tail) <= TAIL_LIMIT else None,
    ]


class _NoOutline(Exception):
    """The pieces cannot be assembled with known offsets: store the message without an outline."""


_PLACEHOLDER = "\ue000traceloupe:records\ue000"


def _dump(out: IO[bytes], raw: Any, message: BaseMessage) -> OutlineNode:
    """Write the text of ``raw`` at the end of ``out``; its outline, with offsets in ``out``."""
    start = out.tell()
    records = message.intermediate_trace.records if isinstance(message, UserMessage) else None
    trace = raw.get("intermediate_trace") if records and type(raw) is dict else None
    raw_records = trace.get("records") if type(trace) is dict else None
    if not records or type(trace) is not dict or type(raw_records) is not list or len(raw_records) != len(records):
        out.write(dumps(raw))
        return [start, out.tell(), *_facts(raw, message)]
    # The message without its records, a placeholder standing where the array goes: the text before
    # it and after it do not depend on the records, so every record's offset is known as it is written.
    shell, quoted, at = _shell(raw, trace)
    out.write(shell[:at])
    records_at = out.tell()
    out.write(b"[")
    children: list[OutlineNode] = []
    for item, record in zip(raw_records, records, strict=True):
        if children:
            out.write(b",")
        children.append(_dump(out, item, record))
    out.write(b"]")
    tail = shell[at + len(quoted) :]
    out.write(tail)
    return [
        start,
        out.tell(),
        *_facts(raw, message),
        records_at,
        children,
        tail.decode() if len(tail) <= TAIL_LIMIT else None,
    ]


def _shell(raw: dict[str, Any], trace: dict[str, Any]) -> tuple[bytes, bytes, int]:
    """The message's text with a placeholder for its records: (text, the placeholder as JSON, where it is).

    The placeholder must occur exactly once in that text. A message whose own keys or values hold it
    (trace data is anything, and a test generator may well try the constant) gets a random one instead.
    """
    placeholder = _PLACEHOLDER
    for _ in range(8):
        shell = dumps({**raw, "intermediate_trace": {**trace, "records": placeholder}})
        quoted = dumps(placeholder)
        at = shell.find(quoted)
        if at >= 0 and shell.find(quoted, at + 1) < 0:
            return shell, quoted, at
        placeholder = f"\ue000{secrets.token_hex(16)}\ue000"
    raise _NoOutline  # not reached with random placeholders; a safety net, not a path


def _facts(raw: Any, message: BaseMessage) -> list[Any]:
    """msg_id, role, create_ts (null when the JSON does not hold them plainly), call ids and result call ids."""
    calls = [call.id for call in message.tool_calls] if message.tool_calls else None
    results = [res.call_id for res in message.tool_reses if not isinstance(res, str)] if message.tool_reses else None
    if (
        type(raw) is dict
        and type(msg_id := raw.get("msg_id")) is str
        and type(create_ts := raw.get("create_ts")) is int
        and type(role := raw.get("role")) is str
        and msg_id == message.msg_id
        and create_ts == message.create_ts
        and role == message.role
    ):
        return [msg_id, role, create_ts, calls, results]
    return [None, None, None, calls, results]
