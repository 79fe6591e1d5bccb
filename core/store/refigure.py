"""A conversation's list-page figures recomputed from what it stores, for when messages were taken out.

An import adds to the figures (``core.store.importer``); ``--replace`` also takes versions out,
and a minimum, a maximum, a title or a set of kinds cannot be undone by subtraction. So the
conversations it touched are figured again from their stored messages and runs (step runs too): the same
walk (``core.store.derive``) over the same text an import reads.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, Text, cast, delete, func, insert, select, update

from core.jsonio import loads
from core.messages.union import MESSAGE_ADAPTER
from core.store.derive import figures, title_of
from core.store.tables import CONVERSATION_KINDS, CONVERSATIONS, MESSAGES, RUNS, STEP_RUNS


def refigure(conn: Connection, conversation_pks: Iterable[int]) -> None:
    """Recompute every figure, the title and the kinds of these conversations from their rows."""
    m, r, s, c = MESSAGES.c, RUNS.c, STEP_RUNS.c, CONVERSATIONS.c
    for pk in conversation_pks:
        messages = turns = records = damaged = 0
        first_ts: int | None = None
        last: int | None = None
        title: str | None = None
        title_ts: int | None = None
        kinds: set[str] = set()
        ordered = select(cast(m.body, Text)).where(m.conversation_pk == pk).order_by(m.create_ts, m.id)
        for body in conn.execute(ordered).scalars():
            message = MESSAGE_ADAPTER.validate_python(loads(body))
            fig = figures(message)
            messages += 1
            turns += message.role == "user"
            records += fig.records
            damaged += fig.damaged
            kinds |= fig.kinds
            first_ts = message.create_ts if first_ts is None else min(first_ts, message.create_ts)
            last = fig.last_ts if last is None else max(last, fig.last_ts)
            found = title_of(message)
            if title is None and found is not None:  # rows come in conversation order: the first one names it
                title, title_ts = found, message.create_ts
        runs = 0
        for table, of in ((RUNS, r.conversation_pk), (STEP_RUNS, s.conversation_pk)):
            count, last_run = conn.execute(select(func.count(), func.max(table.c.started_at)).where(of == pk)).one()
            runs += count
            if last_run is not None:
                last = last_run if last is None else max(last, last_run)
        conn.execute(
            update(CONVERSATIONS)
            .where(c.id == pk)
            .values(
                messages=messages,
                turns=turns,
                records=records,
                damaged=damaged,
                runs=runs,
                first_ts=first_ts,
                last_activity=last,
                title=title or "",
                title_ts=title_ts,
            )
        )
        conn.execute(delete(CONVERSATION_KINDS).where(CONVERSATION_KINDS.c.conversation_pk == pk))
        if kinds:
            conn.execute(insert(CONVERSATION_KINDS), [{"conversation_pk": pk, "kind": kind} for kind in sorted(kinds)])
