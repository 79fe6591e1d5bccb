"""Suites in the store: SQL over the ``suites``, ``suite_members``, ``suite_runs`` and ``suite_run_items`` tables.

Each function takes a connection inside the caller's transaction (``core.suites.api`` opens them).
An item moves ``pending`` -> ``running`` -> one outcome of ``DONE``. Claiming an item counts an
attempt, and only the attempt that holds the item may record its outcome, so a job delivered
twice (a worker presumed dead that was not) records once. A suite run is ``finished`` when its
last item has an outcome, set by whoever records that outcome.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, and_, exists, func, insert, select, update

from core.errors import MisuseError, UnknownNameError
from core.messages.base import now_ms
from core.store.tables import CONVERSATIONS, RUNS, STEP_RUNS, SUITE_MEMBERS, SUITE_RUN_ITEMS, SUITE_RUNS, SUITES
from core.suites.views import (
    DONE,
    ItemView,
    Mode,
    Outcome,
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
            idempotency_key=idempotency_key,
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


def _newest_run(conn: Connection, suite: str, status: str) -> str | None:
    stmt = (
        select(_R.run_id)
        .join(SUITES, _S.id == _R.suite_pk)
        .where(_S.name == suite, _R.status == status)
        .order_by(_R.created_at.desc(), _R.id.desc())
        .limit(1)
    )
    return conn.execute(stmt).scalar()


def last_finished(conn: Connection, suite: str) -> str | None:
    """The newest finished run of a suite, or None."""
    return _newest_run(conn, suite, "finished")


def unfinished(conn: Connection, suite: str) -> str | None:
    """The newest run of a suite that is still ``running``, or None."""
    return _newest_run(conn, suite, "running")


def progress(conn: Connection, run_id: str) -> Progress:
    """Item counts by outcome and the cost recorded so far."""
    pk = _run_pk(conn, run_id)
    rows = conn.execute(select(_I.outcome, func.count()).where(_I.suite_run_pk == pk).group_by(_I.outcome)).all()
    return Progress(counts={o: n for o, n in rows}, cost_usd=_spent(conn, pk))


def open_items(conn: Connection, run_id: str) -> list[int]:
    """The items of a run that have no outcome yet (pending or interrupted while running), in suite order."""
    pk = _run_pk(conn, run_id)
    stmt = select(_I.id).where(_I.suite_run_pk == pk, _I.outcome.in_(("pending", "running"))).order_by(_I.position)
    return list(conn.execute(stmt).scalars())


@dataclass(frozen=True, slots=True)
class Claim:
    """An item taken by one attempt: what to replay, and the key of the replay an interrupted attempt started."""

    item_pk: int
    attempt: int
    suite_run_pk: int
    started_at: int
    conversation_id: str
    provider: str
    model: str
    mode: Mode
    replay_key: str
    """The idempotency key this attempt's replay is recorded under (a run's or a step run's)."""
    interrupted_key: str | None
    """The key of the replay the attempt before this one started, when that attempt never ended."""
    max_cost: float | None
    """The run's cost cap (set when the run is created, never changed)."""


def replay_key(suite_run_id: str, item_pk: int, attempt: int) -> str:
    """The idempotency key of an attempt's replay: it links the item to its run before the outcome is known."""
    return f"suite-{suite_run_id}-{item_pk}-{attempt}"


def claim_item(conn: Connection, item_pk: int) -> Claim | None:
    """Take an item for one attempt; None when it has an outcome already or the cost cap cancels it here.

    The caller runs :func:`finish_run_if_done` after this transaction when it gets None.
    """
    row = conn.execute(
        select(
            _I.outcome, _I.attempt, _I.suite_run_pk, _R.run_id, _R.provider, _R.model, _R.mode, _R.max_cost,
            _C.conversation_id,
        )
        .join(SUITE_RUNS, _R.id == _I.suite_run_pk)
        .join(CONVERSATIONS, _C.id == _I.conversation_pk)
        .where(_I.id == item_pk)
    ).first()  # fmt: skip
    if row is None or row.outcome in DONE:
        return None
    now = now_ms()
    if row.max_cost is not None and _spent(conn, row.suite_run_pk) >= row.max_cost:
        _lock_run(conn, row.suite_run_pk)
        _cancel_pending(conn, row.suite_run_pk, row.max_cost, item_pk)
        return None
    attempt = conn.execute(
        update(SUITE_RUN_ITEMS)
        .where(_I.id == item_pk, _I.outcome.in_(("pending", "running")))
        .values(outcome="running", attempt=_I.attempt + 1, started_at=now, run_id=None)
        .returning(_I.attempt)
    ).scalar()
    if attempt is None:
        return None
    interrupted = replay_key(row.run_id, item_pk, row.attempt) if row.outcome == "running" else None
    return Claim(
        item_pk, attempt, row.suite_run_pk, now, row.conversation_id, row.provider, row.model, row.mode,
        replay_key(row.run_id, item_pk, attempt), interrupted, row.max_cost,
    )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Spend:
    """What an attempt's replay used: tokens, and the cost (None with a note when it is not known)."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    cost_note: str | None = None


@dataclass(frozen=True, slots=True)
class ItemResult:
    """How an attempt ended."""

    outcome: Outcome
    run_id: str | None = None
    diverged_step: int | None = None
    diverged_at: str | None = None
    reason: str | None = None
    error: str | None = None
    spend: Spend = Spend()


def finish_item(conn: Connection, claim: Claim, result: ItemResult) -> bool:
    """Record an attempt's outcome; False (nothing written) when another attempt holds the item now.

    The run is not finished here: :func:`finish_run_if_done` does that once this transaction has committed.
    """
    if result.outcome not in DONE:
        raise MisuseError(f"an item ends as one of: {', '.join(DONE)}")
    run_pk, cap = claim.suite_run_pk, claim.max_cost
    if cap is not None:
        _lock_run(conn, run_pk)  # the spend read below includes every outcome recorded before this one
    now = now_ms()
    written = conn.execute(
        update(SUITE_RUN_ITEMS)
        .where(_mine(claim))
        .values(
            outcome=result.outcome, run_id=result.run_id, diverged_step=result.diverged_step,
            diverged_at=result.diverged_at, reason=result.reason, error=result.error,
            input_tokens=result.spend.input_tokens, output_tokens=result.spend.output_tokens,
            cost_usd=result.spend.cost_usd, cost_note=result.spend.cost_note, finished_at=now,
            wall_ms=max(0, now - claim.started_at),
        )
    )  # fmt: skip
    if written.rowcount != 1:
        return False
    if cap is not None and _spent(conn, run_pk) >= cap:
        _cancel_pending(conn, run_pk, cap, None)
    return True


@dataclass(frozen=True, slots=True)
class Left:
    """The replay a given-up item's last attempt started (to close if it is still running)."""

    mode: Mode
    interrupted_key: str | None


def give_up_item(conn: Connection, item_pk: int, why: str) -> Left | None:
    """An item whose job will not run again: ``failed`` with the queue's reason, unless it has an outcome.

    The caller runs :func:`finish_run_if_done` after this transaction.
    """
    row = conn.execute(
        select(_I.suite_run_pk, _I.outcome, _I.attempt, _R.run_id, _R.mode)
        .join(SUITE_RUNS, _R.id == _I.suite_run_pk)
        .where(_I.id == item_pk, _I.outcome.in_(("pending", "running")))
    ).first()
    if row is None:
        return None
    now = now_ms()
    conn.execute(
        update(SUITE_RUN_ITEMS)
        .where(_I.id == item_pk, _I.outcome.in_(("pending", "running")))
        .values(outcome="failed", reason="gave_up", error=f"the job queue gave up: {why}", finished_at=now)
    )
    return Left(row.mode, replay_key(row.run_id, item_pk, row.attempt) if row.outcome == "running" else None)


def replay_by_key(conn: Connection, mode: str, key: str) -> str | None:
    """The run (``final``) or step run (``steps``) recorded under an attempt's key, or None."""
    table = STEP_RUNS if mode == "steps" else RUNS
    return conn.execute(select(table.c.run_id).where(table.c.idempotency_key == key)).scalar()


def _mine(claim: Claim) -> Any:
    return and_(_I.id == claim.item_pk, _I.attempt == claim.attempt, _I.outcome == "running")


def _spent(conn: Connection, run_pk: int) -> float:
    return float(
        conn.execute(select(func.coalesce(func.sum(_I.cost_usd), 0.0)).where(_I.suite_run_pk == run_pk)).scalar_one()
    )


def _cancel_pending(conn: Connection, run_pk: int, cap: float, item_pk: int | None) -> None:
    """Every item not started yet (and ``item_pk``, about to start) is cancelled: the spend reached the cap."""
    spent = _spent(conn, run_pk)
    waiting = _I.outcome == "pending" if item_pk is None else ((_I.outcome == "pending") | (_I.id == item_pk))
    conn.execute(
        update(SUITE_RUN_ITEMS)
        .where(_I.suite_run_pk == run_pk, waiting, _I.outcome.in_(("pending", "running")))
        .values(
            outcome="cancelled", reason="max_cost", finished_at=now_ms(),
            error=f"not started: {spent:.6f} USD spent reached --max-cost {cap}",
        )
    )  # fmt: skip


def _lock_run(conn: Connection, run_pk: int) -> None:
    """PostgreSQL: hold the run's row while its spend is read against the cost cap, so two items ending at
    once cannot both miss the other's cost and leave the cap passed. SQLite's write lock serialises them
    already; it has no FOR UPDATE."""
    conn.execute(select(_R.id).where(_R.id == run_pk).with_for_update())


def finish_run_if_done(conn: Connection, run_id: str) -> None:
    """Mark the suite run finished when none of its items is pending or running.

    Called in a transaction of its own once an item's outcome (or a cancellation) has committed: of two
    items ending at once, the one whose check starts last sees the other's outcome, so no lock over the
    run has to serialise every item's end. A check made inside the ending transaction could miss the other.
    """
    _finish_if_done(conn, _run_pk(conn, run_id))


def finish_run_of_item_if_done(conn: Connection, item_pk: int) -> None:
    """:func:`finish_run_if_done` for the run an item belongs to, in one statement (after the item's end)."""
    _finish_if_done(conn, select(_I.suite_run_pk).where(_I.id == item_pk).scalar_subquery())


def _finish_if_done(conn: Connection, run_pk: Any) -> None:
    """``run_pk``: the run's row id, or a scalar subquery that reads it."""
    left = exists().where(_I.suite_run_pk == _R.id, _I.outcome.in_(("pending", "running")))
    conn.execute(
        update(SUITE_RUNS)
        .where(_R.id == run_pk, _R.status == "running", ~left)
        .values(status="finished", finished_at=now_ms())
    )


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
    pk = _run_pk(conn, run_id)
    done = conn.execute(select(_I.id).where(_I.suite_run_pk == pk, _I.outcome.in_(DONE))).scalars()
    new = [i for i in done if i not in exclude]
    return _items(conn, _I.suite_run_pk == pk, _I.id.in_(new)) if new else ()


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
            wall_ms=r.wall_ms,
        )
        for r in rows
    )  # fmt: skip


def _run_view(conn: Connection, row: Any, *, items: bool) -> SuiteRunView:
    found = _items(conn, _I.suite_run_pk == row.id) if items else ()
    return SuiteRunView(
        run_id=row.run_id, suite=row.suite, provider=row.provider, model=row.model, mode=row.mode,
        concurrency=row.concurrency, max_cost=row.max_cost, baseline_run_id=row.baseline_run_id, status=row.status,
        created_at=row.created_at, finished_at=row.finished_at, items=found,
    )  # fmt: skip
