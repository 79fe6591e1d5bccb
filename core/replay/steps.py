"""Step replay: re-run one turn's agent loop against a provider on the recorded tool outputs.

::

    plan_steps(store, conversation, provider, model, turn=...)   the turn, its recorded steps, step 1's body
    start_steps(store, plan, idempotency_key)                     record the run (``running``), once per key
    execute_steps(store, plan, run_id)                            send step by step, compare, record each step
    replay_steps(...)                                             the three in a row (the CLI)

Step 1's body is today's replay of the turn's first assistant record (``core.replay.run.prepare``
with ``upto`` that record). After a step that makes the same calls as the recorded one, the next
body is the same history plus the replayed reply and the *recorded* tool results re-keyed to the
replayed call ids. No tool is ever executed and nothing is made up: a reply that leaves the
recorded path ends the run. The run ends as

- ``matched``: every step made the recorded calls, up to the same final answer (or the recording ran out);
  two final answers are the same when the plan's comparison (``core.replay.answers``) says so;
- ``diverged``: a step left the recorded path (``diverged_at`` names the recorded step, ``reason`` how;
  ``different_answer`` when the comparison finds the final answers different);
- ``failed``: a provider failure (the step is recorded with the exchange's status; earlier steps stay),
  or a judge that gave no verdict (``judge_failed``);
- ``refused``: a damaged record in the turn or its history (nothing was sent), or a step's body fails
  preflight (``force`` sends it anyway; the steps before it stay recorded);
- ``capped``: ``--max-steps`` reached, or the next step's estimated cost would pass ``--max-cost`` (the
  step replay's own, or the suite run's budget it is part of: ``core.replay.budget``). The estimate is
  ``core.replay.cost.ESTIMATE_METHOD``; it is held against the cap before the step is sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict, Unpack

from core.errors import MisuseError
from core.messages.union import MESSAGE_ADAPTER, Message
from core.preflight import preflight
from core.providers import ChatLLM, Dialect
from core.providers.chat_llm import RequestResult
from core.replay.answers import DEFAULT_COMPARISON, AnswerComparison, AnswerJudge, JudgeFailed
from core.replay.budget import Budget, LocalBudget, hold
from core.replay.compare import compare_messages
from core.replay.cost import StepUsage, cost_of, usage_of
from core.replay.judge import answer_judge, check_judge
from core.replay.parse import MalformedReply
from core.replay.redact import Redactor
from core.replay.run import DEFAULT_TIMEOUT, Prepared, preflight_refusal, prepare, read_reply
from core.replay.send import Sender, send
from core.replay.sent_tools import GivenTools, SentTools
from core.replay.turns import Turn, default_turn, rekeyed, turn_of
from core.request_context import params_json
from core.store import Store
from core.store.step_runs import NewStepRun, StepRunStatus, StepRunView, StepView

log = logging.getLogger("traceloupe.replay")


@dataclass(frozen=True, slots=True)
class StepPlan:
    """A step replay ready to run: the turn, step 1's prepared request, the limits, or why it is refused."""

    prepared: Prepared
    turn: Turn
    max_steps: int
    max_cost: float | None
    refusal: str | None
    refusal_reason: str | None = None
    """``damaged_record`` (a record lost its type) or ``preflight`` (the body breaks a provider rule)."""
    force: bool = False
    """Send bodies that fail preflight anyway (every step's, not only step 1's)."""
    comparison: AnswerComparison = DEFAULT_COMPARISON
    """How the final answers are judged."""
    environ: Mapping[str, str] | None = field(default=None, repr=False)
    """Where a judge's key is read (the replay's own environment)."""
    given: GivenTools | None = None
    """What was given over the stored request (tools, tool choice, parameters): the run records its parameters."""


@dataclass(frozen=True, slots=True)
class _End:
    status: StepRunStatus
    reason: str | None = None
    diverged_at: str | None = None
    error: str | None = None


EXTRA_STEPS = 2
"""``--max-steps`` defaults to the recorded step count plus this."""


class StepPlanning(TypedDict, total=False):
    """What :func:`plan_steps` takes besides the conversation, provider and model (its defaults apply)."""

    turn: str | None
    max_steps: int | None
    max_cost: float | None
    environ: Mapping[str, str] | None
    force: bool
    comparison: AnswerComparison
    tools: GivenTools | None


def plan_steps(
    store: Store,
    conversation_id: str,
    provider: str,
    model: str,
    *,
    turn: str | None = None,
    max_steps: int | None = None,
    max_cost: float | None = None,
    environ: Mapping[str, str] | None = None,
    force: bool = False,
    comparison: AnswerComparison = DEFAULT_COMPARISON,
    tools: GivenTools | None = None,
) -> StepPlan:
    """Find the turn and build step 1; raises (nothing recorded) for an unknown name, a missing key, bad limits.

    Every step sends the turn's stored tools (``tools`` over them, or inferred from the recorded calls).
    """
    if comparison.kind == "judge":
        check_judge(comparison, environ)
    if max_steps is not None and max_steps < 1:
        raise MisuseError("--max-steps must be at least 1")
    if max_cost is not None and not max_cost >= 0:
        raise MisuseError("--max-cost must be a non-negative number of US dollars")
    typed = store.get_conversation(conversation_id).typed
    found = turn_of(typed, turn if turn is not None else default_turn(typed))
    prepared = prepare(store, conversation_id, provider, model, upto=found.steps[0].message.msg_id, environ=environ,
                       tools=tools, turn=found.user.msg_id, infer_tools=True, history=typed)  # fmt: skip
    limit = max_steps if max_steps is not None else len(found.steps) + EXTRA_STEPS
    refusal = found.damage or prepared.refusal
    # prepare() refuses a damaged history with an empty body, and a body that fails preflight with the body.
    reason = None if refusal is None else "damaged_record" if found.damage or not prepared.body else "preflight"
    return StepPlan(prepared, found, limit, max_cost, refusal, reason, force, comparison, environ, tools)


def start_steps(
    store: Store, plan: StepPlan, *, idempotency_key: str | None = None, started_by: str | None = None
) -> tuple[StepRunView, bool]:
    """Record the step run as started (by the account ``started_by``); True when this call created it. A refused
    plan ends at once."""
    prepared = plan.prepared
    run, created = store.claim_step_run(
        NewStepRun(
            conversation_id=prepared.conversation_id,
            turn_msg_id=plan.turn.user.msg_id,
            provider=prepared.provider,
            model=prepared.model,
            recorded_steps=len(plan.turn.steps),
            max_steps=plan.max_steps,
            max_cost=plan.max_cost,
            idempotency_key=idempotency_key,
            comparison=str(plan.comparison),
            tools_source=prepared.tools.source,
            tools=prepared.tools.tools_json(),
            tool_choice=prepared.tools.tool_choice_json(),
            started_by=started_by,
            params=params_json(plan.given.params) if plan.given is not None else None,
        )
    )
    if created and plan.refusal is not None:
        run = store.finish_step_run(run.run_id, status="refused", reason=plan.refusal_reason, error=plan.refusal)
    return run, created


def execute_steps(
    store: Store,
    plan: StepPlan,
    run_id: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    on_step: Callable[[StepView], None] | None = None,
    sender: Sender = send,
    budget: Budget | None = None,
) -> StepRunView:
    """Run the steps, record each, and record how the run ended. Never raises for a provider's failure.

    ``sender``: a queue's job passes one that holds the provider's concurrency slot and waits out 429s.
    ``budget``: the cap every step holds its estimate against (a suite run's); default ``--max-cost``'s own.
    """
    if plan.refusal is not None:
        return store.get_step_run(run_id)
    if budget is None and plan.max_cost is not None:
        budget = LocalBudget(plan.max_cost)
    try:
        end = _walk(store, plan, run_id, timeout, on_step, sender, budget)
    except Exception as exc:  # a bug here must still end the run, or it would show as running forever
        log.exception("step replay %s failed inside Traceloupe", run_id)
        end = _End("failed", "internal_error", error=f"Traceloupe failed while replaying ({type(exc).__name__})")
    return store.finish_step_run(
        run_id, status=end.status, reason=end.reason, diverged_at=end.diverged_at, error=end.error
    )


def replay_steps(
    store: Store,
    conversation_id: str,
    provider: str,
    model: str,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    idempotency_key: str | None = None,
    **planned: Unpack[StepPlanning],
) -> StepRunView:
    """Plan, record and run a step replay; the finished run (a repeated key returns the recorded run)."""
    plan = plan_steps(store, conversation_id, provider, model, **planned)
    run, created = start_steps(store, plan, idempotency_key=idempotency_key)
    if not created:
        return run
    return execute_steps(store, plan, run.run_id, timeout=timeout)


def step_request(
    provider: Dialect, model: str, history: list[Message], tools: SentTools | None = None
) -> RequestResult:
    """The request for a history already expanded (traces placed), built by ChatLLM as replay builds it."""
    return ChatLLM(provider, (tools or SentTools()).options(model)).construct_request_params(history)


def _walk(
    store: Store,
    plan: StepPlan,
    run_id: str,
    timeout: float,
    on_step: Callable[[StepView], None] | None,
    sender: Sender,
    budget: Budget | None,
) -> _End:
    prepared, turn = plan.prepared, plan.turn
    answers = answer_judge(plan.comparison, environ=plan.environ, sender=sender, timeout=timeout)
    history: list[Message] = list(turn.before)
    previous: StepUsage | None = None
    for k in range(1, plan.max_steps + 1):
        if k > len(turn.steps):
            last = turn.steps[-1].message.msg_id
            return _End("matched", "recording_ended", error=f"the recorded turn ends at {last} without a final answer")
        recorded = turn.steps[k - 1]
        if k == 1:
            body = prepared.body  # preflight already passed (or forced) in prepare()
        else:
            request = step_request(prepared.endpoint.provider, prepared.model, history, prepared.tools)
            verdict = preflight(request)
            if not (plan.force or verdict.accepted):
                return _End("refused", "preflight", error=f"step {k} {preflight_refusal(verdict)}")
            body = request.body
        held = None
        if budget is not None:
            held = hold(budget, prepared.endpoint.provider, prepared.model, body, recorded=recorded.message,
                        previous=previous, what=f"step {k}")  # fmt: skip
            if held.refusal is not None:
                return _End("capped", held.reason, error=held.refusal)
        estimate = None if held is None else held.estimate
        try:
            step, message = _send_step(prepared, run_id, k, recorded.message, body, timeout, estimate, sender, answers)
        except BaseException:
            if budget is not None and held is not None:
                budget.settle(held.usd, None)  # the call may have been billed: its hold stays spent
            raise
        if budget is not None and held is not None:
            budget.settle(held.usd, step.cost_usd)
        store.add_step(run_id, step)
        if on_step is not None:
            on_step(step)
        previous = StepUsage(step.input_tokens, step.output_tokens)
        if message is None:
            return _End("failed", step.reason, error=step.error)
        if step.verdict == "same":
            history += [message, *rekeyed(recorded.outputs, (step.detail or {}).get("call_ids", {}))]
            continue
        if step.verdict == "same_final":
            return _End("matched")
        return _End("diverged", step.reason, diverged_at=recorded.message.msg_id)
    return _End("capped", "max_steps", error=f"stopped after --max-steps {plan.max_steps} without a final answer")


def _send_step(
    prepared: Prepared,
    run_id: str,
    k: int,
    recorded: Message,
    body: dict[str, Any],
    timeout: float,
    estimate: dict[str, Any] | None,
    sender: Sender,
    answers: AnswerJudge,
) -> tuple[StepView, Message | None]:
    """Send one step and compare it; the step as recorded, and the replayed reply (None on a failure)."""
    endpoint = prepared.endpoint
    exchange = sender(endpoint, prepared.model, body, timeout=timeout)
    redactor = Redactor(endpoint.key)
    response = redactor.json(exchange.response) if isinstance(exchange.response, dict) else None
    if response is None and exchange.response_text is not None:
        response = {"text": exchange.response_text}
    usage = usage_of(endpoint.wire, response)
    price = cost_of(endpoint.provider, prepared.model, usage)
    common: dict[str, Any] = {
        "index": k,
        "recorded_msg_id": recorded.msg_id,
        "request_body": body,
        "response_body": response,
        "latency_ms": exchange.latency_ms,
        "input_tokens": usage.input,
        "output_tokens": usage.output,
        "cached_tokens": usage.cached,
        "reasoning_tokens": usage.reasoning,
        "cost_usd": price.usd,
        "cost_note": price.note,
        "estimate": estimate,
    }
    if exchange.status != "ok":
        failed = StepView(verdict="failed", reason=exchange.status, detail=None, status=exchange.status,
                          error=exchange.error, reply=None, **common)  # fmt: skip
        return failed, None
    try:
        # The comparison and the next request use the redacted reply, so no figure stored can hold the key.
        _, reply = read_reply(prepared, exchange, redactor, msg_id=f"step-{run_id}-{k}")
    except MalformedReply as exc:
        error = f"the provider's answer could not be read: {exc}"
        return StepView(verdict="failed", reason="malformed", detail=None, status="malformed", error=error,
                        reply=None, **common), None  # fmt: skip
    message = MESSAGE_ADAPTER.validate_python(reply)
    try:
        comparison = compare_messages(message, recorded, answers=answers)
    except JudgeFailed as exc:
        return StepView(verdict="failed", reason="judge_failed", detail=exc.detail or None, status="ok",
                        error=str(exc), reply=reply, **common), None  # fmt: skip
    detail = {**comparison.detail, "call_ids": comparison.call_ids} if comparison.call_ids else comparison.detail
    step = StepView(verdict=comparison.verdict, reason=comparison.reason, detail=detail or None, status="ok",
                    error=None, reply=reply, **common)  # fmt: skip
    return step, message
