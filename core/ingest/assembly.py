"""The assembly job: received span batches made into conversations, the same ones a file of those spans gives.

Each round takes the oldest pending batches and, in three steps:

1. reads their spans into events (``core.formats.registry.otlp_span_events``, a file import's reader) and
   records what ties each trace to others: a conversation key (``gen_ai.conversation.id``, a session id) or,
   for a call without one, the opening of its history (how a file import merges keyless calls);
2. groups the traces so tied into units (``core.store.ingest.tied_units``) and, the unit of fewest stored spans
   first, gathers its every stored span, keeps one of each ``(trace_id, span_id)`` however often it was sent,
   and assembles them with the one assembler (``core.formats.records``), in an order that does not depend on
   how they arrived: a huge conversation received with small ones is assembled after them, not before;
3. writes the units' conversations in place of what their traces made before, a group of units to a
   transaction (``core.ingest.units``), and marks them live, then marks the batches assembled: a round that
   runs again (its worker died) writes the same.

What a round has read (parsed batches, spans, their events) is kept for its units and the later rounds
(``core.ingest.round_reads``): a conversation receiving one more turn reads only that turn's spans.
The jobs run in one lane, so one round runs at a time; a batch received during a round is the next one's. A job
first lets a burst of exports finish arriving (``settle``), so that the burst is one round.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from core.ingest.round_reads import SpanReads, reads_of
from core.ingest.units import assemble_units, groups, links_of, write_units
from core.jobs.queue import JSON, JobQueue
from core.jobs.registry import JobContext, task
from core.messages.base import now_ms
from core.messages.door import gc_paused
from core.store import Store
from core.store import ingest as tables
from core.store.engine import read_transaction, write_transaction

log = logging.getLogger(__name__)

ASSEMBLE_TASK = "ingest_assemble"
ASSEMBLY_LANE = "ingest-assembly"
"""Every assembly job runs in this lane: one round at a time across every worker."""
ASSEMBLY_PROVIDER = "ingest"
"""The jobs' provider slot: they call no provider."""
BATCHES_PER_ROUND = 200
QUIET_MS = 300
"""A job's round waits until no batch has arrived for this long: an exporter's burst is assembled in one round,
not its conversations again in every round that a request of the burst started."""
MAX_WAIT_MS = 1_000
"""...and never longer than this after the oldest waiting batch arrived, so a steady stream still shows."""


@dataclass(slots=True)
class AssemblyReport:
    """What assembly rounds did: batches assembled, conversations written, batches that could not be."""

    batches: int = 0
    conversations: set[str] = field(default_factory=set)
    failed: int = 0


def _batches(store: Store, pks: list[int]) -> list[tables.StoredBatch]:
    with read_transaction(store.engine) as conn:
        return tables.batches(conn, pks)


def _links(reads: SpanReads, batches: list[tables.StoredBatch]) -> dict[str, set[str]]:
    """Read these batches whole into ``reads``; what ties their traces to others."""
    return links_of(reads.events(reads.kept(reads.load(batches))))


def _traces_of(store: Store, pks: list[int], links: Mapping[str, set[str]]) -> set[str]:
    """The traces these batches hold spans of, and every trace tied to them."""
    with read_transaction(store.engine) as conn:
        return tables.linked_traces(conn, tables.traces_of_batches(conn, pks) | links.keys())


def assemble_round(store: Store, limit: int = BATCHES_PER_ROUND, *, pks: list[int] | None = None) -> AssemblyReport:
    """One round over the oldest pending batches (or ``pks``); an empty report when none wait.

    Each unit of tied traces is written on its own, the fewest stored spans first, so that a huge conversation's
    assembly delays none of the small ones received with it. A round over the oldest batches also takes every later
    pending batch that holds only spans of its traces: their spans are assembled with them anyway, so a
    conversation sent in many batches is assembled once, not once per round while the others wait behind it.
    """
    report = AssemblyReport()
    with read_transaction(store.engine) as conn:
        pending = pks if pks is not None else tables.pending_batches(conn, limit)
        fresh = tables.batches(conn, pending)
    if not fresh:
        return report
    reads = reads_of(store)
    with reads.lock, gc_paused():  # the reads kept are a large heap the collector would rescan again and again
        links = _links(reads, fresh)
        with write_transaction(store.engine) as conn:
            tables.add_links(conn, links)
        traces = _traces_of(store, pending, links)
        if pks is None:
            with read_transaction(store.engine) as conn:
                later = tables.pending_within(conn, traces, exclude=pending)
            if later:
                more = _links(reads, _batches(store, later))
                with write_transaction(store.engine) as conn:
                    tables.add_links(conn, more)
                pending = [*pending, *later]
                traces = _traces_of(store, pending, more) | traces
        with read_transaction(store.engine) as conn:
            units = tables.tied_units(conn, traces)
            counts = tables.span_counts(conn, traces)
        sizes = [sum(counts.get(trace, 0) for trace in unit) for unit in units]
        for group in groups(units, sizes):
            report.conversations |= write_units(store, assemble_units(store, group, reads), reads)
        reads.forget_oldest()
    with write_transaction(store.engine) as conn:
        tables.mark_assembled(conn, pending, now_ms())
    report.batches = len(pending)
    return report


def _give_up(store: Store, pks: list[int]) -> None:
    """A batch the assembler fails on is set aside, kept as received, so that it does not hold up the others."""
    with write_transaction(store.engine) as conn:
        tables.mark_assembled(conn, pks, now_ms())


def assemble_pending(store: Store, limit: int = BATCHES_PER_ROUND) -> AssemblyReport:
    """Rounds until no batch waits; a round that fails is tried again batch by batch, and a failing batch set aside."""
    report = AssemblyReport()
    while True:
        with read_transaction(store.engine) as conn:
            pending = tables.pending_batches(conn, limit)
        if not pending:
            return report
        try:
            done = assemble_round(store, pks=pending)
        except Exception:
            log.exception("assembling %d received batches failed: trying them one by one", len(pending))
            done = AssemblyReport()
            for pk in pending:
                try:
                    one = assemble_round(store, pks=[pk])
                except Exception:
                    log.exception("received batch %d could not be assembled: kept as received, set aside", pk)
                    _give_up(store, [pk])
                    done.failed += 1
                    continue
                done.batches += one.batches
                done.conversations |= one.conversations
        report.batches += done.batches
        report.failed += done.failed
        report.conversations |= done.conversations


def settle(store: Store, quiet_ms: int = QUIET_MS, max_wait_ms: int = MAX_WAIT_MS) -> None:
    """Wait until the batches waiting have stopped arriving (``QUIET_MS``), or the oldest has waited ``MAX_WAIT_MS``."""
    while True:
        with read_transaction(store.engine) as conn:
            waiting = tables.pending_received(conn)
        if waiting is None:
            return
        now = now_ms()
        quiet_left, wait_left = quiet_ms - (now - waiting[1]), max_wait_ms - (now - waiting[0])
        if quiet_left <= 0 or wait_left <= 0:
            return
        time.sleep(min(quiet_left, wait_left) / 1000)


@task(ASSEMBLE_TASK)
def assemble_task(ctx: JobContext, args: Mapping[str, JSON]) -> None:
    """Assemble every pending batch (see the module), once the batches have stopped arriving for a moment."""
    settle(ctx.store)
    assemble_pending(ctx.store)


def queue_assembly(queue: JobQueue) -> str:
    """Queue an assembly job in the assembly lane; its id."""
    return queue.enqueue(ASSEMBLE_TASK, {}, provider=ASSEMBLY_PROVIDER, lane=ASSEMBLY_LANE)
