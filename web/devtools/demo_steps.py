"""The demo's own step runs: its agent turn replayed twice over the scripted stub, once matched, once diverged.

They are made as a reader's would be, by the step replay engine through the providers' SDKs, against
the demo's stub provider scripted per step: one model takes the recorded path to the recorded answer,
the other refunds another amount at step 2 (``different_arguments``). A demo database that already
holds step runs of the turn keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.store import Store
from core.store.step_runs import StepRunView
from web.devtools.demo_data import AGENT_ANSWER, AGENT_CALLS, AGENT_STEPS, AGENT_TURN
from web.devtools.stub_provider import StubServer

PROVIDER = "openai"
MATCHING_MODEL = "gpt-4.1"
DIVERGING_MODEL = "gpt-4.1-mini"


def matching_script() -> list[dict[str, Any]]:
    """Every recorded call, in order, then the recorded answer."""
    calls = [{"text": "", "tool_calls": [{"name": n, "arguments": a}]} for n, a, _ in AGENT_CALLS]
    return [*calls, {"text": AGENT_ANSWER}]


def diverging_script() -> list[dict[str, Any]]:
    """Step 1 as recorded; step 2 refunds half the amount."""
    (lookup, lookup_args, _), (refund, refund_args, _) = AGENT_CALLS[0], AGENT_CALLS[1]
    half = {**refund_args, "amount_eur": refund_args["amount_eur"] / 2}
    return [
        {"text": "", "tool_calls": [{"name": lookup, "arguments": lookup_args}]},
        {"text": "", "tool_calls": [{"name": refund, "arguments": half}]},
    ]


def seed_step_runs(store: Store, stub: StubServer, environ: Mapping[str, str]) -> list[StepRunView]:
    """Replay the agent turn twice over ``stub`` (``environ`` points the providers at it); none when some exist."""
    from core.replay.steps import replay_steps

    if store.list_step_runs(conversation_id=AGENT_STEPS, limit=1):
        return []
    runs = []
    for model, script in ((MATCHING_MODEL, matching_script()), (DIVERGING_MODEL, diverging_script())):
        stub.state.script_steps(model, script)
        runs.append(replay_steps(store, AGENT_STEPS, PROVIDER, model, turn=AGENT_TURN, environ=environ))
    return runs
