"""The live ingest's tables: batches appended as received, the spans they hold, and what was assembled of them.

A batch is written before its request is answered (``append_batch``) and stays pending until the
assembly job (``core.ingest.assembly``) has made conversations of it. The job finds the spans of a
conversation through ``ingest_spans`` (trace by trace) and ``ingest_links`` (the conversation keys and
openings that tie traces together), and replaces what it made before (``ingest_outputs``) in one transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from sqlalchemy import Connection, delete, func, insert, select, update

from core.store.backend import backend_of
from core.store.ingest_tables import INGEST_BATCHES, INGEST_LINKS, INGEST_OUTPUTS, INGEST_SPANS, LIVE_CONVERSATIONS

_B = INGEST_BATCHES.c
_S = INGEST_SPANS.c
_L = INGEST_LINKS.c
_O = INGEST_OUTPUTS.c
_LIVE = LIVE_CONVERSATIONS.c

CHUNK = 500
"""Values per ``IN (...)`` list: under SQLite's bound-variable limit with room to spare."""


@dataclass(frozen=True, slots=True)
class StoredBatch:
    """One received batch as the assembly reads it back."""

    pk: int
    received_at: int
    content_type: str
    body: bytes


def _chunks(values: Iterable[str]) -> Iterable[list[str]]:
    items = sorted(set(values))
    for start in range(0, len(items), CHUNK):
        yield items[start : start + CHUNK]


def append_batch(
    conn: Connection,
    *,
    body: bytes,
    content_type: str,
    spans: Collection[tuple[int, str, str]],
    key_pk: int | None,
    now: int,
) -> int:
    """Store one received body and the ``(position, trace_id, span_id)`` of each span kept; its row id."""
    values = {
        "received_at": now,
        "key_pk": key_pk,
        "content_type": content_type,
        "spans": len(spans),
        "assembled_at": None,
        "body": body,
    }
    pk = int(conn.execute(insert(INGEST_BATCHES).values(values).returning(_B.id)).scalar_one())
    if spans:
        rows = [{"batch_pk": pk, "position": p, "trace_id": t, "span_id": s} for p, t, s in spans]
        conn.execute(insert(INGEST_SPANS), rows)
    return pk


def pending_count(conn: Connection, cap: int) -> int:
    """How many batches wait for assembly, counted up to ``cap``."""
    waiting = select(_B.id).where(_B.assembled_at.is_(None)).limit(cap).subquery()
    return int(conn.execute(select(func.count()).select_from(waiting)).scalar_one())


def pending_received(conn: Connection) -> tuple[int, int] | None:
    """When the oldest and the newest batch waiting for assembly were received (ms); None when none waits."""
    stmt = select(func.min(_B.received_at), func.max(_B.received_at)).where(_B.assembled_at.is_(None))
    oldest, newest = conn.execute(stmt).one()
    return None if oldest is None else (int(oldest), int(newest))


def pending_batches(conn: Connection, limit: int) -> list[int]:
    """The oldest batches waiting for assembly, at most ``limit``."""
    stmt = select(_B.id).where(_B.assembled_at.is_(None)).order_by(_B.id).limit(limit)
    return list(conn.execute(stmt).scalars())


def batches(conn: Connection, pks: Collection[int]) -> list[StoredBatch]:
    """These batches, in the order they were received."""
    out: list[StoredBatch] = []
    ordered = sorted(pks)
    for start in range(0, len(ordered), CHUNK):
        stmt = select(_B.id, _B.received_at, _B.content_type, _B.body).where(_B.id.in_(ordered[start : start + CHUNK]))
        out.extend(StoredBatch(pk, at, kind, bytes(body)) for pk, at, kind, body in conn.execute(stmt))
    out.sort(key=lambda b: b.pk)
    return out


def traces_of_batches(conn: Connection, pks: Collection[int]) -> set[str]:
    """The traces whose spans these batches hold."""
    found: set[str] = set()
    ordered = sorted(pks)
    for start in range(0, len(ordered), CHUNK):
        stmt = select(_S.trace_id).where(_S.batch_pk.in_(ordered[start : start + CHUNK])).distinct()
        found.update(conn.execute(stmt).scalars())
    return found


def span_places_by_trace(conn: Connection, traces: Iterable[str]) -> dict[str, list[tuple[int, int]]]:
    """Where the spans of each of these traces are: their batches and positions."""
    out: dict[str, list[tuple[int, int]]] = {}
    for chunk in _chunks(traces):
        stmt = select(_S.trace_id, _S.batch_pk, _S.position).where(_S.trace_id.in_(chunk))
        for trace, batch_pk, position in conn.execute(stmt):
            out.setdefault(trace, []).append((batch_pk, position))
    return out


def add_links(conn: Connection, links: Mapping[str, Collection[str]]) -> None:
    """Record what ties each trace to others (kept once however often it is recorded)."""
    rows = [{"trace_id": trace, "link": link} for trace, found in links.items() for link in found]
    if rows:
        conn.execute(backend_of(conn).insert(INGEST_LINKS).values(rows).on_conflict_do_nothing())


def linked_traces(conn: Connection, traces: Iterable[str]) -> set[str]:
    """Every trace tied to these, directly or through others (the closure of ``ingest_links``)."""
    return set().union(set(traces), *tied_units(conn, traces))


def tied_units(conn: Connection, traces: Iterable[str]) -> list[set[str]]:
    """These traces grouped with every trace tied to them: each group one unit of assembly, apart from the others.

    The closure of ``ingest_links`` is read a step at a time for all the traces at once, then split into groups."""
    found = set(traces)
    frontier = set(found)
    seen_links: set[str] = set()
    pairs: list[tuple[str, str]] = []
    while frontier:
        links: set[str] = set()
        for chunk in _chunks(frontier):
            for trace, link in conn.execute(select(_L.trace_id, _L.link).where(_L.trace_id.in_(chunk))):
                links.add(link)
                pairs.append((trace, link))
        links -= seen_links
        seen_links |= links
        frontier = set()
        for chunk in _chunks(links):
            frontier.update(conn.execute(select(_L.trace_id).where(_L.link.in_(chunk))).scalars())
        frontier -= found
        found |= frontier
    return _groups(found, pairs)


def _groups(traces: set[str], pairs: Iterable[tuple[str, str]]) -> list[set[str]]:
    """The traces grouped by the links they share (union-find)."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        parent.setdefault(node, node)
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for trace, link in pairs:
        a, b = root("t:" + trace), root("l:" + link)
        if a != b:
            parent[max(a, b)] = min(a, b)
    grouped: dict[str, set[str]] = {}
    for trace in sorted(traces):
        grouped.setdefault(root("t:" + trace), set()).add(trace)
    return list(grouped.values())


def pending_within(conn: Connection, traces: Collection[str], *, exclude: Collection[int]) -> list[int]:
    """The pending batches, but ``exclude``, that hold spans of these traces and of no other, oldest first."""
    candidates: set[int] = set()
    for chunk in _chunks(traces):
        stmt = (
            select(_S.batch_pk)
            .join(INGEST_BATCHES, _B.id == _S.batch_pk)
            .where(_S.trace_id.in_(chunk), _B.assembled_at.is_(None))
            .distinct()
        )
        candidates.update(conn.execute(stmt).scalars())
    candidates -= set(exclude)
    outside: set[int] = set()
    ordered = sorted(candidates)
    for start in range(0, len(ordered), CHUNK):
        stmt = select(_S.batch_pk, _S.trace_id).where(_S.batch_pk.in_(ordered[start : start + CHUNK])).distinct()
        outside.update(pk for pk, trace in conn.execute(stmt) if trace not in traces)
    return [pk for pk in ordered if pk not in outside]


def span_counts(conn: Connection, traces: Iterable[str]) -> dict[str, int]:
    """How many spans of each of these traces are stored (a span sent twice counts twice)."""
    counts: dict[str, int] = {}
    for chunk in _chunks(traces):
        stmt = select(_S.trace_id, func.count()).where(_S.trace_id.in_(chunk)).group_by(_S.trace_id)
        counts.update((trace, int(n)) for trace, n in conn.execute(stmt))
    return counts


def outputs_of(conn: Connection, traces: Iterable[str]) -> set[str]:
    """The conversations these traces were assembled into before."""
    found: set[str] = set()
    for chunk in _chunks(traces):
        found.update(conn.execute(select(_O.conversation_id).where(_O.trace_id.in_(chunk))).scalars())
    return found


def set_outputs(conn: Connection, traces: Collection[str], outputs: Mapping[str, Collection[str]]) -> None:
    """These traces are now assembled into the conversations ``outputs`` gives each (what they made before is
    forgotten)."""
    for chunk in _chunks(traces):
        conn.execute(delete(INGEST_OUTPUTS).where(_O.trace_id.in_(chunk)))
    rows = [{"trace_id": t, "conversation_id": c} for t in sorted(outputs) for c in sorted(outputs[t])]
    for start in range(0, len(rows), CHUNK):
        conn.execute(insert(INGEST_OUTPUTS), rows[start : start + CHUNK])


def mark_live(conn: Connection, received_at: Mapping[str, int]) -> None:
    """These conversations received spans at the time each is given (a later time already recorded stays)."""
    if not received_at:
        return
    stmt = backend_of(conn).insert(LIVE_CONVERSATIONS)
    later = backend_of(conn).greatest(stmt.excluded.last_received_at, _LIVE.last_received_at)
    stmt = stmt.on_conflict_do_update(index_elements=["conversation_id"], set_={"last_received_at": later})
    values = [{"conversation_id": c, "last_received_at": received_at[c]} for c in sorted(received_at)]
    conn.execute(stmt, values)  # one statement compiled, its rows executed as many


def forget_live(conn: Connection, conversation_ids: Collection[str]) -> None:
    """These conversations are no longer made by the ingest."""
    for chunk in _chunks(conversation_ids):
        conn.execute(delete(LIVE_CONVERSATIONS).where(_LIVE.conversation_id.in_(chunk)))


def live_since(conn: Connection, conversation_ids: Iterable[str], since: int) -> set[str]:
    """Those of these conversations that received spans at ``since`` or later."""
    found: set[str] = set()
    for chunk in _chunks(conversation_ids):
        stmt = select(_LIVE.conversation_id).where(_LIVE.conversation_id.in_(chunk), _LIVE.last_received_at >= since)
        found.update(conn.execute(stmt).scalars())
    return found


def mark_assembled(conn: Connection, pks: Collection[int], now: int) -> None:
    """These batches' spans are in the store's conversations."""
    ordered = sorted(pks)
    for start in range(0, len(ordered), CHUNK):
        conn.execute(update(INGEST_BATCHES).where(_B.id.in_(ordered[start : start + CHUNK])).values(assembled_at=now))
