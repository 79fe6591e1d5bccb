"""One suite job: replay one conversation of a suite run and record its outcome.

``run_item`` is what the job queue runs, once per item. It claims the item (an attempt),
replays the conversation in the run's mode and records the outcome; a second delivery of a
job whose item has an outcome does nothing. An attempt that finds the item ``running`` takes
over from one that was interrupted (its process died): the replay that attempt left
``running`` (recorded under the attempt's idempotency key) is closed as interrupted first,
so nothing stays ``running``; a replay that attempt saw to its end (the process died before
recording the item's outcome) is the outcome, so no conversation is replayed twice to completion.

Outcomes:

- ``final`` mode regenerates the final reply (``core.replay.run``, as Re-run does) and compares
  it with the recorded one as a step replay compares a step: the same tool calls, or a final
  answer the run's comparison (``core.replay.answers``) finds the same as the recorded one, is
  ``matched``; anything else ``diverged`` at step 1 with the step comparison's reason
  (``different_answer`` with the score and the word diff kept in the item's detail). A judge's
  cost is added to the item's.
- ``steps`` mode is the agent replay of the conversation's last turn (``core.replay.steps``):
  ``matched``, ``diverged`` (at step k), ``failed`` or ``refused`` as that run ends; a run stopped
  by ``--max-steps`` is ``failed`` with the limit as its reason.
- With a cost cap, every provider call holds its estimated cost in the run's budget before it is
  sent (``core.store.suite_items.SuiteBudget``): a call that could pass the cap is not sent, and the item
  is ``cancelled`` with reason ``max_cost`` (a step replay stopped midway keeps its run).
- A provider failure is ``failed`` with the provider's error; a history holding a damaged record,
  a body that fails preflight, or a conversation with nothing to replay is ``refused``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from core.errors import MisuseError
from core.messages.union import Message
from core.replay.answers import DEFAULT_COMPARISON, AnswerComparison, AnswerJudge, JudgeFailed, parse_comparison
from core.replay.budget import hold
from core.replay.compare import compare_messages
from core.replay.cost import run_cost
from core.replay.judge import answer_judge
from core.replay.run import DEFAULT_TIMEOUT, execute, expanded_history, prepare, reply_message, start
from core.replay.send import Sender, send
from core.replay.steps import execute_steps, plan_steps, start_steps
from core.store import RunView, Store
from core.store import suite_items as items
from core.store.step_runs import StepRunView
from core.store.suite_items import Claim, ItemResult, Spend, SuiteBudget

log = logging.getLogger("traceloupe.suites")

COST_REASONS = ("max_cost", "price_unknown")
"""Why a step run capped by the cost cap stopped: the item is cancelled, not failed (no regression)."""

INTERRUPTED = "interrupted: the process running this suite job stopped; the job was started again"


def run_item(
    store: Store,
    item_pk: int,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    sender: Sender = send,
) -> bool:
    """Replay one item of a suite run and record its outcome; False when there was nothing to do.

    ``sender``: the queue's job passes one that holds the provider's concurrency slot and waits out 429s.
    """
    claim = items.claim_item(store.engine, item_pk)
    if claim is None:
        # Ended already (its worker may have died before finishing the run) or cancelled by the cost cap just now.
        items.finish_run_of_item_if_done(store.engine, item_pk)
        return False
    ended = None if claim.interrupted_key is None else _close_interrupted(store, claim.mode, claim.interrupted_key)
    sending = _Sending(environ, timeout, sender)
    try:
        if ended is not None:
            result = _ended_result(store, claim, ended, sending)
        else:
            replay = _steps if claim.mode == "steps" else _final
            result = replay(store, claim, sending)
    except MisuseError as exc:  # nothing could be attempted for this conversation (no turn, no reply, no key)
        result = ItemResult("refused", reason="not_attempted", error=str(exc))
    except Exception as exc:  # a bug must still give the item an outcome, or the suite run would never finish
        log.exception("suite item %s failed inside Traceloupe", item_pk)
        result = ItemResult("failed", reason="internal_error", error=f"Traceloupe failed ({type(exc).__name__})")
    recorded = items.finish_item(store.engine, claim, result)
    items.finish_run_of_item_if_done(store.engine, item_pk)  # after the item's transaction committed
    return recorded


def give_up(store: Store, item_pk: int, why: str) -> None:
    """The queue will not run this item's job again: its replay, if one was left running, and the item end failed."""
    left = items.give_up_item(store.engine, item_pk, why)
    items.finish_run_of_item_if_done(store.engine, item_pk)
    if left is not None and left.interrupted_key is not None:
        _close_interrupted(store, left.mode, left.interrupted_key)


@dataclass(frozen=True, slots=True)
class _Sending:
    environ: Mapping[str, str] | None
    timeout: float
    sender: Sender


def _final(store: Store, claim: Claim, sending: _Sending) -> ItemResult:
    prepared = prepare(store, claim.conversation_id, claim.provider, claim.model, environ=sending.environ)
    original = prepared.original
    if original is None:
        raise MisuseError("the conversation has no assistant reply to regenerate and compare with")
    answers = _answers(claim, sending)  # a judge without a key here: refused before anything is recorded
    budget = None if claim.max_cost is None else SuiteBudget(store.engine, claim, claim.max_cost)
    held = None
    if budget is not None and prepared.refusal is None:  # a refused body is not sent
        held = hold(budget, prepared.endpoint.provider, claim.model, prepared.body, recorded=original, what="the reply")
        if held.refusal is not None:
            return ItemResult("cancelled", reason=held.reason, error=held.refusal)
    run, created = start(store, prepared, idempotency_key=claim.replay_key)
    if not created:  # the same attempt twice cannot happen (an attempt is a claim); never send twice anyway
        raise MisuseError(f"the replay of attempt {claim.attempt} was recorded already")
    try:
        finished = execute(store, prepared, run.run_id, timeout=sending.timeout, sender=sending.sender)
        result = final_result(finished, original, answers)
    except BaseException:
        if budget is not None and held is not None:
            budget.settle(held.usd, None)  # the call may have been billed: its hold stays spent
        raise
    if budget is not None and held is not None:
        budget.settle(held.usd, result.spend.cost_usd)
    return result


def comparison_of(claim: Claim) -> AnswerComparison:
    """The comparison the item's run chose (a run recorded before comparisons were chosen: the default)."""
    return parse_comparison(claim.comparison) if claim.comparison else DEFAULT_COMPARISON


def _answers(claim: Claim, sending: _Sending) -> AnswerJudge:
    return answer_judge(comparison_of(claim), environ=sending.environ, sender=sending.sender, timeout=sending.timeout)


def final_result(run: RunView, original: Message, answers: AnswerJudge) -> ItemResult:
    """A finished run as an item's outcome: its reply compared with the recorded one by ``answers``."""
    usage, price = run_cost(run.provider, run.model, run.response_body)
    spent = Spend(usage.input, usage.output, price.usd, price.note)
    if run.status == "refused":
        return ItemResult("refused", run.run_id, reason="refused", error=run.error, spend=spent)
    reply = reply_message(run)
    if run.status != "ok" or reply is None:
        return ItemResult("failed", run.run_id, reason=run.status, error=run.error, spend=spent)
    try:
        comparison = compare_messages(reply, original, answers=answers)
    except JudgeFailed as exc:
        spent = _with_judge(spent, exc.detail)
        return ItemResult("failed", run.run_id, reason="judge_failed", error=str(exc), spend=spent,
                          detail=exc.detail or None)  # fmt: skip
    answered = comparison.detail if not (reply.tool_calls or original.tool_calls) else None
    spent = _with_judge(spent, answered)
    if comparison.verdict != "diverged":
        return ItemResult("matched", run.run_id, spend=spent, detail=answered)
    return ItemResult("diverged", run.run_id, 1, original.msg_id, comparison.reason, spend=spent, detail=answered)


def _with_judge(spent: Spend, detail: dict[str, object] | None) -> Spend:
    """The replay's spend plus a judge's cost (unknown when either is)."""
    judge = (detail or {}).get("judge")
    if not isinstance(judge, dict):
        return spent
    cost = judge.get("cost_usd")
    if spent.cost_usd is None or not isinstance(cost, int | float):
        note = spent.cost_note or f"judge: {judge.get('cost_note') or 'cost unknown'}"
        return Spend(spent.input_tokens, spent.output_tokens, None, note)
    return Spend(spent.input_tokens, spent.output_tokens, round(spent.cost_usd + cost, 10), spent.cost_note)


def _steps(store: Store, claim: Claim, sending: _Sending) -> ItemResult:
    plan = plan_steps(
        store, claim.conversation_id, claim.provider, claim.model, max_cost=claim.max_cost, environ=sending.environ,
        comparison=comparison_of(claim),
    )  # fmt: skip
    run, created = start_steps(store, plan, idempotency_key=claim.replay_key)
    if not created:
        raise MisuseError(f"the replay of attempt {claim.attempt} was recorded already")
    budget = None if claim.max_cost is None else SuiteBudget(store.engine, claim, claim.max_cost)
    run = execute_steps(store, plan, run.run_id, timeout=sending.timeout, sender=sending.sender, budget=budget)
    return step_result(run)


def step_result(run: StepRunView) -> ItemResult:
    """A finished step run as an item's outcome."""
    spent = Spend(run.input_tokens, run.output_tokens, run.cost_usd, run.cost_note)
    final = run.steps[-1] if run.steps else None
    answered = final.detail if final is not None and final.detail and "comparison" in final.detail else None
    if run.status == "matched":
        return ItemResult("matched", run.run_id, spend=spent, detail=answered)
    if run.status == "diverged":
        step = next((s.index for s in run.steps if s.verdict == "diverged"), None)
        return ItemResult("diverged", run.run_id, step, run.diverged_at, run.reason, run.error, spend=spent,
                          detail=answered)  # fmt: skip
    if run.status == "refused":
        return ItemResult("refused", run.run_id, reason=run.reason, error=run.error, spend=spent)
    if run.status == "capped" and run.reason in COST_REASONS:
        # Stopped before step 1, nothing reached the provider: the item reads as not started.
        return ItemResult("cancelled", run.run_id if run.steps else None, reason=run.reason, error=run.error,
                          spend=spent)  # fmt: skip
    reason = run.reason if run.status == "failed" else f"capped: {run.reason}"
    return ItemResult("failed", run.run_id, reason=reason, error=run.error, spend=spent)


def _close_interrupted(store: Store, mode: str, key: str) -> str | None:
    """End the replay an interrupted attempt left ``running`` (found by its key), so none shows as running forever;
    the replay's id when it had ended already (None: there was none, or it was cut short)."""
    run_id = items.replay_by_key(store.engine, mode, key)
    if run_id is None:
        return None  # the attempt stopped before its replay was recorded
    if mode == "steps":
        if store.get_step_run(run_id).status != "running":
            return run_id
        store.finish_step_run(run_id, status="failed", reason="interrupted", error=INTERRUPTED)
    elif store.get_run(run_id).status != "running":
        return run_id
    else:
        store.finish_run(run_id, status="error", error=INTERRUPTED)
    return None


def _ended_result(store: Store, claim: Claim, run_id: str, sending: _Sending) -> ItemResult:
    """The outcome of a replay an interrupted attempt saw to its end, read as that attempt would have recorded it."""
    if claim.mode == "steps":
        return step_result(store.get_step_run(run_id))
    run = store.get_run(run_id)
    history = expanded_history([m.message for m in store.get_conversation(claim.conversation_id).messages])
    original = next((m for m in history if m.msg_id == run.up_to_msg_id), None)
    if original is None:
        raise MisuseError("the conversation has no assistant reply to regenerate and compare with")
    return final_result(run, original, _answers(claim, sending))
