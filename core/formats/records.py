"""Assembled transcripts written as stored conversations: user turns with their traces, ids, times, contexts.

A system message before the first user turn and each user turn are top-level records; every other message
(assistant replies, tool results, console output) goes into the ``intermediate_trace`` of the turn it
answers. Ids are derived from the source's ids and the message's position, never drawn at random, so an
import of the same file finds the same messages and changes nothing.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import msgspec

from core.formats.assemble import Entry, ImportNote, Transcript
from core.formats.events import Event, ModelCall, SourceRef
from core.formats.parts import transcripts_by_part
from core.formats.stored import Json, message_json, part_json, tool_json
from core.llm.messages import (
    LLMAssistantMessage,
    LLMMessage,
    LLMSystemMessage,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
)
from core.request_context.stored import StoredRequest

IMPORT_KEY = "traceloupe_import"
"""The ``additional_kwargs`` key an import writes: the source id, a placeholder mark, what had no place."""

INCOMPLETE_KEY = "incomplete"
"""Under ``IMPORT_KEY``: why messages may be missing around this one (its span dropped attributes)."""

PLACEHOLDER_TEXT = "[no user message was recorded for this turn]"

RECORDED_KEY = "recorded_request"
"""Under ``IMPORT_KEY`` of a call's first reply: the provider, model and request body a provider log recorded for
the call (the payload page shows it beside the body we build)."""


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """The request body a provider log recorded for the call that answered with a message, and its provider."""

    provider: str
    model: str | None
    body: dict[str, Any]


def recorded_request(additional_kwargs: Any) -> RecordedRequest | None:
    """The recorded request an imported reply keeps (``additional_kwargs`` of the stored message), or None."""
    meta = additional_kwargs.get(IMPORT_KEY) if isinstance(additional_kwargs, dict) else None
    kept = meta.get(RECORDED_KEY) if isinstance(meta, dict) else None
    if not isinstance(kept, dict) or not isinstance(kept.get("provider"), str):
        return None
    if not isinstance(kept.get("body"), dict):
        return None
    model = kept.get("model")
    return RecordedRequest(kept["provider"], model if isinstance(model, str) else None, kept["body"])


def incomplete_reason(additional_kwargs: Any) -> str | None:
    """Why messages may be missing around an imported message (``additional_kwargs`` of the stored one), or None."""
    meta = additional_kwargs.get(IMPORT_KEY) if isinstance(additional_kwargs, dict) else None
    reason = meta.get(INCOMPLETE_KEY) if isinstance(meta, dict) else None
    return reason if isinstance(reason, str) else None


@dataclass(slots=True)
class AssembledConversation:
    """One conversation as stored records (top-level messages, each user turn with its trace)."""

    conversation_id: str
    messages: list[Json]
    source: SourceRef


@dataclass(slots=True)
class Assembly:
    """What a file's events make: conversations, the request contexts their calls carried, and the notes."""

    conversations: list[AssembledConversation] = field(default_factory=list)
    requests: list[tuple[StoredRequest, SourceRef]] = field(default_factory=list)
    notes: list[ImportNote] = field(default_factory=list)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _conversation_id(transcript: Transcript, taken: set[str]) -> str:
    first = transcript.entries[0]
    base = transcript.key or first.source.source_id
    if not base:
        base = "imported-" + _digest(*(repr(e.message) for e in transcript.entries[:4]))
    cid, n = base, 1
    while cid in taken:
        n += 1
        cid = f"{base}-{n}"
    taken.add(cid)
    return cid


def _fill_call_ids(entries: list[Entry], msg_ids: list[str]) -> list[LLMMessage]:
    """Messages with every tool call named: a missing id is derived from its message, and a result that names
    no call answers the first open call of its name (or the first open call)."""
    out: list[LLMMessage] = []
    open_calls: list[LLMToolCall] = []
    for entry, msg_id in zip(entries, msg_ids, strict=True):
        message = entry.message
        if isinstance(message, LLMAssistantMessage) and message.tool_calls:
            calls = tuple(c if c.id else replace_call(c, f"{msg_id}-call{i}") for i, c in enumerate(message.tool_calls))
            message = msgspec.structs.replace(message, tool_calls=calls) if calls != message.tool_calls else message
            open_calls.extend(calls)
        elif isinstance(message, LLMToolMessage):
            if not message.tool_call_id:
                match = next((c for c in open_calls if c.name == message.name), None) or (
                    open_calls[0] if open_calls else None
                )
                if match is not None:
                    message = LLMToolMessage(
                        message.content, match.id, message.name or match.name, message.is_error, message.msg_id
                    )
            open_calls = [c for c in open_calls if c.id != message.tool_call_id]
        out.append(message)
    return out


def replace_call(call: LLMToolCall, call_id: str) -> LLMToolCall:
    """The call under a derived id."""
    return LLMToolCall(call_id, call.name, call.arguments, call.extra)


def _placeholder(conversation_id: str, msg_id: str, ts: int) -> Json:
    return {
        "role": "user",
        "msg_type": "text",
        "content": PLACEHOLDER_TEXT,
        "msg_id": msg_id,
        "conversation_id": conversation_id,
        "create_ts": ts,
        "additional_kwargs": {IMPORT_KEY: {"placeholder": True}},
        "intermediate_trace": {"records": []},
    }


def _import_kwargs(entry: Entry) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    if entry.source.source_id:
        meta["source_id"] = entry.source.source_id
    if entry.extra:
        meta["unplaced"] = entry.extra
    if entry.incomplete:
        meta[INCOMPLETE_KEY] = entry.incomplete
    call = entry.call
    request = call.request if call is not None and entry.first_reply else None
    if call is not None and call.recorded_body is not None and request is not None and request.provider is not None:
        meta[RECORDED_KEY] = {"provider": request.provider, "model": request.model, "body": call.recorded_body}
    return {IMPORT_KEY: meta} if meta else {}


def _records(
    cid: str, transcript: Transcript, notes: list[ImportNote], unplaced: Counter[str]
) -> tuple[list[Json], dict[int, str]]:
    """The top-level records of one transcript, and the turn (user msg_id) each call's output landed in."""
    entries = transcript.entries
    msg_ids = [_digest(cid, str(i)) for i in range(len(entries))]
    messages = _fill_call_ids(entries, msg_ids)
    top: list[Json] = []
    turn: Json | None = None
    turns_of_calls: dict[int, str] = {}
    warned: set[str] = set()
    last_ts = 0
    for entry, message, msg_id in zip(entries, messages, msg_ids, strict=True):
        last_ts = max(last_ts, entry.ts if entry.ts is not None else last_ts)
        if isinstance(message, LLMUserMessage) and message.attachment_of and turn is not None:
            records = turn["intermediate_trace"]["records"]
            if records and records[-1]["role"] == "tool":
                records[-1]["tool_reses"][0]["attachments"].extend(part_json(p) for p in message.content)
                continue
        record = message_json(message)
        if isinstance(message, LLMToolMessage):
            record = tool_json(message, message.tool_call_id or f"{msg_id}-orphan")
        record.update(msg_id=msg_id, conversation_id=cid, create_ts=last_ts)
        kwargs = _import_kwargs(entry)
        if entry.incomplete and entry.incomplete not in warned:
            warned.add(entry.incomplete)
            notes.append(ImportNote(entry.source, entry.incomplete))
        if kwargs:
            record["additional_kwargs"] = kwargs
            if entry.extra:
                unplaced.update(entry.extra.keys())
        if isinstance(message, LLMUserMessage):
            record["intermediate_trace"] = {"records": []}
            top.append(record)
            turn = record
            continue
        if isinstance(message, LLMSystemMessage) and turn is None:
            top.append(record)
            continue
        if turn is None:
            turn = _placeholder(cid, _digest(cid, "placeholder"), last_ts)
            top.append(turn)
            notes.append(ImportNote(entry.source, "no user message opens this conversation: a marked placeholder turn"))
        turn["intermediate_trace"]["records"].append(record)
        if entry.call is not None and isinstance(message, LLMAssistantMessage) and id(entry.call) not in turns_of_calls:
            turns_of_calls[id(entry.call)] = turn["msg_id"]
    return top, turns_of_calls


def _requests(cid: str, calls: list[ModelCall], turns: dict[int, str]) -> list[tuple[StoredRequest, SourceRef]]:
    """One context for the conversation when its calls all carried the same, else the first of each turn's."""
    carried = [(call, call.request) for call in calls if call.request is not None]
    if not carried:
        return []
    first_request = carried[0][1]
    first = replace(first_request, conversation_id=cid, turn=None)
    # tools hold dicts: no set; a part's calls that carried equal requests share one (core.formats.kept_events)
    if all(r is first_request or replace(r, conversation_id=cid, turn=None) == first for _, r in carried):
        return [(first, carried[0][0].source)]
    out: list[tuple[StoredRequest, SourceRef]] = []
    seen: set[str] = set()
    for call, request in carried:
        turn = turns.get(id(call))
        if turn is None or turn in seen:
            continue
        seen.add(turn)
        out.append((replace(request, conversation_id=cid, turn=turn), call.source))
    return out


def assembled(events: Iterable[Event], assembly: Assembly, *, spill: bool = True) -> Iterator[AssembledConversation]:
    """Each conversation as it is written, its request contexts and notes added to ``assembly`` on the way: the
    file is assembled a part at a time (``core.formats.parts``; ``spill``: the parts waiting on disk) and each
    transcript let go once written, so neither the file's events nor its records are ever held at once."""
    first: SourceRef | None = None
    taken: set[str] = set()
    unplaced: Counter[str] = Counter()
    for transcript in transcripts_by_part(events, assembly.notes, spill=spill):
        first = first or transcript.entries[0].source
        cid = _conversation_id(transcript, taken)
        top, turns = _records(cid, transcript, assembly.notes, unplaced)
        assembly.requests.extend(_requests(cid, transcript.calls, turns))
        source = transcript.entries[0].source
        del transcript
        yield AssembledConversation(cid, top, source)
    if unplaced and first is not None:
        listed = ", ".join(f"{key} ({n})" for key, n in sorted(unplaced.items()))
        assembly.notes.append(
            ImportNote(
                replace(first, line=None, source_id=None),
                f"kept under additional_kwargs.{IMPORT_KEY}.unplaced, no place in the stored format: {listed}",
            )
        )


def assemble(events: Iterable[Event]) -> Assembly:
    """Stored conversations and request contexts from a format's events (``core.formats.events``)."""
    assembly = Assembly()
    assembly.conversations = list(assembled(events, assembly))
    return assembly


def import_marks(raw: Json, root: str = "$") -> list[str]:
    """What ``traceloupe check`` reports of an imported message and its trace records: data kept aside under
    ``additional_kwargs.traceloupe_import.unplaced`` and placeholder turns, one line each with its JSON path."""
    found: list[str] = []
    records = (raw.get("intermediate_trace") or {}).get("records") or []
    for path, record in [(root, raw), *((f"{root}.intermediate_trace.records[{i}]", r) for i, r in enumerate(records))]:
        if not isinstance(record, dict):
            continue
        meta = (record.get("additional_kwargs") or {}).get(IMPORT_KEY)
        if not isinstance(meta, dict):
            continue
        ident = record.get("msg_id")
        if meta.get("placeholder"):
            found.append(f"{path} msg_id={ident}: placeholder user turn (the source recorded none)")
        if isinstance(meta.get(INCOMPLETE_KEY), str):
            found.append(f"{path} msg_id={ident}: {meta[INCOMPLETE_KEY]}")
        unplaced = meta.get("unplaced")
        if isinstance(unplaced, dict) and unplaced:
            found.append(
                f"{path} msg_id={ident}: imported data with no place in the stored format, kept under "
                f"additional_kwargs.{IMPORT_KEY}.unplaced: {', '.join(sorted(unplaced))}"
            )
    return found
