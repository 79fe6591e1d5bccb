"""The replay tasks: ``run`` (one reply regenerated, as Re-run does) and ``step_run`` (a turn's agent replay).

Both are queued after the run is recorded as ``running`` (its idempotency key claimed), so the job's
arguments are the run's id and nothing else the run row does not hold; no key ever enters a job.
Optional arguments: ``timeout`` (seconds per request) and ``rate_limit_wait`` (the 429 budget).
A job that runs again (its worker died) finds the run as it was left: an ended run is left alone,
a step run still running starts again from step 1. A job given up ends its run as failed with why.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import MisuseError
from core.jobs.queue import JSON
from core.jobs.registry import JobContext, task
from core.providers import provider_named
from core.replay.answers import DEFAULT_COMPARISON, parse_comparison
from core.replay.endpoints import endpoint_for, unavailable_reason
from core.replay.run import Prepared, execute
from core.replay.send import Sender
from core.replay.sent_tools import given_of_run
from core.replay.steps import execute_steps, plan_steps

RUN_TASK = "run"
STEP_RUN_TASK = "step_run"


def _timeout(ctx: JobContext, args: Mapping[str, JSON]) -> float:
    value = args.get("timeout")
    return float(value) if isinstance(value, int | float) else ctx.timeout


def _sender(ctx: JobContext, args: Mapping[str, JSON]) -> Sender:
    """``rate_limit_wait`` in the arguments overrides the queue's budget for 429 waits (a Re-run's is 0)."""
    value = args.get("rate_limit_wait")
    return ctx.sender(float(value)) if isinstance(value, int | float) else ctx.send


def _run_given_up(ctx: JobContext, args: Mapping[str, JSON], why: str) -> None:
    run = ctx.store.get_run(str(args["run_id"]))
    if run.status == "running":
        ctx.store.finish_run(run.run_id, status="error", error=f"the replay job was given up: {why}")


@task(RUN_TASK, on_give_up=_run_given_up)
def run_task(ctx: JobContext, args: Mapping[str, JSON]) -> None:
    """Send a recorded run's request body (the one its page shows) and record how it ended."""
    run = ctx.store.get_run(str(args["run_id"]))
    if run.status != "running":
        return  # it ended in an earlier attempt, after the send and before the job was marked done
    provider = provider_named(run.provider)
    endpoint = endpoint_for(provider, ctx.environ)
    if endpoint is None:
        ctx.store.finish_run(
            run.run_id, status="error", error=f"the worker cannot send: {unavailable_reason(provider, ctx.environ)}"
        )
        return
    prepared = Prepared(
        run.conversation_id, run.provider, run.model, run.up_to_msg_id, run.request_body, endpoint, None
    )
    execute(ctx.store, prepared, run.run_id, timeout=_timeout(ctx, args), sender=_sender(ctx, args))


def _step_run_given_up(ctx: JobContext, args: Mapping[str, JSON], why: str) -> None:
    run = ctx.store.get_step_run(str(args["run_id"]))
    if run.status == "running":
        ctx.store.finish_step_run(
            run.run_id, status="failed", reason="job_given_up", error=f"the step replay job was given up: {why}"
        )


@task(STEP_RUN_TASK, on_give_up=_step_run_given_up)
def step_run_task(ctx: JobContext, args: Mapping[str, JSON]) -> None:
    """Run a recorded step run's steps (``force``: send bodies that fail preflight) and record how it ended."""
    run = ctx.store.get_step_run(str(args["run_id"]))
    if run.status != "running":
        return
    try:
        plan = plan_steps(
            ctx.store, run.conversation_id, run.provider, run.model, turn=run.turn_msg_id,
            max_steps=run.max_steps, max_cost=run.max_cost, environ=ctx.environ, force=bool(args.get("force")),
            comparison=parse_comparison(run.comparison) if run.comparison else DEFAULT_COMPARISON,
            tools=given_of_run(run.tools_source, run.tools, run.tool_choice, run.params),  # what was given, again
        )  # fmt: skip
    except MisuseError as exc:  # the worker has no key for the provider, the conversation changed
        ctx.store.finish_step_run(run.run_id, status="failed", reason="not_attempted", error=f"the worker: {exc}")
        return
    if run.steps:
        ctx.store.clear_steps(run.run_id)  # a worker died midway: the replay starts again from step 1
    if plan.refusal is not None:
        ctx.store.finish_step_run(run.run_id, status="refused", reason=plan.refusal_reason, error=plan.refusal)
        return
    execute_steps(ctx.store, plan, run.run_id, timeout=_timeout(ctx, args), sender=_sender(ctx, args))
