"""What the messages an import stores add to their conversations' list-page figures, written a batch at a time."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import BigInteger, Connection, Integer, Text, and_, case, or_, update

from core.store.backend import backend_of
from core.store.import_prepare import PreparedMessage
from core.store.tables import CONVERSATION_KINDS, CONVERSATIONS
from core.store.versions import Identity


@dataclass(slots=True)
class Delta:
    """What the messages stored now add to one conversation."""

    messages: int = 0
    turns: int = 0
    records: int = 0
    damaged: int = 0
    first_ts: int | None = None
    last_activity: int | None = None
    title: str | None = None
    title_ts: int | None = None
    kinds: set[str] = field(default_factory=set)


def deltas(unique: dict[Identity, PreparedMessage], stored: set[Identity]) -> dict[str, Delta]:
    """What the messages of ``unique`` that are in ``stored`` add to each conversation, by conversation id."""
    deltas: dict[str, Delta] = {}
    for identity, item in unique.items():
        if identity not in stored:
            continue
        d = deltas.setdefault(item.conversation_id, Delta())
        ts = item.row["create_ts"]
        d.messages += 1
        d.turns += item.row["role"] == "user"
        d.records += item.row["records"]
        d.damaged += item.row["damaged"]
        d.first_ts = ts if d.first_ts is None else min(d.first_ts, ts)
        d.last_activity = item.last_ts if d.last_activity is None else max(d.last_activity, item.last_ts)
        # File order breaks create_ts ties, as FORMAT.md orders a conversation: keep the earlier one.
        if item.title is not None and (d.title_ts is None or ts < d.title_ts):
            d.title, d.title_ts = item.title, ts
        d.kinds |= item.kinds
    return deltas


_DELTA_TYPES: dict[str, Any] = {
    "d_pk": Integer,
    "d_messages": Integer,
    "d_turns": Integer,
    "d_records": Integer,
    "d_damaged": Integer,
    "d_first_ts": BigInteger,
    "d_last_activity": BigInteger,
    "d_title": Text,
    "d_title_ts": BigInteger,
}
"""What an import adds to one conversation's figures, by column of the delta source."""


def _delta_update(d: Any) -> Any:
    """The conversations UPDATE that adds a delta; ``d`` gives the delta columns by name (bind parameters
    for one row at a time, or the columns of an unnested source for all rows at once)."""
    c = CONVERSATIONS.c
    first, last, title_ts = d["d_first_ts"], d["d_last_activity"], d["d_title_ts"]
    takes_title = and_(title_ts.is_not(None), or_(c.title_ts.is_(None), c.title_ts > title_ts))
    return update(CONVERSATIONS).values(
        messages=c.messages + d["d_messages"],
        turns=c.turns + d["d_turns"],
        records=c.records + d["d_records"],
        damaged=c.damaged + d["d_damaged"],
        first_ts=case((or_(c.first_ts.is_(None), c.first_ts > first), first), else_=c.first_ts),
        last_activity=case((or_(c.last_activity.is_(None), c.last_activity < last), last), else_=c.last_activity),
        title=case((takes_title, d["d_title"]), else_=c.title),
        title_ts=case((takes_title, title_ts), else_=c.title_ts),
    )


def new_conversation(conversation_id: str, d: Delta) -> dict[str, Any]:
    """The row of a conversation created with its first messages' figures."""
    return {
        "conversation_id": conversation_id,
        "title": d.title or "",
        "title_ts": d.title_ts,
        "messages": d.messages,
        "turns": d.turns,
        "records": d.records,
        "damaged": d.damaged,
        "first_ts": d.first_ts,
        "last_activity": d.last_activity,
    }


def apply_deltas(conn: Connection, deltas: dict[str, Delta], pks: dict[str, int], *, created: set[int]) -> None:
    """Add the deltas to their conversations' figures (those ``created`` with them already hold them) and kinds."""
    if not deltas:
        return
    rows = [
        {
            "d_pk": pks[cid],
            "d_messages": d.messages,
            "d_turns": d.turns,
            "d_records": d.records,
            "d_damaged": d.damaged,
            "d_first_ts": d.first_ts,
            "d_last_activity": d.last_activity,
            "d_title": d.title,
            "d_title_ts": d.title_ts,
        }
        for cid, d in deltas.items()
        if pks[cid] not in created
    ]
    backend = backend_of(conn)
    if rows:
        backend.update_each(conn, lambda d: _delta_update(d).where(CONVERSATIONS.c.id == d["d_pk"]), _DELTA_TYPES, rows)
    kinds = [{"conversation_pk": pks[cid], "kind": kind} for cid, d in deltas.items() for kind in sorted(d.kinds)]
    backend.insert_new(conn, CONVERSATION_KINDS, kinds)
