"""Events into conversations: which calls belong together, and the one transcript each conversation holds.

Phases, each a function below:

1. ``_ordered``: model calls by start time (then by how much history they resend, so that a file's
   order never matters), calls whose content was not captured reported and set aside.
2. ``_group``: conversation identity, strongest first: the format's conversation or session id, then a
   thread or group id; calls with neither stand alone and are joined by prefix merge.
3. ``_merge``: within a group, each call continues the branch whose transcript its input resends
   (``core.formats.transcript``); a keyed group's several branches are one conversation, in time order.
4. ``_place_tool_runs``: tool executions (tool spans) answer their call by id, or by name and order.

``core.formats.records`` then writes each transcript as stored messages with stable ids.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from operator import is_
from typing import Any

import msgspec

from core.formats.events import Event, ModelCall, SourceRef, ToolExecution
from core.formats.resent import Resent
from core.formats.transcript import common_prefix, continues
from core.llm.messages import LLMAssistantMessage, LLMMessage, LLMTextPart, LLMToolMessage, LLMUserMessage


@dataclass(frozen=True, slots=True)
class ImportNote:
    """Something an import did not store as it was (missing content, a placeholder, data kept aside)."""

    source: SourceRef
    text: str

    def line(self) -> str:
        """One line for a terminal: file, line and id first."""
        where = self.source.path + (f":{self.source.line}" if self.source.line is not None else "")
        ident = f" {self.source.source_id}" if self.source.source_id else ""
        return f"{where}:{ident} {self.text}" if ident else f"{where}: {self.text}"


@dataclass(slots=True)
class Entry:
    """One message of a transcript, with the call (or tool run) that first carried it."""

    message: LLMMessage
    source: SourceRef
    ts: int | None
    call: ModelCall | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    first_reply: bool = False
    """The first message ``call`` answered: where the call's recorded request body is kept."""
    incomplete: str | None = None
    """Why messages around this one may be missing (the span that carried it dropped attributes), or None."""


@dataclass(slots=True)
class Transcript:
    """One conversation's messages in order, and the calls that made it."""

    key: str | None
    entries: list[Entry] = field(default_factory=list)
    calls: list[ModelCall] = field(default_factory=list)
    traces: set[str] = field(default_factory=set)
    messages: list[LLMMessage] = field(default_factory=list)
    """The entries' messages, kept beside them while calls merge (every call compares its input with them)."""

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        self.messages.append(entry.message)


def ms(when: datetime | None) -> int | None:
    """Milliseconds since the epoch, the unit of ``create_ts``."""
    return None if when is None else int(when.timestamp() * 1000)


def order_key(call: ModelCall, index: int) -> tuple[int, int, str, int, int]:
    """Where a call sorts among a file's calls: its start (else end) time, then how much history it resends, its
    id and line, and its place in the file (``index``)."""
    start = ms(call.started_at)
    if start is None:
        start = ms(call.ended_at) or 0
    return (start, len(call.input or ()), call.source.source_id or "", call.source.line or 0, index)


def _ordered(calls: list[ModelCall], notes: list[ImportNote]) -> list[ModelCall]:
    kept: list[tuple[tuple[int, int, str, int, int], ModelCall]] = []
    for index, call in enumerate(calls):
        if call.input is None and call.output is None:
            notes.append(ImportNote(call.source, "model call content was not captured: nothing stored for it"))
            continue
        if call.output is None:
            notes.append(ImportNote(call.source, "model call output was not captured: its input alone is stored"))
        kept.append((order_key(call, index), call))
    kept.sort(key=lambda pair: pair[0])
    return [call for _, call in kept]


def _group(calls: list[ModelCall]) -> list[tuple[str | None, list[ModelCall]]]:
    """Calls by conversation key (in order of each key's first call); each keyless call is its own group."""
    groups: dict[str, list[ModelCall]] = {}
    out: list[tuple[str | None, list[ModelCall]]] = []
    for call in calls:
        key = call.key.conversation or call.key.thread
        if key is None:
            out.append((None, [call]))
            continue
        if key not in groups:
            groups[key] = []
            out.append((key, groups[key]))
        groups[key].append(call)
    return out


def _extend(branch: Transcript, call: ModelCall) -> None:
    """Add what ``call`` brings to ``branch``: the input past the shared history, then the output."""
    start, end = ms(call.started_at), ms(call.ended_at)
    sent = call.input or ()
    have = branch.messages
    shared = common_prefix(have, sent)
    for message in sent[shared:]:
        branch.add(Entry(message, call.source, start, call, incomplete=call.incomplete))
    answered = list(call.output or ())
    if not answered and call.extra and branch.entries:
        _keep_on(branch.entries[-1], call.extra)
    after = len(sent) if shared == len(sent) and len(have) > len(sent) else None
    if after is not None and common_prefix(have[after:], answered) == len(answered):
        return  # a repeat of calls already in the branch: nothing new
    for position, message in enumerate(answered):
        extra = dict(call.extra) if position == 0 else {}
        ts = end if end is not None else start
        branch.add(Entry(message, call.source, ts, call, extra, position == 0, call.incomplete))
    branch.calls.append(call)
    if call.source.trace:
        branch.traces.add(call.source.trace)


def _keep_on(entry: Entry, extra: dict[str, Any]) -> None:
    """What a call without an answer had no place for, kept on the last message it sent (its parts after the
    entry's own)."""
    merged = {**extra, **entry.extra}
    if "parts" in extra and "parts" in entry.extra:
        merged["parts"] = [*entry.extra["parts"], *extra["parts"]]
    entry.extra = merged


def _fits(branch: Transcript, call: ModelCall) -> int:
    """How much of ``branch`` the call resends, or -1 when it does not continue it."""
    if call.input is None:
        return -1
    have = branch.messages
    if not continues(have, call.input):
        return -1
    if len(call.input) < len(have) and not continues(have[len(call.input) :], call.output or ()):
        return -1  # a retry that answered otherwise: another branch
    return min(len(have), len(call.input))


def opening(message: LLMMessage) -> tuple[str, str]:
    """What two recordings of a message share whatever else differs: its role and its text."""
    if isinstance(message, LLMUserMessage):
        return ("user", "".join(p.text.strip() for p in message.content if isinstance(p, LLMTextPart)))
    return (message.role, message.content.strip())


Opening = tuple[tuple[str, str], tuple[str, str] | None]
Branches = dict[Opening, list["Transcript"]]
"""Branches by how they open: their first message and their first user message (an agent's calls all share
its system prompt), so a call looks only at the branches its input could continue."""


def call_opening(messages: tuple[LLMMessage, ...]) -> Opening:
    """How a call's input opens: the key of the branches it may continue."""
    user = next((m for m in messages if isinstance(m, LLMUserMessage) and not m.attachment_of), None)
    return opening(messages[0]), None if user is None else opening(user)


def _candidates(branches: Branches, call: ModelCall) -> list[Transcript]:
    if not call.input:
        return []
    first, user = call_opening(call.input)
    found = branches.get((first, user), [])
    return found + branches.get((first, None), []) if user is not None else found


def _merge(key: str | None, calls: list[ModelCall], keyless: Branches, notes: list[ImportNote]) -> list[Transcript]:
    """The transcripts these calls make; keyless calls continue any keyless branch their input resends (of
    two that fit as well, the one of the same trace)."""
    branches: Branches = keyless if key is None else {}
    made: list[Transcript] = []
    for call in calls:
        best, best_score = None, (0, False)
        for branch in _candidates(branches, call):
            score = (_fits(branch, call), call.source.trace in branch.traces)
            if score[0] > 0 and score > best_score:
                best, best_score = branch, score
        if best is None and key is not None and call.input is None and made:
            best = made[-1]  # output alone, under the conversation's key: it follows what came before
        fresh = best is None
        if best is None:
            best = Transcript(key)
            made.append(best)
        _extend(best, call)
        if fresh and best.messages:  # by the messages it opens with, its call's input or (when none) its output
            branches.setdefault(call_opening(tuple(best.messages)), []).append(best)
    if key is None or len(made) <= 1:
        return made
    joined = made[0]
    for branch in made[1:]:
        shared = common_prefix(joined.messages, branch.messages)
        for entry in branch.entries[shared:]:
            joined.add(entry)
        joined.calls.extend(branch.calls)
        joined.traces |= branch.traces
    notes.append(
        ImportNote(
            calls[0].source,
            f"the calls of conversation {key!r} send {len(made)} separate histories: joined in time order",
        )
    )
    return [joined]


def _results(transcript: Transcript) -> dict[str, Entry]:
    """The first result of each call id in the transcript."""
    found: dict[str, Entry] = {}
    for entry in transcript.entries:
        if isinstance(entry.message, LLMToolMessage) and entry.message.tool_call_id:
            found.setdefault(entry.message.tool_call_id, entry)
    return found


class _ToolIndex:
    """Where each tool call sits and which are answered, built once for all of a file's tool runs."""

    def __init__(self, transcripts: list[Transcript]) -> None:
        self.calls: dict[str, tuple[Transcript, Entry]] = {}
        self.answered: dict[int, dict[str, Entry]] = {id(t): _results(t) for t in transcripts}
        """Per transcript, the first result of each call id: the one a tool run completes."""
        for transcript in transcripts:
            for entry in transcript.entries:
                if isinstance(entry.message, LLMAssistantMessage):
                    for call in entry.message.tool_calls:
                        if call.id:
                            self.calls.setdefault(call.id, (transcript, entry))

    def open_call(self, transcript: Transcript, name: str) -> tuple[Entry, str] | None:
        """The first call named ``name`` that no result answers: its entry and id."""
        done = self.answered[id(transcript)]
        for entry in transcript.entries:
            if isinstance(entry.message, LLMAssistantMessage):
                for call in entry.message.tool_calls:
                    if call.name == name and call.id and call.id not in done:
                        return entry, call.id
        return None

    def complete(self, transcript: Transcript, run: ToolExecution, call_id: str) -> None:
        """The result a later call resent for ``run``'s call, with what only the tool span knew: that the run
        failed (the agent sent the error as text: OpenAI's tool messages have no error flag) and the tool's name."""
        entry = self.answered[id(transcript)][call_id]
        message = entry.message
        assert isinstance(message, LLMToolMessage)
        failed = message.is_error or run.is_error
        entry.message = msgspec.structs.replace(message, name=message.name or run.name, is_error=failed)

    def answer(self, transcript: Transcript, after: Entry, run: ToolExecution, call_id: str) -> None:
        """The run's result right after its call and the results already there."""
        entries = transcript.entries
        position = next(i for i in range(len(entries) - 1, -1, -1) if entries[i] is after) + 1
        while position < len(entries) and isinstance(entries[position].message, LLMToolMessage):
            position += 1
        result = LLMToolMessage(run.result or "", call_id, run.name, run.is_error)
        ts = ms(run.ended_at) or ms(run.started_at) or after.ts
        entry = Entry(result, run.source, ts, None, dict(run.extra), incomplete=run.incomplete)
        entries.insert(position, entry)
        self.answered[id(transcript)][call_id] = entry


def _place_tool_runs(runs: list[ToolExecution], transcripts: list[Transcript], notes: list[ImportNote]) -> None:
    """Each tool run answers its call; a result the transcript already holds (resent in a later input) is kept
    as recorded there, with the run's failure and tool name added."""
    index = _ToolIndex(transcripts)
    by_key: dict[str, list[Transcript]] = {}
    by_trace: dict[str, list[Transcript]] = {}
    for transcript in transcripts:
        if transcript.key is not None:
            by_key.setdefault(transcript.key, []).append(transcript)
        for trace in transcript.traces:
            by_trace.setdefault(trace, []).append(transcript)
    for run in sorted(runs, key=lambda r: (ms(r.started_at) or 0, r.source.line or 0)):
        if run.call_id and run.call_id in index.calls:
            transcript, entry = index.calls[run.call_id]
            if run.call_id not in index.answered[id(transcript)]:
                index.answer(transcript, entry, run, run.call_id)
            else:
                index.complete(transcript, run, run.call_id)
            continue
        key = run.key.conversation or run.key.thread
        candidates = (by_key.get(key, []) if key else []) or by_trace.get(run.source.trace or "", [])
        for transcript in candidates:
            found = index.open_call(transcript, run.name)
            if found is not None:
                index.answer(transcript, found[0], run, found[1])
                break
        else:
            if run.result is not None:
                notes.append(ImportNote(run.source, f"tool run {run.name!r} answers no recorded call: not stored"))


class Interned:
    """One instance of each distinct message: the calls' inputs resend their history, so a file holds each
    message many times over; held once, memory grows with a file's distinct messages, not with its bytes."""

    def __init__(self) -> None:
        self.seen: dict[tuple[type, bytes], LLMMessage] = {}
        self.objects: dict[int, tuple[LLMMessage, LLMMessage]] = {}
        """Each object met (kept, so that its ``id`` names no other) and its instance: a reader hands a message
        resent unchanged over as the same object, which need not be encoded again."""
        self.encoder = msgspec.msgpack.Encoder()
        self.resent: Resent[LLMMessage, LLMMessage] = Resent()

    def message(self, message: LLMMessage) -> LLMMessage:
        known = self.objects.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        key = (type(message), hashlib.blake2b(self.encoder.encode(message), digest_size=16).digest())
        instance = self.seen.setdefault(key, message)
        self.objects[id(message)] = (message, instance)
        return instance

    def call(self, call: ModelCall) -> ModelCall:
        """The call with its input's instances: the history it resends as the last call of its trace had it."""
        sent, answered = call.input or (), call.output or ()
        shared, known = self.resent.start(call.source.trace, sent)
        interned = known + tuple(self.message(m) for m in sent[shared:])
        self.resent.remember(call.source.trace, sent, answered, interned + answered)
        if not sent or all(map(is_, interned, sent)):
            return call  # a spill's part reads each message once: its calls hold their instances already
        return replace(call, input=interned)


def assemble_transcripts(events: Iterable[Event], notes: list[ImportNote]) -> list[Transcript]:
    """The conversations ``events`` make, each as one transcript, in order of their first call."""
    calls: list[ModelCall] = []
    runs: list[ToolExecution] = []
    interned = Interned()
    for event in events:
        if isinstance(event, ModelCall):
            calls.append(interned.call(event))
        else:
            runs.append(event)
    return assemble_calls(calls, runs, notes)


def assemble_calls(calls: list[ModelCall], runs: list[ToolExecution], notes: list[ImportNote]) -> list[Transcript]:
    """The transcripts of these calls (in their source's order) and tool runs, in order of their first call."""
    transcripts: list[Transcript] = []
    keyless: Branches = {}
    for key, group in _group(_ordered(calls, notes)):
        transcripts.extend(_merge(key, group, keyless, notes))
    _place_tool_runs(runs, transcripts, notes)
    return [t for t in transcripts if t.entries]
