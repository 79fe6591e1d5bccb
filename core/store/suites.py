"""Suites in the store: the ``suites``, ``suite_members``, ``suite_runs`` and ``suite_run_items`` tables.

Each public function opens its own transaction, so what it reads or writes is chosen here once: a read
transaction for reads (one snapshot), a write transaction for writes. An item's attempts (claimed,
recorded, given up) and a run's cost cap are ``core.store.suite_items``.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, func, insert, select

from core.errors import MisuseError, UnknownNameError
from core.messages.base import now_ms
from core.store.engine import claim_by_key, read_transaction, write_transaction
from core.store.suite_items import finish_run_if_done as finish_run_of_pk_if_done
from core.store.suite_views import DONE, ItemView, Mode, Progress, SuiteRunView, SuiteSummary, SuiteView
from core.store.tables import CONVERSATIONS, SUITE_MEMBERS, SUITE_RUN_ITEMS, SUITE_RUNS, SUITES

_S = SUITES.c
_M = SUITE_MEMBERS.c
_R = SUITE_RUNS.c
_I = SUITE_RUN_ITEMS.c
_C = CONVERSATIONS.c
MAX_NAME_CHARS = 200
BASELINE_LAST = "last"
"""``--baseline last``: the newest finished run of the same suite, mode and comparison before this one."""


def create_suite(engine: Engine, name: str, filter: dict[str, Any], conversation_ids: list[str]) -> SuiteView:
    """Save a suite of these conversations (in this order); MisuseError for a bad or taken name."""
    if not name.strip() or len(name) > MAX_NAME_CHARS or name != name.strip():
        raise MisuseError(f"a suite name is 1 to {MAX_NAME_CHARS} characters, without spaces around it")
    with write_transaction(engine) as conn:
        if conn.execute(select(_S.id).where(_S.name == name)).first() is not None:
            raise MisuseError(f"a suite named {name!r} exists already")
        found = select(_C.conversation_id, _C.id).where(_C.conversation_id.in_(conversation_ids))
        pks = dict(conn.execute(found).all())
        missing = [c for c in conversation_ids if c not in pks]
        if missing:
            raise UnknownNameError(f"no conversation {missing[0]!r}")
        suite_pk = conn.execute(
            insert(SUITES).values(name=name, filter=filter, created_at=now_ms()).returning(_S.id)
        ).scalar_one()
        if conversation_ids:
            members = [
                {"suite_pk": suite_pk, "position": i, "conversation_pk": pks[c]} for i, c in enumerate(conversation_ids)
            ]
            conn.execute(insert(SUITE_MEMBERS), members)
        return _get_suite(conn, name)


def get_suite(engine: Engine, name: str) -> SuiteView:
    """A suite and its conversations; UnknownNameError if there is none of that name."""
    with read_transaction(engine) as conn:
        return _get_suite(conn, name)


def _get_suite(conn: Connection, name: str) -> SuiteView:
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


def list_suites(engine: Engine) -> tuple[SuiteSummary, ...]:
    """Every suite, by name, with its member and run counts and its newest run."""
    members = select(func.count()).where(_M.suite_pk == _S.id).scalar_subquery()
    runs = select(func.count()).where(_R.suite_pk == _S.id).scalar_subquery()
    last = select(_R.run_id).where(_R.suite_pk == _S.id).order_by(_R.created_at.desc(), _R.id.desc()).limit(1)
    with read_transaction(engine) as conn:
        rows = conn.execute(
            select(_S.name, _S.filter, _S.created_at, members.label("m"), runs.label("r"), last.scalar_subquery())
            .order_by(_S.name)
        ).all()  # fmt: skip
    return tuple(SuiteSummary(r[0], r[1], r[2], r[3], r[4], r[5]) for r in rows)


@dataclass(frozen=True, slots=True)
class NewSuiteRun:
    """A suite run to record: its suite, what it replays against, and how its outcomes are judged."""

    suite: str
    provider: str
    model: str
    mode: Mode
    comparison: str
    concurrency: int
    max_cost: float | None
    idempotency_key: str | None = None
    started_by: str | None = None
    """The signed-in account that started it; None on an open dashboard or from the CLI."""


def claim_run(
    engine: Engine, new: NewSuiteRun, *, baseline: str | None, cross_baseline: bool
) -> tuple[SuiteRunView, bool]:
    """Record a suite run with one ``pending`` item per conversation of the suite; True when this call recorded it.

    A known ``idempotency_key`` returns the run it names and False: the key column is unique, so two
    processes posting one form record one run (the loser of the race on the constraint reads the
    winner's). ``baseline`` is a suite run id or :data:`BASELINE_LAST`; a baseline made in another mode
    or with another comparison is refused unless ``cross_baseline`` (then the report labels it).
    """

    def claim(conn: Connection) -> tuple[SuiteRunView, bool]:
        known = None if new.idempotency_key is None else _run_by_key(conn, new.idempotency_key)
        if known is not None:
            return known, False
        if baseline == BASELINE_LAST:
            baseline_id = _newest_run(conn, new.suite, "finished", _R.mode == new.mode, _R.comparison == new.comparison)
            if baseline_id is None:
                _get_suite(conn, new.suite)
                raise MisuseError(
                    f"--baseline last: suite {new.suite!r} has no finished run in mode {new.mode} "
                    f"compared by {new.comparison} yet"
                )
        else:
            baseline_id = baseline
            if baseline is not None and not cross_baseline:
                _same_kind(_get_run(conn, baseline, items=False), new)
        return _create_run(conn, new, baseline_id), True

    return claim_by_key(engine, claim, new.idempotency_key, _run_by_key)


def _same_kind(baseline: SuiteRunView, new: NewSuiteRun) -> None:
    """MisuseError (one line) when a chosen baseline was made in another mode or with another comparison."""
    if baseline.mode == new.mode and baseline.comparison == new.comparison:
        return
    raise MisuseError(
        f"baseline {baseline.run_id} is mode {baseline.mode} compared by {baseline.comparison_text}, this run mode "
        f"{new.mode} compared by {new.comparison}: outcomes compare only within one mode and comparison "
        "(--cross-baseline compares them anyway, labelled)"
    )


def _create_run(conn: Connection, new: NewSuiteRun, baseline_run_id: str | None) -> SuiteRunView:
    suite_pk = conn.execute(select(_S.id).where(_S.name == new.suite)).scalar()
    if suite_pk is None:
        raise UnknownNameError(f"no suite {new.suite!r}")
    baseline_pk = None if baseline_run_id is None else _run_pk(conn, baseline_run_id)
    run_id = uuid.uuid4().hex
    run_pk = conn.execute(
        insert(SUITE_RUNS)
        .values(
            run_id=run_id, suite_pk=suite_pk, provider=new.provider, model=new.model, mode=new.mode,
            concurrency=new.concurrency, max_cost=new.max_cost, baseline_pk=baseline_pk, status="running",
            created_at=now_ms(), idempotency_key=new.idempotency_key, comparison=new.comparison,
            started_by=new.started_by,
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
    else:  # nothing to replay: finished at once, and audited as any finished run
        finish_run_of_pk_if_done(conn, run_pk)
    return _get_run(conn, run_id)


def _run_by_key(conn: Connection, idempotency_key: str) -> SuiteRunView | None:
    """The suite run recorded under ``idempotency_key`` (without its items), or None."""
    run_id = conn.execute(select(_R.run_id).where(_R.idempotency_key == idempotency_key)).scalar()
    return None if run_id is None else _get_run(conn, run_id, items=False)


def get_run(engine: Engine, run_id: str) -> SuiteRunView:
    """A suite run with its items in suite order; UnknownNameError if there is none."""
    with read_transaction(engine) as conn:
        return _get_run(conn, run_id)


def run_and_baseline(engine: Engine, run_id: str) -> tuple[SuiteRunView, SuiteRunView | None]:
    """A suite run and the baseline it was started with (None without one), with their items, in one snapshot."""
    with read_transaction(engine) as conn:
        run = _get_run(conn, run_id)
        return run, None if run.baseline_run_id is None else _get_run(conn, run.baseline_run_id)


def _get_run(conn: Connection, run_id: str, *, items: bool = True) -> SuiteRunView:
    row = conn.execute(_run_select().where(_R.run_id == run_id)).first()
    if row is None:
        raise UnknownNameError(f"no suite run {run_id!r}")
    return _run_view(conn, row, items=items)


def runs_of(engine: Engine, suite: str) -> tuple[SuiteRunView, ...]:
    """A suite's runs, newest first, without their items; UnknownNameError for an unknown suite."""
    with read_transaction(engine) as conn:
        _get_suite(conn, suite)
        rows = conn.execute(_run_select().where(_S.name == suite).order_by(_R.created_at.desc(), _R.id.desc())).all()
        return tuple(_run_view(conn, r, items=False) for r in rows)


def _newest_run(conn: Connection, suite: str, status: str, *where: Any) -> str | None:
    stmt = (
        select(_R.run_id)
        .join(SUITES, _S.id == _R.suite_pk)
        .where(_S.name == suite, _R.status == status, *where)
        .order_by(_R.created_at.desc(), _R.id.desc())
        .limit(1)
    )
    return conn.execute(stmt).scalar()


def unfinished(engine: Engine, suite: str) -> str | None:
    """The newest run of a suite that is still ``running``, or None; UnknownNameError for an unknown suite."""
    with read_transaction(engine) as conn:
        _get_suite(conn, suite)
        return _newest_run(conn, suite, "running")


def progress(engine: Engine, run_id: str) -> Progress:
    """Item counts by outcome and the cost recorded so far, in one statement (a suite run's watcher polls it)."""
    with read_transaction(engine) as conn:
        rows = conn.execute(
            select(_I.outcome, func.count(), func.sum(_I.cost_usd))
            .where(_I.suite_run_pk == select(_R.id).where(_R.run_id == run_id).scalar_subquery())
            .group_by(_I.outcome)
        ).all()
        if not rows:
            _run_pk(conn, run_id)  # UnknownNameError for a run that does not exist; else it has no items
    return Progress(counts={o: n for o, n, _ in rows}, cost_usd=float(sum(cost or 0.0 for _, _, cost in rows)))


def open_items(engine: Engine, run_id: str) -> list[int]:
    """The items of a run that have no outcome yet (pending or interrupted while running), in suite order."""
    with read_transaction(engine) as conn:
        pk = _run_pk(conn, run_id)
        open_ = _I.outcome.in_(("pending", "running"))
        return list(conn.execute(select(_I.id).where(_I.suite_run_pk == pk, open_).order_by(_I.position)).scalars())


def finish_run_if_done(engine: Engine, run_id: str) -> None:
    """Mark the run finished when every item has an outcome (a worker may have died just before doing it)."""
    with write_transaction(engine) as conn:
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


def items_done(engine: Engine, run_id: str, exclude: Collection[int]) -> tuple[ItemView, ...]:
    """Items of a run with an outcome, but those in ``exclude``: only their ids are read for the others."""
    run_pk = select(_R.id).where(_R.run_id == run_id).scalar_subquery()
    with read_transaction(engine) as conn:
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
        started_by=row.started_by,
    )  # fmt: skip
