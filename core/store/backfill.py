"""Outlines for messages stored before revision 0003 (``traceloupe db upgrade`` makes them).

A message imported before the outline table existed is read whole when its conversation opens.
The upgrade reads each such message back, types it as the dashboard does, and writes its outline
(``core.store.outline``). On SQLite the spans point into ``body``, so the outline is written only
when the text it describes is byte for byte the text stored (a span that pointed anywhere else
would show the wrong record; such a message stays read whole, as before). On PostgreSQL the text
the spans point into is written beside it (``message_texts``), as an import does.
"""

from __future__ import annotations

from pydantic import ValidationError
from sqlalchemy import Connection, Text, cast, exists, insert, select

from core.jsonio import dumps, loads
from core.messages.union import MESSAGE_ADAPTER
from core.store.backend import backend_of
from core.store.outline import dump_with_outline
from core.store.tables import MESSAGE_OUTLINES, MESSAGE_TEXTS, MESSAGES

CHUNK = 500
"""Messages read, typed and outlined at a time: memory stays bounded by a chunk, not the store."""


def backfill_outlines(conn: Connection) -> int:
    """Write the outline of every message that has none (and whose text allows one); returns how many."""
    keeps_texts = backend_of(conn).keeps_texts
    m, o = MESSAGES.c, MESSAGE_OUTLINES.c
    missing = list(conn.execute(select(m.id).where(~exists().where(o.message_pk == m.id)).order_by(m.id)).scalars())
    written = 0
    for start in range(0, len(missing), CHUNK):
        chunk = missing[start : start + CHUNK]
        outlines = []
        texts = []
        # Locked as a foreign key's check would: PostgreSQL's outlines and texts have none (revision 0034).
        read = select(m.id, cast(m.body, Text)).where(m.id.in_(chunk)).with_for_update(read=True, key_share=True)
        for pk, body in conn.execute(read):
            made = _outline_of(body)
            if made is None:
                continue
            text, outline = made
            if not keeps_texts and text != body.encode("utf-8", "surrogatepass"):
                continue
            outlines.append({"message_pk": pk, "outline": outline})
            texts.append({"message_pk": pk, "text": text})
        if outlines:
            conn.execute(insert(MESSAGE_OUTLINES), outlines)
            if keeps_texts:
                conn.execute(insert(MESSAGE_TEXTS), texts)
            written += len(outlines)
    return written


def _outline_of(body: str) -> tuple[bytes, str] | None:
    """The text an import would write now for a stored message, and its outline's JSON."""
    try:
        raw = loads(body)
        message = MESSAGE_ADAPTER.validate_python(raw)
    except (ValueError, ValidationError):  # stored by hand, or by a version that read it differently
        return None
    text, outline = dump_with_outline(raw, message)
    return None if outline is None else (text, dumps(outline).decode())
