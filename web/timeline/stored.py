"""A timeline's order read from the outlines the import stored: no message's JSON is read until a page shows it.

``core.store.outline`` records, per stored message, a tree of its trace records: each one's byte
length in the stored text, its msg_id, role, create_ts, tool call ids and result call ids. Ordering
and linking a 10,000-record trace then reads that tree (some 60 bytes a record), not 16 MB of JSON;
a page reads the byte ranges of its own records (``Store.read_spans``) and types them through
``MESSAGE_ADAPTER`` like any message.

The placement and the typing are ``web.timeline.outline.JsonOrder``'s, which this must equal card
for card (``tests/web/timeline/test_outline.py`` holds both to the typed timeline):

- records placed around their user message by ``core.messages.placement``, MAX_TRACE_DEPTH deep;
- a user message with a trace is typed without it (its records are slots of their own);
- a record whose outline has no plain msg_id, role or create_ts (the stored JSON lacks them, or
  holds ``"7"`` for 7) is typed while the order is made, so a generated id or stamp is made once
  per load, as when the JSON is read whole.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from operator import attrgetter
from typing import NamedTuple

import msgspec

from core import MESSAGE_ADAPTER, Message
from core.jsonio import loads
from core.messages.placement import place
from web.timeline.cards import Placement
from web.timeline.order import MAX_TRACE_DEPTH, CallIndex, Order, Slot
from web.timeline.outline import OutlineError

Span = tuple[int, int, int]
"""``(row, start, end)``: a byte range of one stored message's JSON text."""

SpanReader = Callable[[list[Span]], list[bytes]]
"""Reads byte ranges of stored JSON, in one transaction (``Store.read_spans``)."""

_CREATE_TS = attrgetter("create_ts")
_MSG_ID = attrgetter("msg_id")
_ROLE = attrgetter("role")
_CALLS = attrgetter("calls")
_RESULTS = attrgetter("results")
_CHILDREN = attrgetter("children")
_make_slot = Slot._make


class RecordPlace(NamedTuple):
    """Where one record's message is in its stored text: all of it, or (a message with a trace) around its records.

    ``records_at`` is where its records array opens and ``records_end`` just past it (-1: no trace); ``tail``
    is the text after the array when the outline kept it.
    """

    start: int
    end: int
    records_at: int = -1
    records_end: int = -1
    tail: str | None = None

    def spans(self, row: int) -> list[Span]:
        """The ranges its typed message is read from: all of it, or all of it but its records (and its tail)."""
        if self.records_at < 0:
            return [(row, self.start, self.end)]
        if self.tail is not None:
            return [(row, self.start, self.records_at)]
        return [(row, self.start, self.records_at), (row, self.records_end, self.end)]

    def type_from(self, pieces: list[bytes]) -> Message:
        """Its message from the pieces ``spans`` read, typed as JsonOrder types it (without its trace)."""
        if self.records_at < 0:
            return MESSAGE_ADAPTER.validate_python(loads(pieces[0]))
        tail = self.tail.encode() if self.tail is not None else pieces[1]
        data = loads(pieces[0] + b"[]" + tail)
        if isinstance(data, dict):
            data.pop("intermediate_trace", None)
        return MESSAGE_ADAPTER.validate_python(data)


class _Node(msgspec.Struct, array_like=True, gc=False):
    """One record as ``core.store.outline`` stores it, and (for an irregular one) its typed values once read."""

    start: int
    end: int
    msg_id: str | None
    role: str | None
    create_ts: int | None
    calls: list[str] | None
    results: list[str] | None
    records_at: int = -1
    children: list[_Node] = []
    tail: str | None = None

    @property
    def place(self) -> RecordPlace:
        """Where its message is in the stored text, as a page reads it."""
        if not self.children:
            return RecordPlace(self.start, self.end)
        # The records array ends just before the closing "]" that follows its last record.
        return RecordPlace(self.start, self.end, self.records_at, self.children[-1].end + 1, self.tail)

    def spans(self, row: int) -> list[Span]:
        """The ranges its typed message is read from: all of it, or all of it but its records (and its tail)."""
        return self.place.spans(row)

    def type_from(self, pieces: list[bytes]) -> Message:
        """Its message, typed as JsonOrder types it (a message with a trace without that trace)."""
        return self.place.type_from(pieces)


_OUTLINE = msgspec.json.Decoder(_Node)


class StoredOrder(Order):
    """The order of stored messages from their outlines; a record is read and typed when a page first asks for it."""

    def __init__(self, outlines: Sequence[tuple[int, str]], read_spans: SpanReader) -> None:
        self._read_spans = read_spans
        self._lock = threading.Lock()
        self._typed: dict[int, Message] = {}
        try:
            roots = [(row, _OUTLINE.decode(text)) for row, text in outlines]
        except (msgspec.DecodeError, RecursionError) as exc:
            raise OutlineError(f"a stored outline cannot be read: {exc}") from None
        irregular: list[tuple[int, _Node]] = []
        for row, root in roots:
            _collect_irregular(row, [root], 0, irregular)
        self.regular = not irregular
        """Whether every record has a plain msg_id, role and stamp (none was typed to be placed)."""
        if irregular:
            self._type(irregular)
        nodes: list[_Node] = []
        rows: list[int] = []
        slots: list[Slot] = []
        for row, root in roots:
            _place(root, nodes, slots)
            rows.extend([row] * (len(nodes) - len(rows)))
        self._nodes = nodes
        self._rows = rows
        self._slots = slots
        self._calls = CallIndex.of_ids(zip(map(_MSG_ID, nodes), map(_CALLS, nodes), map(_RESULTS, nodes), strict=True))

    def messages(self, start: int, end: int) -> list[Message]:
        return self.messages_at(range(start, min(end, len(self._nodes))))

    def places(self) -> Iterator[tuple[int, RecordPlace]]:
        """Each slot's message row and where its record is in that row's text, in timeline order."""
        for row, node in zip(self._rows, self._nodes, strict=True):
            yield row, node.place

    def messages_at(self, positions: Sequence[int]) -> list[Message]:
        nodes, rows = self._nodes, self._rows
        # Under the lock so two requests never type one record twice (and cache one of the two).
        with self._lock:
            typed = self._typed
            missing = [(rows[p], nodes[p]) for p in positions if id(nodes[p]) not in typed]
            if missing:
                self._type(missing)  # one read for all of them: a transaction per record costs more than the record
            return [typed[id(nodes[p])] for p in positions]

    def _type(self, nodes: list[tuple[int, _Node]]) -> None:
        """Read the nodes' JSON in one transaction and type each; irregular nodes take the typed values."""
        spans = [node.spans(row) for row, node in nodes]
        pieces = self._read_spans([span for each in spans for span in each])
        at = 0
        for (_, node), each in zip(nodes, spans, strict=True):
            message = node.type_from(pieces[at : at + len(each)])
            at += len(each)
            self._typed[id(node)] = message
            if node.msg_id is None:
                node.msg_id, node.role, node.create_ts = message.msg_id, message.role, message.create_ts
                node.calls = [call.id for call in message.tool_calls] if message.tool_calls else None
                node.results = (
                    [res.call_id for res in message.tool_reses if not isinstance(res, str)]
                    if message.tool_reses
                    else None
                )


def _collect_irregular(row: int, siblings: list[_Node], level: int, out: list[tuple[int, _Node]]) -> None:
    """Nodes the order needs typed first: those without plain values, as deep as the order expands."""
    for node in siblings:
        if node.msg_id is None:
            out.append((row, node))
        children = node.children
        # The usual trace, plain records without traces of their own, is checked in C, not node by node.
        if children and level < MAX_TRACE_DEPTH and (None in map(_MSG_ID, children) or any(map(_CHILDREN, children))):
            _collect_irregular(row, children, level + 1, out)


def _place(root: _Node, nodes: list[_Node], slots: list[Slot]) -> None:
    """The placement of ``order.flatten`` over outline nodes.

    Every node's msg_id, role and create_ts are set by now (irregular ones were typed first).
    """
    for run in place((root,), records=_CHILDREN, stamp=_CREATE_TS, ident=_MSG_ID, max_depth=MAX_TRACE_DEPTH):
        records = run.nodes
        placement: Placement = "message" if run.side == "top" else run.side
        nodes.extend(records)
        # Slots made in C: the 10,000 records of the usual trace are one run.
        slots.extend(
            map(
                _make_slot,
                zip(map(_MSG_ID, records), map(_ROLE, records), repeat(placement), repeat(run.parent), repeat(0)),
            )
        )
