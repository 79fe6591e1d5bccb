"""Outlines for messages stored before revision 0003 (``traceloupe db upgrade`` makes them, SQLite only).

A message imported before the outline table existed is read whole when its conversation opens.
The upgrade reads each such message back, types it as the dashboard does, and writes its outline
(``core.store.outline``) only when the text that outline describes is byte for byte the text
stored: a span that pointed anywhere else would show the wrong record. The rest stay as they were,
read whole, as before.
"""

from __future__ import annotations

from pydantic import ValidationError
from sqlalchemy import Connection, Text, cast, exists, insert, select

from core.jsonio import dumps, loads
from core.messages.union import MESSAGE_ADAPTER
from core.store.outline import dump_with_outline
from core.store.tables import MESSAGE_OUTLINES, MESSAGES

CHUNK = 500
"""Messages read, typed and outlined at a time: memory stays bounded by a chunk, not the store."""


def backfill_outlines(conn: Connection) -> int:
    """Write the outline of every SQLite message that has none and whose stored text allows one; returns how many."""
    if conn.dialect.name != "sqlite":
        return 0
    m, o = MESSAGES.c, MESSAGE_OUTLINES.c
    missing = list(conn.execute(select(m.id).where(~exists().where(o.message_pk == m.id)).order_by(m.id)).scalars())
    written = 0
    for start in range(0, len(missing), CHUNK):
        chunk = missing[start : start + CHUNK]
        rows = []
        for pk, body in conn.execute(select(m.id, cast(m.body, Text)).where(m.id.in_(chunk))):
            outline = _outline_of(body)
            if outline is not None:
                rows.append({"message_pk": pk, "outline": outline})
        if rows:
            conn.execute(insert(MESSAGE_OUTLINES), rows)
            written += len(rows)
    return written


def _outline_of(body: str) -> str | None:
    """The outline of a stored text, if the text is exactly what an import would write for it now."""
    try:
        raw = loads(body)
        message = MESSAGE_ADAPTER.validate_python(raw)
    except (ValueError, ValidationError):  # stored by hand, or by a version that read it differently
        return None
    text, outline = dump_with_outline(raw, message)
    if outline is None or text != body.encode("utf-8", "surrogatepass"):
        return None
    return dumps(outline).decode()
