"""A suite run's items in the store: an attempt claims one, records its outcome, or the queue gives it up.

Each public function chooses its transaction: an attempt's claim and its outcome are one statement
each in the common case (no cost cap). With a cost cap, an item's ``cost_usd`` is its share of the
run's budget while it runs (:class:`SuiteBudget`): each provider call holds its estimate there before
it is sent and settles to its real cost after, so the run's spend read by every other item includes
the calls in flight. An item moves ``pending`` -> ``running`` -> one outcome of ``DONE``. Claiming an
item counts an attempt, and only the attempt that holds the item may record its outcome, so a job
delivered twice (a worker presumed dead that was not) records once. A suite run is ``finished`` when
its last item has an outcome, set by whoever records that outcome.

Every item of a suite run passes through the same few statements, so they are built once
(``_statements``) and run with bound values: building one costs more than running it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, exists, func, select, update

from core.errors import MisuseError
from core.messages.base import now_ms
from core.store.audit import SUITE_RUN_FINISHED, AuditEvent, record_in
from core.store.engine import one_statement_read, one_statement_write, read_transaction, write_transaction
from core.store.suite_views import DONE, Mode, Outcome
from core.store.tables import CONVERSATIONS, RUNS, STEP_RUNS, SUITE_RUN_ITEMS, SUITE_RUNS

_R = SUITE_RUNS.c
_I = SUITE_RUN_ITEMS.c
_C = CONVERSATIONS.c
_OPEN = ("pending", "running")


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
    comparison: str | None = None
    """How the run judges final answers (``core.replay.answers``)."""


def replay_key(suite_run_id: str, item_pk: int, attempt: int) -> str:
    """The idempotency key of an attempt's replay: it links the item to its run before the outcome is known."""
    return f"suite-{suite_run_id}-{item_pk}-{attempt}"


def claim_item(engine: Engine, item_pk: int) -> Claim | None:
    """Take an item for one attempt; None when it has an outcome already or the cost cap cancels it here.

    Without a cost cap the claim is one guarded UPDATE, after a read of what to replay; with one it is
    a transaction that checks the spend first. The caller runs :func:`finish_run_of_item_if_done` when it
    gets None.
    """
    statements = _statements()
    with one_statement_read(engine) as conn:
        row = conn.execute(statements.item, {"item_pk": item_pk}).first()
    if row is None or row.outcome in DONE:
        return None
    now = now_ms()
    if row.max_cost is None:
        with one_statement_write(engine) as conn:
            attempt = conn.execute(statements.claim, {"item_pk": item_pk, "now": now}).scalar()
    else:
        with write_transaction(engine) as conn:
            if _spent(conn, row.suite_run_pk) >= row.max_cost:
                _lock_run(conn, row.suite_run_pk)
                _cancel_pending(conn, row.suite_run_pk, row.max_cost, item_pk)
                return None
            attempt = conn.execute(statements.claim, {"item_pk": item_pk, "now": now}).scalar()
    if attempt is None:  # another attempt recorded its outcome meanwhile
        return None
    # Items never go back to pending, so an attempt before this one that left the item open never ended.
    interrupted = replay_key(row.run_id, item_pk, attempt - 1) if attempt > 1 else None
    return Claim(
        item_pk, attempt, row.suite_run_pk, now, row.conversation_id, row.provider, row.model, row.mode,
        replay_key(row.run_id, item_pk, attempt), interrupted, row.max_cost, row.comparison,
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
    detail: dict[str, Any] | None = None
    """The final answers' comparison, when one was made."""


def finish_item(engine: Engine, claim: Claim, result: ItemResult) -> bool:
    """Record an attempt's outcome; False (nothing written) when another attempt holds the item now.

    Without a cost cap it is one guarded UPDATE; with one, a transaction that also cancels the items
    not started once the spend reaches the cap. The run is not finished here:
    :func:`finish_run_of_item_if_done` does that once this has committed.
    """
    if result.outcome not in DONE:
        raise MisuseError(f"an item ends as one of: {', '.join(DONE)}")
    if claim.max_cost is None:
        with one_statement_write(engine) as conn:
            return _record(conn, claim, result)
    with write_transaction(engine) as conn:
        _lock_run(conn, claim.suite_run_pk)  # the spend read below includes every outcome recorded before this one
        recorded = _record(conn, claim, result, charged=True)
        if recorded and _spent(conn, claim.suite_run_pk) >= claim.max_cost:
            _cancel_pending(conn, claim.suite_run_pk, claim.max_cost, None)
        return recorded


def _record(conn: Connection, claim: Claim, result: ItemResult, *, charged: bool = False) -> bool:
    """``charged``: the item's cost is what its calls settled in the budget (every attempt's), left as it is."""
    now = now_ms()
    values = {
        "item_pk": claim.item_pk, "held_attempt": claim.attempt, "outcome": result.outcome,
        "run_id": result.run_id, "diverged_step": result.diverged_step, "diverged_at": result.diverged_at,
        "reason": result.reason, "error": result.error, "input_tokens": result.spend.input_tokens,
        "output_tokens": result.spend.output_tokens, "cost_note": result.spend.cost_note, "finished_at": now,
        "wall_ms": max(0, now - claim.started_at), "detail": result.detail,
    }  # fmt: skip
    if charged:  # a parameter named after a column would be added to the SET clause
        return conn.execute(_statements().finish_charged, values).rowcount == 1
    return conn.execute(_statements().finish, {**values, "cost_usd": result.spend.cost_usd}).rowcount == 1


class SuiteBudget:
    """A suite run's ``--max-cost`` held in the store, shared by every item and process of the run.

    A hold is added to the item's ``cost_usd`` only if the run's spend (every item's, holds of calls in
    flight included) plus the hold stays within the cap: read and written under the run's lock on
    PostgreSQL, the write lock on SQLite, so two items cannot both take the last of the budget. A hold
    whose call's cost is unknown (a process died mid-call, no usage reported) stays spent.
    """

    def __init__(self, engine: Engine, claim: Claim, cap: float) -> None:
        self._engine = engine
        self._claim = claim
        self._cap = cap

    @property
    def cap(self) -> float:
        return self._cap

    def reserve(self, usd: float) -> float | None:
        with write_transaction(self._engine) as conn:
            _lock_run(conn, self._claim.suite_run_pk)
            total = _spent(conn, self._claim.suite_run_pk)
            if total + usd > self._cap:
                return total
            conn.execute(_statements().charge, {"item_pk": self._claim.item_pk, "usd": usd})
            return None

    def settle(self, reserved: float, actual: float | None) -> None:
        if actual is not None:
            with one_statement_write(self._engine) as conn:
                conn.execute(_statements().charge, {"item_pk": self._claim.item_pk, "usd": actual - reserved})


@dataclass(frozen=True, slots=True)
class Left:
    """The replay a given-up item's last attempt started (to close if it is still running)."""

    mode: Mode
    interrupted_key: str | None


def give_up_item(engine: Engine, item_pk: int, why: str) -> Left | None:
    """An item whose job will not run again: ``failed`` with the queue's reason, unless it has an outcome.

    The caller runs :func:`finish_run_of_item_if_done` after this transaction.
    """
    with write_transaction(engine) as conn:
        return _give_up(conn, item_pk, why)


def _give_up(conn: Connection, item_pk: int, why: str) -> Left | None:
    row = conn.execute(
        select(_I.suite_run_pk, _I.outcome, _I.attempt, _R.run_id, _R.mode)
        .join(SUITE_RUNS, _R.id == _I.suite_run_pk)
        .where(_I.id == item_pk, _I.outcome.in_(_OPEN))
    ).first()
    if row is None:
        return None
    now = now_ms()
    conn.execute(
        update(SUITE_RUN_ITEMS)
        .where(_I.id == item_pk, _I.outcome.in_(_OPEN))
        .values(outcome="failed", reason="gave_up", error=f"the job queue gave up: {why}", finished_at=now)
    )
    return Left(row.mode, replay_key(row.run_id, item_pk, row.attempt) if row.outcome == "running" else None)


def replay_by_key(engine: Engine, mode: str, key: str) -> str | None:
    """The run (``final``) or step run (``steps``) recorded under an attempt's key, or None."""
    table = STEP_RUNS if mode == "steps" else RUNS
    with read_transaction(engine) as conn:
        return conn.execute(select(table.c.run_id).where(table.c.idempotency_key == key)).scalar()


def _spent(conn: Connection, run_pk: int) -> float:
    """What a suite run's items have cost so far (those of unknown cost count as nothing)."""
    return float(
        conn.execute(select(func.coalesce(func.sum(_I.cost_usd), 0.0)).where(_I.suite_run_pk == run_pk)).scalar_one()
    )


def _cancel_pending(conn: Connection, run_pk: int, cap: float, item_pk: int | None) -> None:
    """Every item not started yet (and ``item_pk``, about to start) is cancelled: the spend reached the cap."""
    total = _spent(conn, run_pk)
    waiting = _I.outcome == "pending" if item_pk is None else ((_I.outcome == "pending") | (_I.id == item_pk))
    conn.execute(
        update(SUITE_RUN_ITEMS)
        .where(_I.suite_run_pk == run_pk, waiting, _I.outcome.in_(_OPEN))
        .values(
            outcome="cancelled", reason="max_cost", finished_at=now_ms(),
            error=f"not started: {total:.6f} USD spent reached --max-cost {cap}",
        )
    )  # fmt: skip


def _lock_run(conn: Connection, run_pk: int) -> None:
    """PostgreSQL: hold the run's row while its spend is read against the cost cap, so two items ending at
    once cannot both miss the other's cost and leave the cap passed. SQLite's write lock serialises them
    already; it has no FOR UPDATE."""
    conn.execute(select(_R.id).where(_R.id == run_pk).with_for_update())


def finish_run_if_done(conn: Connection, run_pk: int) -> None:
    """Mark the suite run finished when none of its items is pending or running.

    Called in a transaction of its own once an item's outcome (or a cancellation) has committed: of two
    items ending at once, the one whose check starts last sees the other's outcome, so no lock over the
    run has to serialise every item's end. A check made inside the ending transaction could miss the other.
    """
    now = now_ms()
    _audit_finished(conn, conn.execute(_statements().finish_run_if_done, {"run_pk": run_pk, "now": now}).first(), now)


def finish_run_of_item_if_done(engine: Engine, item_pk: int) -> None:
    """:func:`finish_run_if_done` for the run an item belongs to (after the item's end)."""
    now = now_ms()
    with write_transaction(engine) as conn:
        finished = conn.execute(_statements().finish_run_of_item_if_done, {"item_pk": item_pk, "now": now}).first()
        _audit_finished(conn, finished, now)


def _audit_finished(conn: Connection, finished: Any, now: int) -> None:
    """The audit event of a run that just finished (``finished``: its row, None when it did not): who started
    it and what its items cost (None when no item's cost is known)."""
    if finished is None:
        return
    cost = conn.execute(select(func.sum(_I.cost_usd)).where(_I.suite_run_pk == finished.id)).scalar()
    detail = {"cost_usd": None if cost is None else float(cost), "status": "finished"}
    record_in(conn, AuditEvent(now, finished.started_by, SUITE_RUN_FINISHED, finished.run_id, detail))


@dataclass(frozen=True, slots=True)
class _Statements:
    item: Any
    """What a claim reads of the item, its run and its conversation."""
    claim: Any
    """The item taken by the next attempt (if it has no outcome yet); the attempt's number."""
    finish: Any
    """The attempt's outcome, if the attempt still holds the item."""
    finish_charged: Any
    """``finish`` leaving the item's cost as its budget's calls settled it."""
    charge: Any
    """An amount added to the item's cost (a hold, or a hold settled to the call's real cost)."""
    finish_run_if_done: Any
    finish_run_of_item_if_done: Any


@functools.cache
def _statements() -> _Statements:
    item = (
        select(
            _I.outcome, _I.attempt, _I.suite_run_pk, _R.run_id, _R.provider, _R.model, _R.mode, _R.max_cost,
            _R.comparison, _C.conversation_id,
        )
        .join(SUITE_RUNS, _R.id == _I.suite_run_pk)
        .join(CONVERSATIONS, _C.id == _I.conversation_pk)
        .where(_I.id == bindparam("item_pk"))
    )  # fmt: skip
    claim = (
        update(SUITE_RUN_ITEMS)
        .where(_I.id == bindparam("item_pk"), _I.outcome.in_(_OPEN))
        .values(outcome="running", attempt=_I.attempt + 1, started_at=bindparam("now"), run_id=None)
        .returning(_I.attempt)
    )
    ended = (
        "outcome", "run_id", "diverged_step", "diverged_at", "reason", "error", "input_tokens", "output_tokens",
        "cost_usd", "cost_note", "finished_at", "wall_ms", "detail",
    )  # fmt: skip
    held = (_I.id == bindparam("item_pk"), _I.attempt == bindparam("held_attempt"), _I.outcome == "running")
    finish = update(SUITE_RUN_ITEMS).where(*held).values({name: bindparam(name, type_=_I[name].type) for name in ended})
    finish_charged = (
        update(SUITE_RUN_ITEMS)
        .where(*held)
        .values({name: bindparam(name, type_=_I[name].type) for name in ended if name != "cost_usd"})
    )
    charge = (
        update(SUITE_RUN_ITEMS)
        .where(_I.id == bindparam("item_pk"))
        .values(cost_usd=func.coalesce(_I.cost_usd, 0.0) + bindparam("usd", type_=_I.cost_usd.type))
    )
    return _Statements(
        item, claim, finish, finish_charged, charge, _finish_if_done(bindparam("run_pk")),
        _finish_if_done(select(_I.suite_run_pk).where(_I.id == bindparam("item_pk")).scalar_subquery()),
    )  # fmt: skip


def _finish_if_done(run_pk: Any) -> Any:
    """The run marked finished unless an item is left; ``run_pk``: its row id, or a scalar subquery that reads it."""
    left = exists().where(_I.suite_run_pk == _R.id, _I.outcome.in_(_OPEN))
    return (
        update(SUITE_RUNS)
        .where(_R.id == run_pk, _R.status == "running", ~left)
        .values(status="finished", finished_at=bindparam("now"))
        .returning(_R.id, _R.run_id, _R.started_by)
    )
