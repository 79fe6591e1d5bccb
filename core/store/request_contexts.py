"""The request contexts a conversation stored (``core.request_context``), read back; the import writes them
(``core.store.export_lines``, kind ``request``).

A turn's requests are built with the turn's own context if it has one, else with the conversation's: one
context applies whole, never a mix of the two.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, or_, select

from core.store.export_lines import BY_TABLE
from core.store.import_lines import prepare_lines, refuse_user_message
from core.store.tables import CONVERSATIONS, REQUEST_CONTEXTS

if TYPE_CHECKING:
    from core.reader import StoreLine
    from core.request_context import StoredRequest

_R = REQUEST_CONTEXTS.c
_KIND = BY_TABLE[REQUEST_CONTEXTS.name]
_COLUMNS = (_R.turn, _R.provider, _R.model, _R.tools, _R.tool_choice, _R.params)


def contexts_of(conn: Connection, conversation_pk: int) -> list[StoredRequest]:
    """Every context the conversation stored: its own (``turn`` None) first, then its turns' in storing order."""
    stmt = select(*_COLUMNS).where(_R.conversation_pk == conversation_pk).order_by(_R.turn.is_not(None), _R.id)
    return _read(conn, conversation_pk, stmt)


def context_for(conn: Connection, conversation_pk: int, turn: str | None = None) -> StoredRequest | None:
    """The context that applies to ``turn`` (the user msg_id opening it): the turn's own, else the conversation's;
    with ``turn`` None, the conversation's. None when neither is stored."""
    from core.request_context.calls import applying

    which = _R.turn.is_(None) if turn is None else or_(_R.turn.is_(None), _R.turn == turn)
    found = _read(conn, conversation_pk, select(*_COLUMNS).where(_R.conversation_pk == conversation_pk, which))
    return applying(found, found[0].conversation_id, turn) if found else None


def _read(conn: Connection, conversation_pk: int, stmt: Any) -> list[StoredRequest]:
    from core.request_context import read_request  # here: it imports the providers, which the store does not need

    rows = conn.execute(stmt).all()
    if not rows:
        return []
    c = CONVERSATIONS.c
    cid = conn.execute(select(c.conversation_id).where(c.id == conversation_pk)).scalar_one()
    return [read_request({"conversation_id": cid, **row._mapping}) for row in rows]


def is_request_line(line: StoreLine) -> bool:
    """Whether a store line holds a request context (kind ``request`` of ``core.store.export_lines``)."""
    return line.key == _KIND.key


def read_request_lines(
    lines: Sequence[StoreLine], roles: Mapping[tuple[str, str], str], *, postgres: bool = False
) -> list[StoredRequest]:
    """The request context lines among a file's store lines, checked as an import checks them, for a command that
    reads the file without a store (``payload``, ``diff``, ``check``); the other kinds are left to the caller.

    ``roles``: the role of each top-level message of the file, by (conversation_id, msg_id). InputError naming
    the file, line and field, as the import's, on the first bad line.
    """
    from core.request_context import read_request

    conversations = {cid for cid, _ in roles}
    out: list[StoredRequest] = []
    for prepared in prepare_lines([line for line in lines if is_request_line(line)], postgres=postgres):
        conversation_id = prepared.fields["conversation_id"]
        if conversation_id not in conversations:
            raise prepared.refused(
                f"{prepared.named()} names conversation {conversation_id!r}, which has no message in this file",
                "conversation_id",
            )
        turn = prepared.fields.get("turn")
        if turn is not None and roles.get((conversation_id, turn)) != "user":
            raise refuse_user_message(prepared, "turn", roles.get((conversation_id, turn)))
        out.append(read_request(prepared.fields))
    return out
