"""A file's events cut into parts no transcript spans, so that memory holds one part at a time, not the file.

``core.formats.assemble`` only ever puts together what these tie, and each tie joins two parts into one:

* calls of one conversation key (``ConversationKey``);
* keyless calls whose messages open alike (their first message and first user message, ``call_opening``): a
  call only continues a branch that opens as its input does. A call whose input has no user message may
  continue any branch of the same first message, so it joins every part of that first message (as does a
  branch that opens without one, since every call of that first message may continue it);
* a tool run and its call: by call id (wherever an assistant message names it), else by conversation key, else
  by trace (every part holding the trace, since the run answers the first open call among them).

Events are written to a temporary file as they are read; each part is then read back, assembled and let go,
parts in order of their first call. Transcripts come out in the order one assembly of the whole file gives (by
their first call): a transcript waits only for the parts that start before it.
"""

from __future__ import annotations

import hashlib
import heapq
import pickle
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import IO

from core.formats.assemble import ImportNote, Interned, Transcript, assemble_calls, call_opening, order_key
from core.formats.events import Event, ModelCall, ToolExecution
from core.llm.messages import LLMAssistantMessage, LLMMessage

Node = tuple[str, ...]
"""A part's name before parts are joined: ("key", key), ("opens", first, user), ("alone", n)."""
OrderKey = tuple[int, int, str, int, int]
LAST: OrderKey = (1 << 62, 0, "", 0, 0)
"""Where a part without calls (tool runs alone) sorts: after every part with calls."""


class _Joins:
    """Union-find over the parts' names."""

    def __init__(self) -> None:
        self.parent: dict[Node, Node] = {}

    def find(self, node: Node) -> Node:
        self.parent.setdefault(node, node)
        while self.parent[node] != node:
            self.parent[node] = self.parent[self.parent[node]]
            node = self.parent[node]
        return node

    def join(self, a: Node, b: Node) -> None:
        root_a, root_b = self.find(a), self.find(b)
        if root_a != root_b:
            self.parent[max(root_a, root_b)] = min(root_a, root_b)


def _digest(value: object) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


@dataclass(slots=True)
class _Spilled:
    """Where each event sits in the temporary file (or the list, when nothing is spilled), the part it starts
    in, and the ties between parts."""

    file: IO[bytes] | None
    held: list[Event] = field(default_factory=list)
    events: list[tuple[int, int, Node]] = field(default_factory=list)
    starts: dict[int, OrderKey] = field(default_factory=dict)
    """Where each call sorts in the whole file (``order_key``), by its place among the events."""
    joins: _Joins = field(default_factory=_Joins)
    firsts: dict[str, set[Node]] = field(default_factory=dict)
    """Each first message's parts (keyless calls)."""
    open_first: set[str] = field(default_factory=set)
    """First messages a call may continue whatever its branch's user message: all their parts are one."""
    call_ids: dict[str, Node] = field(default_factory=dict)
    traces: dict[str, Node] = field(default_factory=dict)
    runs_by_trace: dict[str, list[Node]] = field(default_factory=dict)

    def write(self, event: Event, node: Node) -> None:
        if self.file is None:
            self.events.append((len(self.held), 0, node))
            self.held.append(event)
        else:
            data = pickle.dumps(event, protocol=pickle.HIGHEST_PROTOCOL)
            self.events.append((self.file.tell(), len(data), node))
            self.file.write(data)
        self.joins.find(node)

    def read(self, offset: int, length: int) -> Event:
        if self.file is None:
            return self.held[offset]
        self.file.seek(offset)
        event: Event = pickle.loads(self.file.read(length))  # noqa: S301 - our own temporary file
        return event


def _call_node(call: ModelCall, spilled: _Spilled) -> Node:
    key = call.key.conversation or call.key.thread
    if key is not None:
        return ("key", key)
    messages = (*(call.input or ()), *(call.output or ()))
    if not messages:
        return ("alone", str(len(spilled.events)))
    first, user = call_opening(messages)
    first_id = _digest(first)
    node: Node = ("opens", first_id, _digest(user) if user is not None else "")
    spilled.firsts.setdefault(first_id, set()).add(node)
    if user is None or (call.input and call_opening(call.input)[1] is None):
        spilled.open_first.add(first_id)
    return node


def _named_calls(messages: Iterable[LLMMessage]) -> Iterator[str]:
    for message in messages:
        if isinstance(message, LLMAssistantMessage):
            yield from (c.id for c in message.tool_calls if c.id)


def _spill(events: Iterable[Event], file: IO[bytes] | None) -> _Spilled:
    spilled = _Spilled(file)
    runs: list[tuple[ToolExecution, Node]] = []
    for event in events:
        if isinstance(event, ModelCall):
            spilled.starts[len(spilled.events)] = order_key(event, len(spilled.events))
            node = _call_node(event, spilled)
            for call_id in _named_calls((*(event.input or ()), *(event.output or ()))):
                spilled.joins.join(spilled.call_ids.setdefault(call_id, node), node)
            if event.source.trace:
                spilled.joins.join(spilled.traces.setdefault(event.source.trace, node), node)
        else:
            node = ("alone", str(len(spilled.events)))
            runs.append((event, node))
        spilled.write(event, node)
    for first_id in spilled.open_first:
        members = sorted(spilled.firsts[first_id])
        for other in members[1:]:
            spilled.joins.join(members[0], other)
    for run, node in runs:
        _tie_run(run, node, spilled)
    return spilled


def _tie_run(run: ToolExecution, node: Node, spilled: _Spilled) -> None:
    if run.call_id and run.call_id in spilled.call_ids:
        spilled.joins.join(spilled.call_ids[run.call_id], node)
        return
    key = run.key.conversation or run.key.thread
    if key is not None and ("key", key) in spilled.joins.parent:
        spilled.joins.join(("key", key), node)  # and its trace too: the key may hold no transcript
    if run.source.trace and run.source.trace in spilled.traces:
        spilled.joins.join(spilled.traces[run.source.trace], node)


def _part_transcripts(
    spilled: _Spilled, members: list[int], notes: list[ImportNote]
) -> list[tuple[OrderKey, Transcript]]:
    """One part assembled: each transcript with where its first call sorts in the whole file."""
    interned = Interned()
    calls: list[ModelCall] = []
    runs: list[ToolExecution] = []
    index_of: dict[int, int] = {}
    for index in members:
        offset, length, _ = spilled.events[index]
        event = spilled.read(offset, length)
        if isinstance(event, ModelCall):
            call = interned.call(event)
            index_of[id(call)] = index
            calls.append(call)
        else:
            runs.append(event)
    transcripts = assemble_calls(calls, runs, notes)
    return [(spilled.starts[index_of[id(t.calls[0])]], t) for t in transcripts]


def transcripts_by_part(
    events: Iterable[Event], notes: list[ImportNote], *, spill: bool = True
) -> Iterator[Transcript]:
    """The transcripts ``events`` make, in order of their first call (as ``assemble_transcripts`` gives them),
    each part of the file assembled while the rest waits on disk; without ``spill``, in memory (events a caller
    holds anyway: writing them out and reading them back would only copy them)."""
    with tempfile.TemporaryFile() if spill else nullcontext() as file:
        spilled = _spill(events, file)
        parts: dict[Node, list[int]] = {}
        for index, (_, _, node) in enumerate(spilled.events):
            parts.setdefault(spilled.joins.find(node), []).append(index)
        ordered = sorted(parts.values(), key=lambda members: min(spilled.starts.get(i, LAST) for i in members))
        waiting: list[tuple[OrderKey, int, Transcript]] = []
        for members in ordered:
            start = min(spilled.starts.get(i, LAST) for i in members)
            while waiting and waiting[0][0] < start:
                yield heapq.heappop(waiting)[2]
            for key, transcript in _part_transcripts(spilled, members, notes):
                heapq.heappush(waiting, (key, id(transcript), transcript))
            del members[:]
        while waiting:
            yield heapq.heappop(waiting)[2]
