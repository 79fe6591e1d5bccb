"""Conversations assembled from received spans put in place of what the same spans made before, in one transaction.

A new assembly of a conversation's spans (one more span arrived, or an earlier one late) gives its messages
again: a message stored as it is stays untouched (its row, outline and caches too), a changed one takes its
stored version's place, and a message no longer made is taken out, through the import's one write path
(``core.store.importer.write_in``). The request contexts are written again whole. A conversation the spans
no longer make is deleted when nothing else (a replay) hangs on it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from sqlalchemy import Connection, delete, exists, select

from core.reader import Record, StoreLine
from core.store import import_lines, import_prepare, importer
from core.store.backend import backend_of
from core.store.refigure import refigure
from core.store.tables import CONVERSATIONS, MESSAGES, REQUEST_CONTEXTS, RUNS, STEP_RUNS
from core.store.views import ImportSummary

_C = CONVERSATIONS.c
_M = MESSAGES.c


def replace_conversations(
    conn: Connection,
    records: Sequence[Record],
    lines: Sequence[StoreLine],
    *,
    previous: Collection[str],
    source: str,
    unchanged: Collection[tuple[str, str]] = frozenset(),
) -> ImportSummary:
    """Store ``records`` (whole conversations) and their request-context ``lines`` in place of the same
    conversations' stored messages and of the ``previous`` conversations these spans made.

    ``unchanged``: the ``(conversation_id, msg_id)`` of records known to be stored as they are (this process
    wrote them so): when the store still holds them they are kept, not prepared and compared again."""
    backend = backend_of(conn)
    backend.lock(conn, importer.IMPORT_LOCK)
    wanted: dict[str, set[str]] = {}
    for record in records:
        wanted.setdefault(record.message.conversation_id, set()).add(str(record.raw.get("msg_id")))
    affected = sorted(set(previous) | wanted.keys())
    named = select(_C.conversation_id, _C.id).where(_C.conversation_id.in_(affected))
    pks: dict[str, int] = {cid: pk for cid, pk in conn.execute(named)}
    by_pk = {pk: cid for cid, pk in pks.items()}
    stale: list[int] = []
    touched: set[int] = set()
    kept: set[tuple[str, str]] = set()
    if by_pk:
        stored = select(_M.id, _M.conversation_pk, _M.msg_id).where(_M.conversation_pk.in_(by_pk))
        for row, pk, msg_id in conn.execute(stored):
            if msg_id not in wanted.get(by_pk[pk], ()):
                stale.append(row)
                touched.add(pk)
            elif (by_pk[pk], msg_id) in unchanged:
                kept.add((by_pk[pk], msg_id))
        conn.execute(delete(REQUEST_CONTEXTS).where(REQUEST_CONTEXTS.c.conversation_pk.in_(by_pk)))
    if stale:
        backend.forget_messages(conn, stale)
        conn.execute(delete(MESSAGES).where(_M.id.in_(stale)))
    postgres = backend.refuses_nul
    summary = importer.write_in(
        conn,
        import_prepare.prepared_messages(
            (r for r in records if (r.message.conversation_id, str(r.raw.get("msg_id"))) not in kept), postgres=postgres
        ),
        source=source,
        replace=True,
        store_lines=lambda: import_lines.prepare_lines(lines, postgres=postgres),
    )
    gone = [pks[cid] for cid in previous if cid not in wanted and cid in pks]
    if gone:
        _delete_unused(conn, gone)
    refigure(conn, sorted(touched - set(gone)))
    return summary


def _delete_unused(conn: Connection, pks: Sequence[int]) -> None:
    """Delete these conversations, but one a replay or a step replay names (it stays, with what it still holds)."""
    used = exists().where(RUNS.c.conversation_pk == _C.id)
    stepped = exists().where(STEP_RUNS.c.conversation_pk == _C.id)
    conn.execute(delete(CONVERSATIONS).where(_C.id.in_(pks), ~used, ~stepped))
