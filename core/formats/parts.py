"""A file's events cut into parts no transcript spans, so that memory holds one part at a time, not the file.

``core.formats.assemble`` only ever puts together what these tie, and each tie joins two parts into one:

* calls of one conversation key (``ConversationKey``);
* keyless calls whose messages open alike (their first message and first user message, ``call_opening``): a
  call only continues a branch that opens as its input does. A call whose input has no user message may
  continue any branch of the same first message, so it joins every part of that first message (as does a
  branch that opens without one, since every call of that first message may continue it);
* a tool run and its call: by call id (wherever an assistant message names it), else by conversation key, else
  by trace (every part holding the trace, since the run answers the first open call among them).

Events are written to a temporary file as they are read (``core.formats.kept_events``), and their index
(where each sits and sorts, the ties between them) to a temporary database (``core.formats.part_index``): memory
grows with neither the file's events nor its conversations. Each part is then read back, assembled and let go,
parts in order of their first call. Transcripts come out in the order one assembly of the whole file gives (by
their first call): a transcript waits only for the parts that start before it.
"""

from __future__ import annotations

import hashlib
import heapq
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import nullcontext

from core.formats.assemble import ImportNote, Interned, Transcript, assemble_calls, call_opening, order_key
from core.formats.events import Event, ModelCall, ToolExecution
from core.formats.kept_events import HeldEvents, KeptEvents, PartReads, SpilledEvents
from core.formats.part_index import LAST, Node, OrderKey, PartIndex, sortable
from core.formats.resent import Resent
from core.llm.messages import LLMAssistantMessage, LLMMessage

DIGESTS_HELD = 5_000
"""Openings' digests remembered (then it starts again): those of the conversations being read."""


def _digest(value: object) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


class _Digests(dict[object, str]):
    """Each opening's digest by the opening, made once: every call of a conversation opens alike, and the digest
    reads the whole text (an agent's system prompt)."""

    def __missing__(self, opening: object) -> str:
        if len(self) >= DIGESTS_HELD:
            self.clear()
        digest = self[opening] = _digest(opening)
        return digest


def _call_node(call: ModelCall, index: PartIndex, digests: _Digests) -> Node:
    key = call.key.conversation or call.key.thread
    if key is not None:
        return "k:" + key
    sent = call.input or ()
    first, user = call_opening(sent) if sent else (None, None)
    open_to_all = False
    if user is None:  # no user message sent: it opens as its messages do, and may continue any branch of its first
        messages = (*sent, *(call.output or ()))
        if not messages:
            return f"a:{index.count}"
        first, user = call_opening(messages)
        open_to_all = user is None or bool(sent)
    first_id = digests[first]
    node = f"o:{first_id}:{digests[user] if user is not None else ''}"
    index.add_opening(first_id, node, open_to_all)
    return node


def _named_calls(messages: Iterable[LLMMessage]) -> Iterator[str]:
    for message in messages:
        if isinstance(message, LLMAssistantMessage):
            yield from (c.id for c in message.tool_calls if c.id)


def _spill(events: Iterable[Event], kept: KeptEvents, index: PartIndex) -> None:
    """Each event kept and indexed, each call tied to its call ids and trace, each run to the call it names when
    that came first; then each other run to what it answers."""
    tied: Resent[LLMMessage, None] = Resent()
    """Per trace and node, the last call's messages: the call ids of the history a call resends are tied to its
    node already."""
    digests = _Digests()
    for event in events:
        if isinstance(event, ModelCall):
            start: OrderKey | None = sortable(order_key(event, index.count))
            node = _call_node(event, index, digests)
            sent, answered = event.input or (), event.output or ()
            shared, _ = tied.start((event.source.trace, node), sent)
            for call_id in dict.fromkeys(_named_calls((*sent[shared:], *answered))):
                index.join("c:" + call_id, node)
            tied.remember((event.source.trace, node), sent, answered)
            if event.source.trace:
                index.join("t:" + event.source.trace, node)
        else:
            start, node = None, f"a:{index.count}"
            call = _prefixed("c:", event.call_id)
            if call is not None and index.known(call):  # its call came first: tied now as it would be at the end
                index.join(call, node)
            else:
                key = event.key.conversation or event.key.thread
                index.add_run(node, (call, _prefixed("k:", key), _prefixed("t:", event.source.trace)))
        index.add_event(*kept.write(event), node, start)
    index.join_open_firsts()
    for run in index.runs():
        _tie_run(index, *run)


def _prefixed(kind: str, name: str | None) -> Node | None:
    return kind + name if name else None


def _tie_run(index: PartIndex, node: Node, call: Node | None, key: Node | None, trace: Node | None) -> None:
    if call is not None and index.known(call):
        index.join(call, node)
        return
    if key is not None and index.known(key):
        index.join(key, node)  # and its trace too: the key may hold no transcript
    if trace is not None and index.known(trace):
        index.join(trace, node)


def _part_transcripts(
    kept: KeptEvents, members: list[tuple[int, int, OrderKey | None]], notes: list[ImportNote]
) -> list[tuple[OrderKey, Transcript]]:
    """One part assembled: each transcript with where its first call sorts in the whole file."""
    interned = Interned()
    calls: list[ModelCall] = []
    runs: list[ToolExecution] = []
    start_of: dict[int, OrderKey] = {}
    reads = PartReads()
    for offset, length, start in members:
        event = kept.read(offset, length, reads)
        if isinstance(event, ModelCall):
            call = interned.call(event)
            start_of[id(call)] = start or LAST
            calls.append(call)
        else:
            runs.append(event)
    transcripts = assemble_calls(calls, runs, notes)
    return [(start_of[id(t.calls[0])], t) for t in transcripts]


def transcripts_by_part(
    events: Iterable[Event], notes: list[ImportNote], *, spill: bool = True
) -> Iterator[Transcript]:
    """The transcripts ``events`` make, in order of their first call (as ``assemble_transcripts`` gives them),
    each part of the file assembled while the rest waits on disk; without ``spill``, events and index stay in
    memory (for events a caller holds anyway)."""
    index = PartIndex(in_memory=not spill)
    try:
        with tempfile.TemporaryFile() if spill else nullcontext() as file:
            kept: KeptEvents = SpilledEvents(file) if file is not None else HeldEvents()
            _spill(events, kept, index)
            kept.written()
            waiting: list[tuple[OrderKey, int, Transcript]] = []
            for start, members in index.parts():
                while waiting and waiting[0][0] < start:
                    yield heapq.heappop(waiting)[2]
                for key, transcript in _part_transcripts(kept, members, notes):
                    heapq.heappush(waiting, (key, id(transcript), transcript))
            while waiting:
                yield heapq.heappop(waiting)[2]
    finally:
        index.close()
