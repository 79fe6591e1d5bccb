"""The demo's own step runs: its agent turn replayed twice over the scripted stub, once matched, once diverged.

They are made as a reader's would be, by the step replay engine through the providers' SDKs, against
the demo's stub provider scripted per step: one model takes the recorded path to the recorded answer,
the other refunds another amount at step 2 (``different_arguments``). Both send the tools the agent
stored (``web.devtools.demo_tools``). A third run replays the turn stored without its tools: it sends
tools inferred from the recorded calls, and says so. A demo database that already holds step runs of
the turn keeps them.

Beyond those two, the stub is scripted with every agent turn of the store (``script_turns``), so the
demo's own "Replay steps" controls show a match and a divergence on any of them, as often as asked:
each provider's default model takes the recorded path, ``DIVERGING_MODEL`` leaves it at its last call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.errors import UnknownNameError
from core.store import Store
from core.store.step_runs import StepRunView
from web.devtools.demo_data import AGENT_ANSWER, AGENT_CALLS, AGENT_STEPS, AGENT_TURN
from web.devtools.demo_tools import WITHOUT_TOOLS, WITHOUT_TOOLS_TURN
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


MARKER_CHARS = 60
"""The start of a turn's user text that tells the stub which turn a request belongs to."""


def script_turns(store: Store, stub: StubServer) -> int:
    """Script ``stub`` with every agent turn in ``store`` (a turn with a tool call); how many turns."""
    from core.errors import MisuseError
    from core.messages.convert import text_of
    from core.providers import dialect_names, provider_named
    from core.replay.turns import has_trace, turn_of

    models = {provider_named(name).default_model for name in dialect_names()}
    scripted = 0
    for summary in store.iter_conversations():
        messages = [m.message for m in store.get_conversation(summary.conversation_id).messages]
        for user in filter(has_trace, messages):
            marker = " ".join(text_of(user.content).split())[:MARKER_CHARS]
            try:
                turn = turn_of(messages, user.msg_id)
            except MisuseError:
                continue
            steps = [_step(step.message) for step in turn.steps]
            recorded = [s for s in steps if s is not None]
            if turn.damage or not marker or len(recorded) < len(steps) or not any("tool_calls" in s for s in recorded):
                continue
            for model in models:
                stub.state.script_turn(model, marker, recorded)
            stub.state.script_turn(DIVERGING_MODEL, marker, _diverged(recorded))
            scripted += 1
    return scripted


def _step(message: Any) -> dict[str, Any] | None:
    """A recorded step as the stub answers it; None when its arguments are not a JSON object."""
    calls = []
    for call in message.tool_calls or ():
        try:
            arguments = json.loads(call.arguments or "{}")
        except ValueError:
            return None
        if not isinstance(arguments, dict):
            return None
        calls.append({"name": call.name, "arguments": arguments})
    return {"text": "", "tool_calls": calls} if calls else {"text": str(message.content or "")}


def _diverged(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recorded steps up to the last call, which is made with one argument more (``different_arguments``)."""
    last = max(i for i, s in enumerate(steps) if "tool_calls" in s)
    calls = [dict(c) for c in steps[last]["tool_calls"]]
    calls[0] = {**calls[0], "arguments": {**calls[0]["arguments"], "stub_diverged": True}}
    return [*steps[:last], {"text": "", "tool_calls": calls}]


def recorded_script(store: Store, conversation_id: str, turn: str) -> list[dict[str, Any]]:
    """A turn's recorded steps as the stub answers them: the recorded path to the recorded answer."""
    from core.replay.turns import turn_of

    messages = [m.message for m in store.get_conversation(conversation_id).messages]
    steps = [_step(step.message) for step in turn_of(messages, turn).steps]
    return [s for s in steps if s is not None]


def seed_step_runs(store: Store, stub: StubServer, environ: Mapping[str, str]) -> list[StepRunView]:
    """Replay the agent turn twice over ``stub`` (``environ`` points the providers at it), and the turn stored
    without its tools once (its run sends inferred tools and says so); none when some exist."""
    from core.replay.steps import replay_steps

    if store.list_step_runs(conversation_id=AGENT_STEPS, limit=1):
        return []
    runs = []
    for model, script in ((MATCHING_MODEL, matching_script()), (DIVERGING_MODEL, diverging_script())):
        stub.state.script_steps(model, script)
        runs.append(replay_steps(store, AGENT_STEPS, PROVIDER, model, turn=AGENT_TURN, environ=environ))
    try:
        store.get_conversation_outline(WITHOUT_TOOLS)
    except UnknownNameError:  # a demo built from fewer conversations does not hold it
        return runs
    stub.state.script_steps(MATCHING_MODEL, recorded_script(store, WITHOUT_TOOLS, WITHOUT_TOOLS_TURN))
    runs.append(replay_steps(store, WITHOUT_TOOLS, PROVIDER, MATCHING_MODEL, turn=WITHOUT_TOOLS_TURN,
                             environ=environ))  # fmt: skip
    return runs
