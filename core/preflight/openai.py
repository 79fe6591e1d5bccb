"""OpenAI Chat Completions (and the Zhipu and Doubao bodies of its shape) and OpenAI Responses: request-time
rules the SDK types cannot express (docs/providers.md sections 1, 2, 5, 6)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.models.reasoning import EFFORT_LEVEL_RULE, effort_levels, refused_effort
from core.preflight import tools
from core.preflight.findings import Finding, Rule, pointer
from core.providers.dialects.chat_completions import ASSISTANT_CONTENT_RULE, CALL_ID_LENGTH_RULE, TOOL_CHOICE_RULE
from core.providers.dialects.openai_responses import MIN_OUTPUT_RULE
from core.providers.profiles import ModelProfile

if TYPE_CHECKING:
    from core.models.table import FactsChoice

JSON = dict[str, Any]

UNIQUE_IDS = Rule(
    "unique-tool-ids",
    "error",
    "a tool call id is used twice",
    "OpenAI 400 'Duplicate value for 'tool_call_id'' / Responses 'Duplicate item found with id'",
)
CHAT_RESULT_BEFORE_CALL = Rule(
    "result-before-call",
    "error",
    "a tool message answers no call of the assistant message before it",
    "OpenAI 400 \"messages with role 'tool' must be a response to a preceeding message with 'tool_calls'\"",
)
CHAT_CALL_ANSWERED = Rule(
    "call-answered-once",
    "error",
    "an assistant message's tool calls are not each answered once by the tool messages right after it",
    "OpenAI 400 \"An assistant message with 'tool_calls' must be followed by tool messages responding to each "
    "'tool_call_id'\"",
)
RESPONSES_RESULT_BEFORE_CALL = Rule(
    "result-before-call",
    "error",
    "a function_call_output names no earlier function_call",
    "OpenAI Responses 400 'No tool call found for function call output with call_id'",
)
RESPONSES_CALL_ANSWERED = Rule(
    "call-answered-once",
    "error",
    "a function_call is not answered exactly once",
    "OpenAI Responses 400 'No tool output found for function call'",
)
REASONING_ITEM_FOLLOWED = Rule(
    "reasoning-item-followed",
    "error",
    "a reasoning item is not followed by the item it belongs to",
    "OpenAI Responses 400 \"Item 'rs_…' of type 'reasoning' was provided without its required following item\" "
    "(pydantic-ai#2861)",
)
REASONING_PARAMS = Rule(
    "reasoning-model-params",
    "error",
    "a parameter this reasoning model rejects",
    "OpenAI reasoning guide: o-series and gpt-5 take max_completion_tokens and reasoning_effort, not max_tokens or "
    "temperature (400 'Unsupported parameter')",
)
NOT_REASONING_PARAMS = Rule(
    "reasoning-model-params",
    "error",
    "a reasoning parameter sent to a model without reasoning",
    "OpenAI 400 'Unrecognized request argument' / 'reasoning_effort is not supported with this model'",
)
CALL_ID_LENGTH = Rule(
    CALL_ID_LENGTH_RULE,
    "error",
    "a tool call id is longer than 40 characters",
    "OpenAI 400 \"Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length "
    '40" (microsoft/autogen#6377, camel-ai/camel#2215)',
)
MIN_OUTPUT = Rule(
    MIN_OUTPUT_RULE,
    "error",
    "max_output_tokens is below 16",
    "OpenAI 400 \"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16\" "
    "(vectorize-io/hindsight#58)",
)
EFFORT_LEVEL = Rule(
    EFFORT_LEVEL_RULE,
    "error",
    "a reasoning effort this model does not take",
    "OpenAI 400 \"Unsupported value: 'reasoning_effort' does not support 'none' with this model. Supported values "
    "are: 'minimal', 'low', 'medium', and 'high'.\" (Kilo-Org/cloud#3807, machinewrapped/llm-subtrans#388); LiteLLM "
    "model map supports_<level>_reasoning_effort",
)
ASSISTANT_CONTENT = Rule(
    ASSISTANT_CONTENT_RULE,
    "error",
    "an assistant message has neither content nor tool_calls",
    "OpenAI 400 \"Invalid value for 'content': expected a string, got null\": content is required unless tool_calls "
    "is given (vercel/ai#14950); compatible APIs: 'Assistant message must have either content or tool_calls' "
    "(OpenHands/OpenHands#8685)",
)
TOOL_CHOICE_SUPPORTED = Rule(
    TOOL_CHOICE_RULE,
    "error",
    "a tool choice this endpoint does not take",
    "Zhipu GLM 400 'Tool choice must be auto' (vectorize-io/hindsight#4246, AstrBotDevs/AstrBot#7177)",
)

RULES = (
    ASSISTANT_CONTENT,
    TOOL_CHOICE_SUPPORTED,
    EFFORT_LEVEL,
    UNIQUE_IDS,
    CALL_ID_LENGTH,
    MIN_OUTPUT,
    CHAT_RESULT_BEFORE_CALL,
    CHAT_CALL_ANSWERED,
    RESPONSES_RESULT_BEFORE_CALL,
    RESPONSES_CALL_ANSWERED,
    REASONING_ITEM_FOLLOWED,
    REASONING_PARAMS,
)
MAX_CALL_ID = 40
MIN_OUTPUT_TOKENS = 16
ALL_TOOL_CHOICES = frozenset({"auto", "none", "required", "named"})
# Parameters a reasoning model answers 400 to, and what to send instead.
REASONING_REJECTS = {
    "max_tokens": "use max_completion_tokens",
    "temperature": "reasoning models take only the default",
    "top_p": "reasoning models take only the default",
}
REASONING_ONLY = {"chat": ("reasoning_effort",), "responses": ("reasoning",)}


def check_chat(
    body: JSON, profile: ModelProfile, *, reasoning_params: bool, tool_choices: frozenset[str] = ALL_TOOL_CHOICES
) -> Iterator[Finding]:
    """Every rule a Chat Completions-shaped body breaks, in body order (OpenAI's reasoning parameters too when
    ``reasoning_params``: the compatible vendors switch reasoning with their own parameter; ``tool_choices``: the
    neutral tool choices the endpoint takes, ``named`` for a forced tool)."""
    if reasoning_params:
        yield from _params(body, profile, "chat")
    yield from tools.check("chat", body, profile)
    choice = body.get("tool_choice")
    if choice is not None and ("named" if isinstance(choice, dict) else choice) not in tool_choices:
        yield TOOL_CHOICE_SUPPORTED.at(pointer("tool_choice"), f"takes {', '.join(sorted(tool_choices))}")
    msgs: list[JSON] = body.get("messages") or []
    seen: set[str] = set()
    open_calls: list[str] = []
    answered: set[str] = set()
    for i, msg in enumerate(msgs):
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in open_calls:
                rule = CHAT_CALL_ANSWERED if call_id in answered else CHAT_RESULT_BEFORE_CALL
                yield rule.at(pointer("messages", i), f"tool message for {call_id!r}")
            else:
                open_calls.remove(call_id)
                answered.add(call_id)
            continue
        yield from _unanswered(open_calls, msgs, i)
        if role == "assistant" and msg.get("content") is None and not msg.get("tool_calls"):
            yield ASSISTANT_CONTENT.at(pointer("messages", i), "content is null and there are no tool_calls")
        open_calls = []
        answered = set()
        for j, call in enumerate(msg.get("tool_calls") or ()):
            call_id = call.get("id")
            if call_id in seen:
                yield UNIQUE_IDS.at(pointer("messages", i, "tool_calls", j), f"tool call id {call_id!r} is used twice")
            if isinstance(call_id, str) and len(call_id) > MAX_CALL_ID:
                where = pointer("messages", i, "tool_calls", j, "id")
                yield CALL_ID_LENGTH.at(where, f"tool call id of {len(call_id)} characters")
            seen.add(str(call_id))
            open_calls.append(str(call_id))
    yield from _unanswered(open_calls, msgs, len(msgs))


def _unanswered(open_calls: list[str], msgs: list[JSON], end: int) -> Iterator[Finding]:
    if not open_calls:
        return
    start = end - 1
    while start >= 0 and msgs[start].get("role") == "tool":
        start -= 1
    for call_id in open_calls:
        yield CHAT_CALL_ANSWERED.at(pointer("messages", start), f"call {call_id!r} has no tool message right after")


def check_responses(body: JSON, profile: ModelProfile) -> Iterator[Finding]:
    """Every rule a Responses body breaks, in body order."""
    yield from _params(body, profile, "responses")
    limit = body.get("max_output_tokens")
    if isinstance(limit, int) and limit < MIN_OUTPUT_TOKENS:
        yield MIN_OUTPUT.at(pointer("max_output_tokens"), f"max_output_tokens is {limit}")
    yield from tools.check("responses", body, profile)
    raw = body.get("input")
    items: list[JSON] = raw if isinstance(raw, list) else []
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            call_id = str(item.get("call_id"))
            if call_id in calls:
                yield UNIQUE_IDS.at(pointer("input", i), f"call id {call_id!r} is used twice")
            calls[call_id] = i
        elif kind == "function_call_output":
            call_id = str(item.get("call_id"))
            if call_id not in calls:
                yield RESPONSES_RESULT_BEFORE_CALL.at(pointer("input", i), f"output for {call_id!r}")
            elif call_id in answered:
                yield RESPONSES_CALL_ANSWERED.at(pointer("input", i), f"call {call_id!r} is answered twice")
            answered.add(call_id)
        elif kind == "reasoning":
            following = items[i + 1] if i + 1 < len(items) else {}
            if following.get("type") not in ("function_call", "message") and following.get("role") != "assistant":
                yield REASONING_ITEM_FOLLOWED.at(pointer("input", i), f"followed by {following.get('type', 'nothing')}")
    for call_id, i in calls.items():
        if call_id not in answered:
            yield RESPONSES_CALL_ANSWERED.at(pointer("input", i), f"call {call_id!r} has no output")


def _params(body: JSON, profile: ModelProfile, api: str) -> Iterator[Finding]:
    if profile.reasoning_model:
        for key, instead in REASONING_REJECTS.items():
            if key in body:
                yield REASONING_PARAMS.at(pointer(key), f"{key} is not accepted by {profile.name}: {instead}")
        return
    for key in REASONING_ONLY[api]:
        if key in body:
            yield NOT_REASONING_PARAMS.at(pointer(key), f"{key} is not accepted by {profile.name}")


def check_effort(body: JSON, choice: FactsChoice) -> Iterator[Finding]:
    """The reasoning effort of a Chat (``reasoning_effort``) or Responses (``reasoning.effort``) body, checked
    against the levels the model table gives the model: an error where its entry refuses the level, a warning
    where the entry is silent and the level is not one every reasoning model takes."""
    reasoning = body.get("reasoning")
    at, effort = (
        (pointer("reasoning", "effort"), reasoning.get("effort"))
        if isinstance(reasoning, dict)
        else (pointer("reasoning_effort"), body.get("reasoning_effort"))
    )
    levels = effort_levels(choice)
    if not isinstance(effort, str) or not levels or effort in levels or choice.facts is None:
        return
    takes = ", ".join(levels)
    detail = f"{choice.facts.model} takes {takes}, not {effort!r} ({choice.facts.source})"
    if refused_effort(choice, effort):
        yield EFFORT_LEVEL.at(at, detail)
    else:
        yield Rule(EFFORT_LEVEL.id, "warning", EFFORT_LEVEL.summary, EFFORT_LEVEL.authority).at(at, detail)
