"""What one assembly round has read of the stored batches: each batch parsed once, each span's events read once.

A round reads its new batches whole (to learn what ties their traces), then assembles unit after unit, each from
every stored span of its traces. A unit takes the spans already read, and the events they made, from here; the
spans it lacks (in batches assembled in earlier rounds) it reads from the batches kept parsed, loading only those
not kept. So a batch holding spans of many conversations is parsed once per round, not once per conversation.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from core.formats.events import Event
from core.formats.genai_messages import MessageReader
from core.formats.otlp import Span
from core.formats.registry import otlp_span_events
from core.ingest.receive import MEDIA_TYPES, SOURCE, MediaType, ParsedBody, parsed, span_problem
from core.store import ingest as tables

Place = tuple[int, int]
"""A stored span's batch and position in it."""
PARSED_BYTES = 256 << 20
"""Bodies kept parsed in a round at most (the least recently read dropped first): what a round's units read of
older batches is parsed once, in the common case, without holding every batch a long round touches."""


@dataclass(slots=True)
class RoundReads:
    """The spans read this round by place, the events each made, and the batches parsed."""

    spans: dict[Place, Span] = field(default_factory=dict)
    received_at: dict[int, int] = field(default_factory=dict)
    _parsed: OrderedDict[int, tuple[ParsedBody, int]] = field(default_factory=OrderedDict)
    _parsed_bytes: int = 0
    _events: dict[Place, list[Event]] = field(default_factory=dict)
    _reader: MessageReader = field(default_factory=MessageReader)

    def load(
        self, batches: Iterable[tables.StoredBatch], places: Mapping[int, Collection[int]] | None = None
    ) -> dict[int, set[int]]:
        """Parse these batches, keep them (up to ``PARSED_BYTES`` of bodies), and read their spans (at the
        positions ``places`` gives, when given); the places read."""
        read: dict[int, set[int]] = {}
        for batch in batches:
            media: MediaType = next((m for m in MEDIA_TYPES if m == batch.content_type), "application/x-protobuf")
            self.received_at[batch.pk] = batch.received_at
            self._parsed[batch.pk] = (parsed(batch.body, media), len(batch.body))
            self._parsed_bytes += len(batch.body)
            read |= self.read([batch.pk], places)
            if places is None:  # every span of it is read: nothing more to take from it this round
                self._parsed_bytes -= self._parsed.pop(batch.pk)[1]
            while self._parsed_bytes > PARSED_BYTES and len(self._parsed) > 1:
                self._parsed_bytes -= self._parsed.popitem(last=False)[1][1]
        return read

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
                if span_problem(span) is None:
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
