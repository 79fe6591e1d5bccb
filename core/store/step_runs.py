"""Step runs: a turn replayed step by step, stored when it starts and step by step as it goes.

A run is recorded with status ``running`` before the first request, each step as soon as
its answer is compared, and the outcome at the end; a step that was sent stays recorded
whatever happens after it. Totals (tokens, cost) are summed from the steps when read.
A step run counts in its conversation's list figures (``runs``, ``last_activity``) as a reply does.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from sqlalchemy import Connection, delete, func, insert, literal_column, select, update

from core.errors import UnknownNameError
from core.messages.base import now_ms
from core.store.backend import backend_of
from core.store.errors import InvalidQueryError
from core.store.query import MAX_PAGE, conversation_pk
from core.store.tables import CONVERSATIONS, STEP_RUNS, STEPS
from core.store.views import from_row, values_of

StepRunStatus = Literal["running", "matched", "diverged", "failed", "refused", "capped"]
STEP_RUN_STATUSES: tuple[StepRunStatus, ...] = get_args(StepRunStatus)
StepVerdict = Literal["same", "same_final", "diverged", "failed"]
"""``failed``: the step's request did not give a comparable answer (its ``status`` says why)."""

_S = STEP_RUNS.c
_T = STEPS.c
_C = CONVERSATIONS.c


@dataclass(frozen=True, slots=True, kw_only=True)
class StepRunChoices:
    """What is chosen when a step run starts, besides its turn and model: how final answers are judged, the tools
    and parameters every step sends, and who started it. A new run and a stored one carry the same; keyword-only,
    so each keeps its own fields first.

    Each is None when not given, and on a run recorded before it could be.
    """

    comparison: str | None = None
    """How final answers are judged (``core.replay.answers``)."""
    tools_source: str | None = None
    """Where the tools sent came from: ``stored``, ``given``, ``inferred`` or ``none`` (``core.providers``)."""
    tools: list[dict[str, Any]] | None = None
    """The tools every step sends, neutral: ``{"name", "description", "parameters"}``."""
    tool_choice: Any = None
    """The tool choice every step sends, neutral: ``auto``, ``none``, ``required`` or ``{"name": ...}``."""
    started_by: str | None = None
    """The signed-in account that started it; None on an open dashboard or from the CLI."""
    params: dict[str, Any] | None = None
    """The generation parameters given over the stored request (``max_tokens``…), by name."""


@dataclass(frozen=True, slots=True)
class NewStepRun(StepRunChoices):
    """What a step run is started with."""

    conversation_id: str
    turn_msg_id: str
    provider: str
    model: str
    recorded_steps: int
    max_steps: int
    max_cost: float | None = None
    idempotency_key: str | None = None


@dataclass(frozen=True, slots=True)
class StepView:
    """One replayed step: its verdict against the recorded step at the same position, what it cost."""

    index: int
    recorded_msg_id: str | None
    verdict: StepVerdict
    reason: str | None
    detail: dict[str, Any] | None
    status: str
    """The exchange's status (``core.replay.send.Status``)."""
    error: str | None
    request_body: dict[str, Any]
    response_body: dict[str, Any] | None
    reply: dict[str, Any] | None
    """The answer as an AssistantTextMessage (JSON), None when there was none."""
    latency_ms: int | None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    reasoning_tokens: int | None = None
    cost_usd: float | None = None
    cost_note: str | None = None
    estimate: dict[str, Any] | None = None

    def tool_calls(self) -> list[dict[str, Any]]:
        """The reply's tool calls as ``{"name", "arguments"}`` (arguments as JSON values when they parse)."""
        calls = (self.reply or {}).get("tool_calls") or []
        return [{"name": c.get("name"), "arguments": _json_value(c.get("arguments") or "")} for c in calls]

    def text(self) -> str | None:
        """The reply's text, None when there was no reply."""
        return None if self.reply is None else str(self.reply.get("content") or "")

    @property
    def judge(self) -> dict[str, Any] | None:
        """The judge's verdict, reasoning, tokens and cost when a judge compared this step's answer."""
        judge = (self.detail or {}).get("judge")
        return judge if isinstance(judge, dict) else None


@dataclass(frozen=True, slots=True)
class StepRunView(StepRunChoices):
    """A step run with its steps in order and its totals."""

    run_id: str
    conversation_id: str
    turn_msg_id: str
    provider: str
    model: str
    status: StepRunStatus
    reason: str | None
    diverged_at: str | None
    error: str | None
    recorded_steps: int
    max_steps: int
    max_cost: float | None
    started_at: int
    finished_at: int | None
    idempotency_key: str | None
    steps: tuple[StepView, ...] = field(default_factory=tuple)

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools sent, in the order sent."""
        return [str(t.get("name")) for t in self.tools or ()]

    @property
    def input_tokens(self) -> int | None:
        """Summed over the steps that reported it (None when none did)."""
        found = [s.input_tokens for s in self.steps if s.input_tokens is not None]
        return sum(found) if found else None

    @property
    def output_tokens(self) -> int | None:
        """Summed over the steps that reported it (None when none did)."""
        found = [s.output_tokens for s in self.steps if s.output_tokens is not None]
        return sum(found) if found else None

    @property
    def cost_usd(self) -> float | None:
        """The sum of the steps' costs and the judge's; None as soon as one sent step or the judge has no known cost."""
        billed = [s for s in self.steps if s.input_tokens is not None or s.output_tokens is not None]
        judges = [j for s in self.steps if (j := s.judge) is not None]
        if any(s.cost_usd is None for s in billed) or any(j.get("cost_usd") is None for j in judges):
            return None
        judged = sum(float(j["cost_usd"]) for j in judges)
        return round(sum((s.cost_usd or 0.0 for s in billed), 0.0) + judged, 10)

    @property
    def cost_note(self) -> str | None:
        """Why the cost is unknown, from the first step (or judge) that says so."""
        found = next((s.cost_note for s in self.steps if s.cost_usd is None and s.cost_note), None)
        judged = (j.get("cost_note") for s in self.steps if (j := s.judge) is not None and j.get("cost_usd") is None)
        return found or next((f"judge: {n}" for n in judged if n), None)

    @property
    def latency_ms(self) -> int | None:
        """The steps' latencies summed."""
        found = [s.latency_ms for s in self.steps if s.latency_ms is not None]
        return sum(found) if found else None

    def to_json(self) -> dict[str, Any]:
        """The run as ``traceloupe replay --steps --json`` and ``traceloupe runs --json`` print it."""
        return {
            "run_id": self.run_id,
            "kind": "steps",
            "status": self.status,
            "provider": self.provider,
            "model": self.model,
            "conversation_id": self.conversation_id,
            "turn": self.turn_msg_id,
            "diverged_at": self.diverged_at,
            "reason": self.reason,
            "error": self.error,
            "recorded_steps": self.recorded_steps,
            "max_steps": self.max_steps,
            "max_cost": self.max_cost,
            "comparison": self.comparison,
            "tools_source": self.tools_source,
            "tools": self.tools,
            "tool_choice": self.tool_choice,
            "params": self.params,
            "started_at": self.started_at,
            "started_by": self.started_by,
            "finished_at": self.finished_at,
            "steps": [
                {
                    "index": s.index,
                    "recorded_msg_id": s.recorded_msg_id,
                    "verdict": s.verdict,
                    "reason": s.reason,
                    "detail": s.detail,
                    "status": s.status,
                    "error": s.error,
                    "tool_calls": s.tool_calls(),
                    "text": s.text(),
                    "tokens": {
                        "input": s.input_tokens,
                        "output": s.output_tokens,
                        "cached": s.cached_tokens,
                        "reasoning": s.reasoning_tokens,
                    },
                    "cost_usd": s.cost_usd,
                    "cost_note": s.cost_note,
                    "estimate": s.estimate,
                    "latency_ms": s.latency_ms,
                }
                for s in self.steps
            ],
            "tokens": {"input": self.input_tokens, "output": self.output_tokens},
            "cost_usd": self.cost_usd,
            "cost_note": self.cost_note,
        }


def step_run_by_key(conn: Connection, idempotency_key: str) -> StepRunView | None:
    """The step run recorded under an idempotency key, or None."""
    run_id = conn.execute(select(_S.run_id).where(_S.idempotency_key == idempotency_key)).scalar()
    return None if run_id is None else get_step_run(conn, run_id)


def claim_step_run(conn: Connection, new: NewStepRun) -> tuple[StepRunView, bool]:
    """Record a step run as ``running``; with a known idempotency key, that run and False instead."""
    if new.idempotency_key is not None:
        existing = step_run_by_key(conn, new.idempotency_key)
        if existing is not None:
            return existing, False
    pk = conversation_pk(conn, new.conversation_id)
    started = now_ms()
    run_id = uuid.uuid4().hex
    conn.execute(
        insert(STEP_RUNS).values(
            run_id=run_id,
            idempotency_key=new.idempotency_key,
            conversation_pk=pk,
            turn_msg_id=new.turn_msg_id,
            provider=new.provider,
            model=new.model,
            status="running",
            recorded_steps=new.recorded_steps,
            max_steps=new.max_steps,
            max_cost=new.max_cost,
            started_at=started,
            comparison=new.comparison,
            tools_source=new.tools_source,
            tools=new.tools,
            tool_choice=new.tool_choice,
            started_by=new.started_by,
            params=new.params or None,
        )
    )
    later = backend_of(conn).greatest(_C.last_activity, started)
    conn.execute(
        update(CONVERSATIONS)
        .where(_C.id == pk)
        .values(runs=_C.runs + literal_column("1"), last_activity=func.coalesce(later, started))
    )
    return get_step_run(conn, run_id), True


def add_step(conn: Connection, run_id: str, step: StepView) -> None:
    """Append one step to a running step run."""
    pk = _pk(conn, run_id)
    conn.execute(insert(STEPS).values(step_run_pk=pk, position=step.index, **values_of(step, "index")))


def clear_steps(conn: Connection, run_id: str) -> int:
    """Delete the steps of a step run that is still running (a queue retries it from step 1); how many."""
    pk = _pk(conn, run_id)
    running = conn.execute(select(_S.status).where(_S.id == pk)).scalar() == "running"
    if not running:
        raise InvalidQueryError(f"step run {run_id!r} has ended; its steps stay")
    return int(conn.execute(delete(STEPS).where(_T.step_run_pk == pk)).rowcount)


def finish_step_run(
    conn: Connection,
    run_id: str,
    *,
    status: StepRunStatus,
    reason: str | None = None,
    diverged_at: str | None = None,
    error: str | None = None,
) -> StepRunView:
    """Record how a step run ended."""
    if status not in STEP_RUN_STATUSES or status == "running":
        raise InvalidQueryError(f"a step run ends as one of: {', '.join(STEP_RUN_STATUSES[1:])}")
    _pk(conn, run_id)
    conn.execute(
        update(STEP_RUNS)
        .where(_S.run_id == run_id)
        .values(status=status, reason=reason, diverged_at=diverged_at, error=error, finished_at=now_ms())
    )
    return get_step_run(conn, run_id)


def get_step_run(conn: Connection, run_id: str) -> StepRunView:
    """One step run with its steps; UnknownNameError if there is none."""
    row = conn.execute(_select().where(_S.run_id == run_id)).first()
    if row is None:
        raise UnknownNameError(f"no step run {run_id!r}")
    return _view(conn, row)


def list_step_runs(
    conn: Connection, *, conversation_id: str | None = None, limit: int = 100
) -> tuple[StepRunView, ...]:
    """Step runs, newest first, optionally of one conversation."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidQueryError(f"limit must be between 1 and {MAX_PAGE}")
    stmt = _select()
    if conversation_id is not None:
        stmt = stmt.where(_C.conversation_id == conversation_id)
    rows = conn.execute(stmt.order_by(_S.started_at.desc(), _S.id.desc()).limit(limit)).all()
    return tuple(_view(conn, r) for r in rows)


def _json_value(text: str) -> Any:
    """Tool-call arguments as a JSON value; the text itself when it is not JSON."""
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def _select() -> Any:
    return select(*STEP_RUNS.c, _C.conversation_id).join(CONVERSATIONS, _C.id == _S.conversation_pk)


def _pk(conn: Connection, run_id: str) -> int:
    pk = conn.execute(select(_S.id).where(_S.run_id == run_id)).scalar()
    if pk is None:
        raise UnknownNameError(f"no step run {run_id!r}")
    return int(pk)


def _view(conn: Connection, row: Any) -> StepRunView:
    steps = conn.execute(select(STEPS).where(_T.step_run_pk == row.id).order_by(_T.position)).all()
    return from_row(StepRunView, row, steps=tuple(from_row(StepView, s, index=s.position) for s in steps))
