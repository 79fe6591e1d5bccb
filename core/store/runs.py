"""Runs: replays of a conversation against a provider, recorded whatever happens.

A run is stored when it starts (status ``running``) and completed when it ends,
so a crash or a timeout still leaves a trace. An idempotency key makes a
retried start return the run already recorded instead of starting another.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Required, TypedDict

from sqlalchemy import Connection, Engine, bindparam, func, literal_column, select, tuple_, update

from core.errors import UnknownNameError
from core.messages.base import now_ms
from core.store.backend import Backend, backend_of
from core.store.engine import one_statement_write, write_transaction
from core.store.errors import InvalidQueryError
from core.store.query import MAX_PAGE, decode_cursor, encode_cursor
from core.store.tables import CONVERSATIONS, RUNS
from core.store.views import RUN_STATUSES, NewRun, RunStatus, RunSummary, RunView, TokenUsage, from_row

_R = RUNS.c
_C = CONVERSATIONS.c
_RUN_COLUMNS = (*RUNS.c, _C.conversation_id)
_SUMMARY_COLUMNS = (*(c for c in RUNS.c if c.name not in ("request_body", "response_body")), _C.conversation_id)


def _usage(row: Any) -> TokenUsage:
    return TokenUsage(
        input_tokens=row.input_tokens, output_tokens=row.output_tokens, total_tokens=row.total_tokens, raw=row.usage
    )


def _view(row: Any, **values: Any) -> RunView:
    return from_row(RunView, row, usage=_usage(row), **values)


def _summary(row: Any) -> RunSummary:
    return from_row(RunSummary, row, usage=_usage(row))


def _select(columns: tuple[Any, ...] = _RUN_COLUMNS) -> Any:
    return select(*columns).join(CONVERSATIONS, CONVERSATIONS.c.id == _R.conversation_pk)


def get_run_summary(conn: Connection, run_id: str) -> RunSummary:
    """One run by its id, without its request and response bodies; UnknownNameError if there is none."""
    row = conn.execute(_select(_SUMMARY_COLUMNS).where(_R.run_id == run_id)).first()
    if row is None:
        raise UnknownNameError(f"no run {run_id!r}")
    return _summary(row)


def list_run_summaries(conn: Connection, conversation_id: str, *, limit: int = 100) -> tuple[RunSummary, ...]:
    """A conversation's newest runs, without their request and response bodies."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidQueryError(f"limit must be between 1 and {MAX_PAGE}")
    stmt = _select(_SUMMARY_COLUMNS).where(_C.conversation_id == conversation_id)
    return tuple(_summary(r) for r in conn.execute(stmt.order_by(_R.started_at.desc(), _R.id.desc()).limit(limit)))


def get_run(conn: Connection, run_id: str) -> RunView:
    """One run by its id; UnknownNameError if there is none."""
    row = conn.execute(_select().where(_R.run_id == run_id)).first()
    if row is None:
        raise UnknownNameError(f"no run {run_id!r}")
    return _view(row)


def run_by_key(conn: Connection, idempotency_key: str) -> RunView | None:
    """The run recorded under an idempotency key, or None."""
    row = conn.execute(_select().where(_R.idempotency_key == idempotency_key)).first()
    return None if row is None else _view(row)


def start_run(conn: Connection, new: NewRun) -> RunView:
    """Record a run as started (status ``running``); with a known idempotency key, return that run instead.

    Whether this call created the run: ``run.started_at`` alone cannot tell, so use
    :func:`claim_run` when it matters (the dashboard sends to the provider only then).
    """
    return claim_run(conn, new)[0]


def claim_run(conn: Connection, new: NewRun) -> tuple[RunView, bool]:
    """As :func:`start_run`, and True when this call recorded the run (False: the key was already taken).

    The key column is unique and the insert does nothing on a taken key, so of two concurrent claims one
    inserts and the other gets that run: on SQLite the write lock serialises them; on PostgreSQL the second
    insert waits for the first's transaction and, once it commits, reads its run.
    """
    statements = _statements(backend_of(conn))
    started = now_ms() if new.started_at is None else new.started_at
    row = conn.execute(
        statements.insert,
        {
            "of_conversation": new.conversation_id,
            "run_id": uuid.uuid4().hex,
            "idempotency_key": new.idempotency_key,
            "up_to_msg_id": new.up_to_msg_id,
            "provider": new.provider,
            "model": new.model,
            "status": "running",
            "started_at": started,
            "request_body": new.request_body,
            "started_by": new.started_by,
        },
    ).first()
    if row is None:  # the key is taken, by a committed run (runs are never deleted), or there is no such conversation
        existing = run_by_key(conn, new.idempotency_key) if new.idempotency_key is not None else None
        if existing is None:
            raise UnknownNameError(f"no conversation {new.conversation_id!r}")
        return existing, False
    if statements.count_run is not None:
        conn.execute(statements.count_run, {"conversation_pk": row.conversation_pk, "started_at": started})
    return _view(row, conversation_id=new.conversation_id, request_body=new.request_body), True


def claim_writing(backend: Backend) -> Callable[[Engine], AbstractContextManager[Connection]]:
    """How :func:`claim_run` writes: one statement where the backend writes in CTEs (see ``_statements``)."""
    return one_statement_write if backend.writes_in_ctes else write_transaction


class RunEnding(TypedDict, total=False):
    """How a run ended, as :func:`finish_run` takes it: the status, and what came with it."""

    status: Required[RunStatus]
    response_body: dict[str, Any] | None
    error: str | None
    usage: TokenUsage | None
    finished_at: int | None
    reply: dict[str, Any] | None
    request_body: dict[str, Any] | None


def finish_run(
    conn: Connection,
    run_id: str,
    *,
    status: RunStatus,
    response_body: dict[str, Any] | None = None,
    error: str | None = None,
    usage: TokenUsage | None = None,
    finished_at: int | None = None,
    reply: dict[str, Any] | None = None,
    request_body: dict[str, Any] | None = None,
) -> RunView:
    """Record how a run ended: its status, the response or the error, token usage, the parsed reply; latency follows.

    ``request_body``: the body the run was started with, when the caller holds it; it is then not read back
    (a long trace's body is megabytes).
    """
    if status not in RUN_STATUSES or status == "running":
        raise InvalidQueryError(f"a run ends as one of: {', '.join(s for s in RUN_STATUSES if s != 'running')}")
    usage = usage or TokenUsage()
    statements = _statements(backend_of(conn))
    row = conn.execute(
        statements.finish if request_body is None else statements.finish_without_body,
        {
            "ended_run_id": run_id,
            "status": status,
            "response_body": response_body,
            "error": error,
            "finished_at": now_ms() if finished_at is None else finished_at,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "total_tokens": usage.total_tokens,
            "usage": usage.raw,
            "reply": reply,
        },
    ).first()
    if row is None:
        raise UnknownNameError(f"no run {run_id!r}")
    return _view(row) if request_body is None else _view(row, request_body=request_body)


@dataclass(frozen=True, slots=True)
class _Statements:
    """The statements every replay runs, built once per dialect: building one costs more than running it."""

    insert: Any
    """``INSERT INTO runs ... SELECT`` the conversation by its id, nothing on a taken key; the new row, bodies aside.
    On PostgreSQL it also counts the run in its conversation, in the same statement."""
    count_run: Any | None
    """The conversation's run count and last activity, for a run just started (SQLite: a statement of its own)."""
    finish: Any
    """A run's end, returning its whole row and its conversation's id."""
    finish_without_body: Any
    """As ``finish``, without the request body (the caller holds it)."""


@functools.cache
def _statements(backend: Backend) -> _Statements:
    given = [_R[name] for name in _STARTED_COLUMNS]
    insert = (
        backend.insert(RUNS)
        .from_select(
            [*given, _R.conversation_pk],
            select(*(bindparam(c.name, type_=c.type) for c in given), _C.id).where(
                _C.conversation_id == bindparam("of_conversation")
            ),
        )
        .on_conflict_do_nothing(index_elements=[_R.idempotency_key])
        .returning(*(c for c in RUNS.c if c.name != "request_body"))
    )
    ended = {name: bindparam(name, type_=_R[name].type) for name in _ENDED_COLUMNS}
    end = (
        update(RUNS)
        .where(_R.run_id == bindparam("ended_run_id"))
        .values(**ended, latency_ms=backend.greatest(ended["finished_at"] - _R.started_at, 0))
    )
    finish = end.returning(*RUNS.c, _conversation_id_of_run())
    finish_without_body = end.returning(*(c for c in RUNS.c if c.name != "request_body"), _conversation_id_of_run())
    started: Any = bindparam("started_at")
    count_run = update(CONVERSATIONS).values(
        runs=_C.runs + literal_column("1"),
        last_activity=func.coalesce(backend.greatest(_C.last_activity, started), started),
    )
    # One round trip where the count can be a data-modifying CTE beside the insert it reads. No value the
    # statement binds may be named after a column of conversations: SQLAlchemy would add it to the UPDATE's SET.
    if backend.writes_in_ctes:
        inserted = insert.cte("inserted")
        counted = count_run.where(_C.id == inserted.c.conversation_pk).cte("counted")
        return _Statements(select(inserted).add_cte(counted), None, finish, finish_without_body)
    return _Statements(insert, count_run.where(_C.id == bindparam("conversation_pk")), finish, finish_without_body)


_STARTED_COLUMNS = (
    "run_id", "idempotency_key", "up_to_msg_id", "provider", "model", "status", "started_at", "request_body",
    "started_by",
)  # fmt: skip
_ENDED_COLUMNS = (
    "status", "response_body", "error", "finished_at",
    "input_tokens", "output_tokens", "total_tokens", "usage", "reply",
)  # fmt: skip


def _conversation_id_of_run() -> Any:
    """The updated run's conversation id, for a RETURNING clause (a view carries it)."""
    return select(_C.conversation_id).where(_C.id == _R.conversation_pk).scalar_subquery().label("conversation_id")


def list_runs(
    conn: Connection, *, conversation_id: str | None = None, limit: int = 100, cursor: str | None = None
) -> tuple[tuple[RunView, ...], str | None]:
    """Runs, newest first, optionally of one conversation; returns the page and the next page's cursor."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidQueryError(f"limit must be between 1 and {MAX_PAGE}")
    stmt = _select()
    if conversation_id is not None:
        stmt = stmt.where(_C.conversation_id == conversation_id)
    if cursor is not None:
        value, pk = decode_cursor(cursor, "runs")
        stmt = stmt.where(tuple_(_R.started_at, _R.id) < tuple_(value, pk))
    rows = conn.execute(stmt.order_by(_R.started_at.desc(), _R.id.desc()).limit(limit + 1)).all()
    more = len(rows) > limit
    next_cursor = encode_cursor("runs", rows[limit - 1].started_at, rows[limit - 1].id) if more else None
    return tuple(_view(r) for r in rows[:limit]), next_cursor
