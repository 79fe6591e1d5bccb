"""The request contexts a conversation stored (``core.request_context``), read back; the import writes them
(``core.store.export_lines``, kind ``request``).

A turn's requests are built with the turn's own context if it has one, else with the conversation's: one
context applies whole, never a mix of the two.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, or_, select

from core.store.tables import CONVERSATIONS, REQUEST_CONTEXTS

if TYPE_CHECKING:
    from core.request_context import StoredRequest

_R = REQUEST_CONTEXTS.c
_COLUMNS = (_R.turn, _R.provider, _R.model, _R.tools, _R.tool_choice, _R.params)


def contexts_of(conn: Connection, conversation_pk: int) -> list[StoredRequest]:
    """Every context the conversation stored: its own (``turn`` None) first, then its turns' in storing order."""
    stmt = select(*_COLUMNS).where(_R.conversation_pk == conversation_pk).order_by(_R.turn.is_not(None), _R.id)
    return _read(conn, conversation_pk, stmt)


def context_for(conn: Connection, conversation_pk: int, turn: str | None = None) -> StoredRequest | None:
    """The context that applies to ``turn`` (the user msg_id opening it): the turn's own, else the conversation's;
    with ``turn`` None, the conversation's. None when neither is stored."""
    which = _R.turn.is_(None) if turn is None else or_(_R.turn.is_(None), _R.turn == turn)
    found = _read(conn, conversation_pk, select(*_COLUMNS).where(_R.conversation_pk == conversation_pk, which))
    return max(found, key=lambda c: c.turn is not None, default=None)


def _read(conn: Connection, conversation_pk: int, stmt: Any) -> list[StoredRequest]:
    from core.request_context import read_request  # here: it imports the providers, which the store does not need

    rows = conn.execute(stmt).all()
    if not rows:
        return []
    c = CONVERSATIONS.c
    cid = conn.execute(select(c.conversation_id).where(c.id == conversation_pk)).scalar_one()
    return [read_request({"conversation_id": cid, **row._mapping}) for row in rows]
