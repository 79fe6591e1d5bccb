"""Units of tied traces assembled into conversations, and written a group of units to a transaction.

A unit is every trace tied to others by a conversation key or the opening of a keyless call's history
(``core.store.ingest.tied_units``): what a file import of their spans would assemble together. Each unit is
assembled from every stored span of its traces, one of each ``(trace_id, span_id)`` however often it was sent,
in an order that does not depend on how they arrived; units are then written together, up to ``GROUP_SPANS``
spans to a transaction, in place of what their traces made before (``core.store.ingest_replace``), and their
conversations marked live. A write transaction per unit would cost its statements and its commit once per
conversation; one per round would keep a huge conversation's assembly in front of the small ones' (and the
store's one writer from the exports arriving meanwhile).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

import orjson

from core.formats.assemble import call_opening
from core.formats.events import Event, ModelCall
from core.formats.importing import foreign_events
from core.formats.records import IMPORT_KEY
from core.ingest.receive import SOURCE
from core.ingest.round_reads import SpanReads
from core.messages.base import now_ms
from core.reader import Record, StoreLine
from core.store import Store
from core.store import ingest as tables
from core.store.engine import read_transaction, write_transaction
from core.store.ingest_replace import replace_conversations

GROUP_SPANS = 4_000
"""Stored spans whose units are written in one transaction at most (a larger unit is written alone)."""


@dataclass(slots=True)
class AssembledUnit:
    """One unit's conversations as records and request-context lines, and what each of its traces made."""

    traces: set[str]
    records: list[Record]
    lines: list[StoreLine]
    outputs: dict[str, set[str]]
    received_at: int

    @property
    def made(self) -> set[str]:
        """The conversations the unit's spans make."""
        return {record.message.conversation_id for record in self.records}


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def links_of(events: Iterable[Event]) -> dict[str, set[str]]:
    """What ties each trace to others: its conversation keys, and the openings of its keyless calls."""
    links: dict[str, set[str]] = {}
    for event in events:
        trace = event.source.trace
        if not trace:
            continue
        found = links.setdefault(trace, set())
        key = event.key.conversation or event.key.thread
        if key:
            found.add("key:" + _digest(key))
        elif isinstance(event, ModelCall) and event.input:
            found.add("opening:" + _digest(repr(call_opening(event.input))))
    return links


def _outputs(records: Iterable[Record], trace_of_span: Mapping[str, str]) -> dict[str, set[str]]:
    """Each trace's conversations: those holding a message one of its spans carried (the import's source id)."""
    outputs: dict[str, set[str]] = {}
    for record in records:
        trace = (record.raw.get("intermediate_trace") or {}).get("records") or []
        for message in [record.raw, *trace]:
            meta = (message.get("additional_kwargs") or {}).get(IMPORT_KEY) if isinstance(message, dict) else None
            span = meta.get("source_id") if isinstance(meta, dict) else None
            if isinstance(span, str) and span in trace_of_span:
                outputs.setdefault(trace_of_span[span], set()).add(record.message.conversation_id)
    return outputs


def groups(units: list[set[str]], sizes: list[int]) -> Iterator[list[set[str]]]:
    """The units, the fewest stored spans first, in groups of at most ``GROUP_SPANS`` spans (or one unit)."""
    group: list[set[str]] = []
    spans = 0
    for size, unit in sorted(zip(sizes, units, strict=True), key=lambda pair: (pair[0], sorted(pair[1]))):
        if group and spans + size > GROUP_SPANS:
            yield group
            group, spans = [], 0
        group.append(unit)
        spans += size
    if group:
        yield group


def assemble_units(store: Store, units: list[set[str]], reads: SpanReads) -> list[AssembledUnit]:
    """Assemble every stored span of each unit's traces, reading only the spans ``reads`` does not hold."""
    with read_transaction(store.engine) as conn:
        places = tables.span_places_by_trace(conn, set().union(*units))
    out: list[AssembledUnit] = []
    for traces in units:
        unit_places: dict[int, set[int]] = {}
        for trace in traces:
            for pk, position in places.get(trace, ()):
                unit_places.setdefault(pk, set()).add(position)
        missing = reads.missing(unit_places)
        unparsed = reads.unparsed(missing)
        reads.read([pk for pk in missing if pk not in unparsed], missing)
        if unparsed:
            with read_transaction(store.engine) as conn:
                reads.load(tables.batches(conn, unparsed), missing)
        spans = reads.kept(unit_places)
        foreign = foreign_events(reads.events(spans), SOURCE, spill=False)
        records = list(foreign.records)
        outputs = _outputs(records, {span.span_id: span.trace_id for _, span in spans})
        received_at = max((reads.received_at[pk] for pk in unit_places), default=now_ms())
        out.append(AssembledUnit(traces, records, list(foreign.store_lines), outputs, received_at))
    return out


def _digest_of(record: Record) -> bytes | None:
    """A digest of the record as the assembly made it; None when it is not plain JSON (then it is compared)."""
    try:
        return hashlib.blake2b(orjson.dumps(record.raw, option=orjson.OPT_SORT_KEYS), digest_size=16).digest()
    except (orjson.JSONEncodeError, TypeError):
        return None


def write_units(store: Store, units: list[AssembledUnit], reads: SpanReads) -> set[str]:
    """Write these units' conversations in place of what their traces made before, in one transaction; the
    conversations made. A message this process wrote before as it is now is kept as stored, not prepared again:
    a conversation receiving its fifth turn writes that turn's messages (``SpanReads.written``)."""
    traces: set[str] = set().union(*(unit.traces for unit in units))
    made: set[str] = set().union(*(unit.made for unit in units))
    outputs: dict[str, set[str]] = {}
    for unit in units:
        outputs.update(unit.outputs)
    records = [record for unit in units for record in unit.records]
    lines = [line for unit in units for line in unit.lines]
    digests = {(r.message.conversation_id, str(r.raw.get("msg_id"))): _digest_of(r) for r in records}
    unchanged = {identity for identity, digest in digests.items() if digest and reads.written.get(identity) == digest}
    with write_transaction(store.engine, label="the assembly of received spans") as conn:
        previous = tables.outputs_of(conn, traces)
        replace_conversations(conn, records, lines, previous=previous, source=SOURCE, unchanged=unchanged)
        tables.set_outputs(conn, traces, outputs)
        tables.forget_live(conn, previous - made)
        tables.mark_live(conn, {cid: unit.received_at for unit in units for cid in unit.made})
    reads.remember_written({identity: digest for identity, digest in digests.items() if digest})
    return made
