"""Suites in the store: SQL over the ``suites``, ``suite_members``, ``suite_runs`` and ``suite_run_items`` tables.

Each function takes a connection inside the caller's transaction (``core.suites.api`` opens them).
An item's attempts (claimed, recorded, given up) are ``core.suites.items``.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from typing import Any

from sqlalchemy import Connection, and_, func, insert, select, update

from core.errors import MisuseError, UnknownNameError
from core.messages.base import now_ms
from core.store.tables import CONVERSATIONS, SUITE_MEMBERS, SUITE_RUN_ITEMS, SUITE_RUNS, SUITES
from core.suites.items import finish_run_if_done as finish_run_of_pk_if_done
from core.suites.views import (
    DONE,
    ItemView,
    Mode,
    Progress,
    SuiteRunView,
    SuiteSummary,
    SuiteView,
)

_S = SUITES.c
_M = SUITE_MEMBERS.c
_R = SUITE_RUNS.c
_I = SUITE_RUN_ITEMS.c
_C = CONVERSATIONS.c
MAX_NAME_CHARS = 200


def create_suite(conn: Connection, name: str, filter: dict[str, Any], conversation_ids: list[str]) -> SuiteView:
    """Save a suite of these conversations (in this order); MisuseError for a bad or taken name."""
    if not name.strip() or len(name) > MAX_NAME_CHARS or name != name.strip():
        raise MisuseError(f"a suite name is 1 to {MAX_NAME_CHARS} characters, without spaces around it")
    if conn.execute(select(_S.id).where(_S.name == name)).first() is not None:
        raise MisuseError(f"a suite named {name!r} exists already")
    pks = dict(conn.execute(select(_C.conversation_id, _C.id).where(_C.conversation_id.in_(conversation_ids))).all())
    missing = [c for c in conversation_ids if c not in pks]
    if missing:
        raise UnknownNameError(f"no conversation {missing[0]!r}")
    suite_pk = conn.execute(
        insert(SUITES).values(name=name, filter=filter, created_at=now_ms()).returning(_S.id)
    ).scalar_one()
    if conversation_ids:
        conn.execute(
            insert(SUITE_MEMBERS),
            [{"suite_pk": suite_pk, "position": i, "conversation_pk": pks[c]} for i, c in enumerate(conversation_ids)],
        )
    return get_suite(conn, name)


def get_suite(conn: Connection, name: str) -> SuiteView:
    """A suite and its conversations; UnknownNameError if there is none of that name."""
    row = conn.execute(select(SUITES).where(_S.name == name)).first()
    if row is None:
        raise UnknownNameError(f"no suite {name!r}")
    members = conn.execute(
        select(_C.conversation_id)
        .join(SUITE_MEMBERS, _M.conversation_pk == _C.id)
        .where(_M.suite_pk == row.id)
        .order_by(_M.position)
    ).scalars()
    return SuiteView(name=row.name, filter=row.filter, created_at=row.created_at, conversations=tuple(members))


def list_suites(conn: Connection) -> tuple[SuiteSummary, ...]:
    """Every suite, by name, with its member and run counts and its newest run."""
    members = select(func.count()).where(_M.suite_pk == _S.id).scalar_subquery()
    runs = select(func.count()).where(_R.suite_pk == _S.id).scalar_subquery()
    last = select(_R.run_id).where(_R.suite_pk == _S.id).order_by(_R.created_at.desc(), _R.id.desc()).limit(1)
    rows = conn.execute(
        select(_S.name, _S.filter, _S.created_at, members.label("m"), runs.label("r"), last.scalar_subquery())
        .order_by(_S.name)
    ).all()  # fmt: skip
    return tuple(SuiteSummary(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows)


def create_run(
    conn: Connection,
    suite: str,
    *,
    provider: str,
    model: str,
    mode: Mode,
    concurrency: int,
    max_cost: float | None,
    baseline_run_id: str | None,
    idempotency_key: str | None = None,
    comparison: str | None = None,
) -> SuiteRunView:
    """Record a suite run with one ``pending`` item per conversation of the suite."""
    suite_pk = conn.execute(select(_S.id).where(_S.name == suite)).scalar()
    if suite_pk is None:
        raise UnknownNameError(f"no suite {suite!r}")
    baseline_pk = None if baseline_run_id is None else _run_pk(conn, baseline_run_id)
    run_id = uuid.uuid4().hex
    run_pk = conn.execute(
        insert(SUITE_RUNS)
        .values(
            run_id=run_id, suite_pk=suite_pk, provider=provider, model=model, mode=mode, concurrency=concurrency,
            max_cost=max_cost, baseline_pk=baseline_pk, status="running", created_at=now_ms(),
            idempotency_key=idempotency_key, comparison=comparison,
        )
        .returning(_R.id)
    ).scalar_one()  # fmt: skip
    members = conn.execute(select(_M.position, _M.conversation_pk).where(_M.suite_pk == suite_pk)).all()
    if members:
        conn.execute(
            insert(SUITE_RUN_ITEMS),
            [
                {"suite_run_pk": run_pk, "conversation_pk": c, "position": p, "outcome": "pending", "attempt": 0}
                for p, c in members
            ],
        )
    else:
        conn.execute(update(SUITE_RUNS).where(_R.id == run_pk).values(status="finished", finished_at=now_ms()))
    return get_run(conn, run_id)


def run_by_key(conn: Connection, idempotency_key: str) -> SuiteRunView | None:
    """The suite run recorded under ``idempotency_key`` (without its items), or None."""
    run_id = conn.execute(select(_R.run_id).where(_R.idempotency_key == idempotency_key)).scalar()
    return None if run_id is None else get_run(conn, run_id, items=False)


def get_run(conn: Connection, run_id: str, *, items: bool = True) -> SuiteRunView:
    """A suite run, with its items in suite order unless ``items`` is off; UnknownNameError if there is none."""
    row = conn.execute(_run_select().where(_R.run_id == run_id)).first()
    if row is None:
        raise UnknownNameError(f"no suite run {run_id!r}")
    return _run_view(conn, row, items=items)


def runs_of(conn: Connection, suite: str) -> tuple[SuiteRunView, ...]:
    """A suite's runs, newest first, without their items."""
    rows = conn.execute(_run_select().where(_S.name == suite).order_by(_R.created_at.desc(), _R.id.desc())).all()
    return tuple(_run_view(conn, r, items=False) for r in rows)


def previous_finished(conn: Connection, run_id: str) -> str | None:
    """The newest finished run of the same suite created before ``run_id`` (``--baseline last``), or None."""
    row = conn.execute(select(_R.id, _R.suite_pk, _R.created_at).where(_R.run_id == run_id)).first()
    if row is None:
        raise UnknownNameError(f"no suite run {run_id!r}")
    earlier = and_(
        _R.suite_pk == row.suite_pk, _R.status == "finished", _R.id != row.id, _R.created_at <= row.created_at
    )
    found = conn.execute(select(_R.run_id).where(earlier).order_by(_R.created_at.desc(), _R.id.desc()).limit(1))
    return found.scalar()


def _newest_run(conn: Connection, suite: str, status: str, *where: Any) -> str | None:
    stmt = (
        select(_R.run_id)
        .join(SUITES, _S.id == _R.suite_pk)
        .where(_S.name == suite, _R.status == status, *where)
        .order_by(_R.created_at.desc(), _R.id.desc())
        .limit(1)
    )
    return conn.execute(stmt).scalar()


def last_finished(conn: Connection, suite: str, *, mode: str, comparison: str) -> str | None:
    """The newest finished run of a suite made in ``mode`` with ``comparison``, or None."""
    return _newest_run(conn, suite, "finished", _R.mode == mode, _R.comparison == comparison)


def unfinished(conn: Connection, suite: str) -> str | None:
    """The newest run of a suite that is still ``running``, or None."""
    return _newest_run(conn, suite, "running")


def progress(conn: Connection, run_id: str) -> Progress:
    """Item counts by outcome and the cost recorded so far, in one statement (a suite run's watcher polls it)."""
    rows = conn.execute(
        select(_I.outcome, func.count(), func.sum(_I.cost_usd))
        .where(_I.suite_run_pk == select(_R.id).where(_R.run_id == run_id).scalar_subquery())
        .group_by(_I.outcome)
    ).all()
    if not rows:
        _run_pk(conn, run_id)  # UnknownNameError for a run that does not exist; else it has no items
    return Progress(counts={o: n for o, n, _ in rows}, cost_usd=float(sum(cost or 0.0 for _, _, cost in rows)))


def open_items(conn: Connection, run_id: str) -> list[int]:
    """The items of a run that have no outcome yet (pending or interrupted while running), in suite order."""
    pk = _run_pk(conn, run_id)
    stmt = select(_I.id).where(_I.suite_run_pk == pk, _I.outcome.in_(("pending", "running"))).order_by(_I.position)
    return list(conn.execute(stmt).scalars())


def finish_run_if_done(conn: Connection, run_id: str) -> None:
    """:func:`core.suites.items.finish_run_if_done` for a run named by its id."""
    finish_run_of_pk_if_done(conn, _run_pk(conn, run_id))


def _run_pk(conn: Connection, run_id: str) -> int:
    pk = conn.execute(select(_R.id).where(_R.run_id == run_id)).scalar()
    if pk is None:
        raise UnknownNameError(f"no suite run {run_id!r}")
    return int(pk)


def _run_select() -> Any:
    baseline = SUITE_RUNS.alias("baseline")
    return (
        select(*SUITE_RUNS.c, _S.name.label("suite"), baseline.c.run_id.label("baseline_run_id"))
        .join(SUITES, _S.id == _R.suite_pk)
        .outerjoin(baseline, baseline.c.id == _R.baseline_pk)
    )


def items_done(conn: Connection, run_id: str, exclude: Collection[int]) -> tuple[ItemView, ...]:
    """Items of a run with an outcome, but those in ``exclude``: only their ids are read for the others."""
    run_pk = select(_R.id).where(_R.run_id == run_id).scalar_subquery()
    done = conn.execute(select(_I.id).where(_I.suite_run_pk == run_pk, _I.outcome.in_(DONE))).scalars()
    new = [i for i in done if i not in exclude]
    return _items(conn, _I.id.in_(new)) if new else ()


def _items(conn: Connection, *where: Any) -> tuple[ItemView, ...]:
    rows = conn.execute(
        select(*SUITE_RUN_ITEMS.c, _C.conversation_id)
        .join(CONVERSATIONS, _C.id == _I.conversation_pk)
        .where(*where)
        .order_by(_I.position)
    ).all()
    return tuple(
        ItemView(
            item_pk=r.id, conversation_id=r.conversation_id, position=r.position, outcome=r.outcome,
            attempt=r.attempt, diverged_step=r.diverged_step, diverged_at=r.diverged_at, reason=r.reason,
            error=r.error, run_id=r.run_id, input_tokens=r.input_tokens, output_tokens=r.output_tokens,
            cost_usd=r.cost_usd, cost_note=r.cost_note, started_at=r.started_at, finished_at=r.finished_at,
            wall_ms=r.wall_ms, detail=r.detail,
        )
        for r in rows
    )  # fmt: skip


def _run_view(conn: Connection, row: Any, *, items: bool) -> SuiteRunView:
    found = _items(conn, _I.suite_run_pk == row.id) if items else ()
    return SuiteRunView(
        run_id=row.run_id, suite=row.suite, provider=row.provider, model=row.model, mode=row.mode,
        concurrency=row.concurrency, max_cost=row.max_cost, baseline_run_id=row.baseline_run_id, status=row.status,
        created_at=row.created_at, finished_at=row.finished_at, items=found, comparison=row.comparison,
    )  # fmt: skip
