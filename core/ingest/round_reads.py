"""What the assembly has read of the stored batches: each batch parsed once, each span's events read once.

A round reads its new batches whole (to learn what ties their traces), then assembles unit after unit, each from
every stored span of its traces. A unit takes the spans already read, and the events they made, from here; the
spans it lacks it reads from the batches kept parsed, loading only those not kept. So a batch holding spans of
many conversations is parsed once, not once per conversation; and as an agent's history is resent on every call,
a conversation receiving its fifth turn does not read its first four again: the reads are kept across rounds,
one ``SpanReads`` per store (``reads_of``), up to ``KEPT_SPANS`` spans (the oldest batches' forgotten first).

Stored batches never change, so what is kept stays true; a batch read again under a known row id but with another
time of receipt (the store was emptied and filled again under the same engine) clears what was kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from core.formats.events import Event
from core.formats.genai_messages import MessageReader
from core.formats.otlp import Span
from core.formats.registry import otlp_span_events
from core.ingest.receive import MEDIA_TYPES, SOURCE, MediaType, ParsedBody, parsed, span_problem
from core.store import Store
from core.store import ingest as tables

Place = tuple[int, int]
"""A stored span's batch and position in it."""
PARSED_BYTES = 256 << 20
"""Bodies kept parsed in a round at most (the least recently read dropped first): what a round's units read of
older batches is parsed once, in the common case, without holding every batch a long round touches."""
KEPT_SPANS = 60_000
"""Spans kept read (with their events) across rounds at most: about 1,700 agent conversations of 35 spans."""


@dataclass(slots=True)
class SpanReads:
    """The spans read by place, the events each made, and the batches parsed."""

    spans: dict[Place, Span] = field(default_factory=dict)
    received_at: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held by the round using these reads."""
    _parsed: OrderedDict[int, tuple[ParsedBody, int]] = field(default_factory=OrderedDict)
    _parsed_bytes: int = 0
    _events: dict[Place, list[Event]] = field(default_factory=dict)
    _whole: dict[int, frozenset[int]] = field(default_factory=dict)
    """The batches read whole, and the positions of their spans."""
    written: dict[tuple[str, str], bytes] = field(default_factory=dict)
    """A digest of each message this process's assembly wrote, by ``(conversation_id, msg_id)``, once committed."""
    _reader: MessageReader = field(default_factory=MessageReader)

    def load(
        self, batches: Iterable[tables.StoredBatch], places: Mapping[int, Collection[int]] | None = None
    ) -> dict[int, set[int]]:
        """Parse these batches, keep them (up to ``PARSED_BYTES`` of bodies), and read their spans (at the
        positions ``places`` gives, when given); the places read. A batch read whole before is not read again."""
        read: dict[int, set[int]] = {}
        for batch in batches:
            if self.received_at.get(batch.pk, batch.received_at) != batch.received_at:
                self.clear()  # another batch under a known row id: the store was emptied since
            if places is None and batch.pk in self._whole:
                read[batch.pk] = set(self._whole[batch.pk])
                continue
            media: MediaType = next((m for m in MEDIA_TYPES if m == batch.content_type), "application/x-protobuf")
            self.received_at[batch.pk] = batch.received_at
            self._parsed[batch.pk] = (parsed(batch.body, media), len(batch.body))
            self._parsed_bytes += len(batch.body)
            read |= self.read([batch.pk], places)
            if places is None:  # every span of it is read: nothing more to take from it
                self._whole[batch.pk] = frozenset(read[batch.pk])
                self._parsed_bytes -= self._parsed.pop(batch.pk)[1]
            while self._parsed_bytes > PARSED_BYTES and len(self._parsed) > 1:
                self._parsed_bytes -= self._parsed.popitem(last=False)[1][1]
        return read

    def clear(self) -> None:
        """Forget everything read."""
        self.spans.clear()
        self.received_at.clear()
        self._parsed.clear()
        self._parsed_bytes = 0
        self._events.clear()
        self._whole.clear()
        self.written.clear()
        self._reader = MessageReader()

    def remember_written(self, digests: Mapping[tuple[str, str], bytes]) -> None:
        """These messages are stored as their digests say (up to ``KEPT_SPANS`` times 4 remembered, then afresh)."""
        if len(self.written) + len(digests) > KEPT_SPANS * 4:
            self.written.clear()
        self.written.update(digests)

    def forget_oldest(self, keep: int = KEPT_SPANS) -> None:
        """Past ``keep`` spans read, forget the oldest batches' until three quarters of it are left."""
        if len(self.spans) <= keep:
            return
        self._reader = MessageReader()  # its text pool and memo would otherwise hold the forgotten spans' texts
        by_batch: dict[int, list[Place]] = {}
        for place in self.spans:
            by_batch.setdefault(place[0], []).append(place)
        left = len(self.spans)
        for pk in sorted(by_batch):
            if left <= keep * 3 // 4:
                break
            for place in by_batch[pk]:
                del self.spans[place]
                self._events.pop(place, None)
            left -= len(by_batch[pk])
            self.received_at.pop(pk, None)
            self._whole.pop(pk, None)

    def missing(self, places: Mapping[int, Collection[int]]) -> dict[int, set[int]]:
        """Of these places, those not read yet."""
        out: dict[int, set[int]] = {}
        for pk, positions in places.items():
            left = {p for p in positions if (pk, p) not in self.spans}
            if left:
                out[pk] = left
        return out

    def unparsed(self, pks: Iterable[int]) -> list[int]:
        """Those of these batches not kept parsed: to be loaded again."""
        return [pk for pk in pks if pk not in self._parsed]

    def read(self, pks: Iterable[int], places: Mapping[int, Collection[int]] | None = None) -> dict[int, set[int]]:
        """Read the spans of these parsed batches (at the positions ``places`` gives, when given); their places."""
        read: dict[int, set[int]] = {}
        for pk in pks:
            body = self._parsed[pk][0]
            self._parsed.move_to_end(pk)
            positions = None if places is None else places.get(pk, ())
            found = read.setdefault(pk, set())
            numbered = (
                enumerate(body.spans())
                if positions is None  # spans() yields exactly the spans at these positions, in order
                else zip(sorted(positions), body.spans(positions), strict=False)
            )
            for position, span in numbered:
                if (pk, position) in self.spans:  # read before: its events are kept, its attributes let go
                    found.add(position)
                elif span_problem(span) is None:
                    self.spans[(pk, position)] = span
                    found.add(position)
        return read

    def kept(self, places: Mapping[int, Collection[int]]) -> list[tuple[Place, Span]]:
        """The spans read at these places, one per ``(trace_id, span_id)`` (the first received), in start order."""
        kept: dict[tuple[str, str], tuple[Place, Span]] = {}
        for pk in sorted(places):
            for position in sorted(places[pk]):
                span = self.spans.get((pk, position))
                if span is not None:
                    kept.setdefault((span.trace_id, span.span_id), ((pk, position), span))
        return sorted(kept.values(), key=lambda p: (p[1].start is None, p[1].start or 0, p[1].trace_id, p[1].span_id))

    def events(self, spans: Iterable[tuple[Place, Span]]) -> list[Event]:
        """The events of these spans, in order; each span's read once per round."""
        out: list[Event] = []
        for place, span in spans:
            found = self._events.get(place)
            if found is None:
                found = self._events[place] = list(otlp_span_events(span, SOURCE, self._reader))
                # Its events hold what the assembly reads of it: the raw attributes need not stay for the round.
                span.attributes, span.events, span.resource = {}, [], {}
            out.extend(found)
        return out


_READS: WeakKeyDictionary[object, SpanReads] = WeakKeyDictionary()
"""Keyed by the store's engine, which every ``Store`` opened on it shares."""
_READS_LOCK = threading.Lock()


def reads_of(store: Store) -> SpanReads:
    """The reads kept for this store (made on first use)."""
    with _READS_LOCK:
        reads = _READS.get(store.engine)
        if reads is None:
            reads = _READS[store.engine] = SpanReads()
        return reads
