"""Anthropic Messages: the request-time rules the SDK types cannot express (docs/providers.md section 3)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.preflight import tools
from core.preflight.findings import Finding, Rule, pointer
from core.providers.dialects.anthropic import (
    BOTH_SAMPLING_RULE,
    FORCED_WITH_THINKING,
    FORCED_WITH_THINKING_RULE,
    NO_PREFILL_RULE,
    NON_EMPTY_RULE,
    SAMPLING_DEPRECATED,
    SAMPLING_RULE,
    THINKING_SAMPLING_RULE,
    THINKING_TEMPERATURE,
    THINKING_TOP_P_MIN,
    TRAILING_WHITESPACE_RULE,
)
from core.providers.dialects.anthropic_thinking import (
    ADAPTIVE_ONLY_PROFILE,
    FINAL_THINKING_OFF_RULE,
    THINKING_BUDGET_RULE,
    THINKING_MODE_RULE,
    THINKING_ON_FINAL_TEXT_RULE,
    THINKING_ON_TOOL_TURN_RULE,
)
from core.providers.profiles import ModelProfile

JSON = dict[str, Any]
THINKING_TYPES = ("thinking", "redacted_thinking")
# The thinking parameter types that switch thinking on; absent or "disabled" is off.
THINKING_ON = ("enabled", "adaptive")
# The thinking types each profile's thinking mode takes: Sonnet/Opus 4.6 still take budget thinking
# (deprecated there); the adaptive-only profile (Opus 4.7 and later) answers 400 to it
# (pydantic-ai anthropic_disallows_budget_thinking).
THINKING_TYPES_OF_MODE = {"none": (), "budget": ("enabled",), "adaptive": ("adaptive", "enabled")}
BUDGET_MIN = 1024

FIRST_USER = Rule(
    "first-message-user",
    "warning",
    "the first message is not a user turn",
    "anthropic-sdk-typescript#622: 'first message must use the \"user\" role' (Bedrock)",
)
ALTERNATION = Rule(
    "roles-alternate",
    "warning",
    "two consecutive turns have the same role",
    "Messages API docs: consecutive same-role turns are combined; compatible backends answer 'roles must alternate'",
)
EMPTY = Rule(
    NON_EMPTY_RULE,
    "error",
    "empty turn or empty text block",
    "Anthropic 400 'text content blocks must be non-empty' (langchain#20535, litellm#19061)",
)
UNIQUE_IDS = Rule(
    "unique-tool-ids", "error", "a tool_use id is used twice", "Anthropic 400 'tool_use ids must be unique'"
)
RESULT_BEFORE_CALL = Rule(
    "result-before-call",
    "error",
    "a tool_result answers no tool_use of the preceding assistant turn",
    "Anthropic 400 'unexpected `tool_use_id` found in `tool_result` blocks' (litellm#19061)",
)
CALL_ANSWERED = Rule(
    "call-answered-once",
    "error",
    "a tool_use is not answered exactly once in the next user turn",
    "Anthropic 400 '`tool_use` ids were found without `tool_result` blocks immediately after'",
)
RESULTS_FIRST = Rule(
    "tool-results-first",
    "error",
    "a tool_result block follows other content in its user turn",
    "Anthropic tool-use docs (platform.claude.com/docs/en/agents-and-tools/tool-use/overview): tool_result "
    "blocks come first in the user message; docs/providers.md section 3",
)
# Thinking after a tool_use is the interleaved order of merged records ([thinking1, tool_use1, thinking2,
# tool_use2]), which Anthropic forbids reordering; thinking after text comes from no response.
THINKING_LEADS = Rule(
    "thinking-leads-turn",
    "error",
    "an assistant turn holding thinking does not start with it, or a thinking block follows text",
    "Anthropic 400 'Expected `thinking` or `redacted_thinking`, but found `text`' (litellm#15601)",
)
THINKING_ON_TOOL_TURN = Rule(
    THINKING_ON_TOOL_TURN_RULE,
    "error",
    "thinking is on but the last assistant turn with tool_use does not start with thinking",
    "Anthropic 400 'Expected `thinking` or `redacted_thinking`, but found `tool_use`' "
    "(litellm#15601, pydantic-ai#2075)",
)
THINKING_ON_FINAL_TEXT = Rule(
    THINKING_ON_FINAL_TEXT_RULE,
    "error",
    "thinking is on but the final assistant turn (a prefill) does not start with thinking",
    "Anthropic 400 'Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is enabled, a final "
    "`assistant` message must start with a thinking block' (n8n-io/n8n#22550, router-for-me/CLIProxyAPI#1109)",
)
FINAL_THINKING_OFF = Rule(
    FINAL_THINKING_OFF_RULE,
    "error",
    "thinking is off but the final assistant turn holds thinking",
    "Anthropic 400 'When thinking is disabled, an `assistant` message in the final position cannot contain "
    "`thinking`' (litellm#18926)",
)
TRAILING_WHITESPACE = Rule(
    TRAILING_WHITESPACE_RULE,
    "error",
    "the final assistant content ends in whitespace",
    "Anthropic 400 'final assistant content cannot end with trailing whitespace'",
)
THINKING_MODE = Rule(
    THINKING_MODE_RULE,
    "error",
    "the thinking type is not one this model accepts",
    "Anthropic extended-thinking docs; pydantic-ai Anthropic profile (Opus 4.7+ answers 400 to budget thinking)",
)
SAMPLING_PARAMS = Rule(
    SAMPLING_RULE,
    "error",
    "temperature or top_p sent to a model that refuses them",
    f"{SAMPLING_DEPRECATED}; LiteLLM model map supports_sampling_params false (Claude Opus 4.7 and later)",
)
THINKING_SAMPLING = Rule(
    THINKING_SAMPLING_RULE,
    "error",
    "thinking is on with a temperature other than 1 or a top_p below 0.95",
    "Anthropic extended-thinking docs, feature compatibility (platform.claude.com/docs/en/build-with-claude/"
    "extended-thinking): 'Thinking isn't compatible with temperature or top_k modifications'; top_p 0.95 to 1",
)
BOTH_SAMPLING_PARAMS = Rule(
    BOTH_SAMPLING_RULE,
    "warning",
    "temperature and top_p together, which the Claude 4.5 models and later refuse",
    "Anthropic 400 '`temperature` and `top_p` cannot both be specified for this model' (BerriAI/litellm#15097); "
    "Messages API reference: 'alter temperature or top_p, but not both'",
)
THINKING_BUDGET = Rule(
    THINKING_BUDGET_RULE,
    "error",
    "thinking.budget_tokens is below 1,024 or not below max_tokens",
    'anthropic SDK ThinkingConfigEnabledParam.budget_tokens: "Must be ≥1024 and less than `max_tokens`"',
)
NO_MESSAGES = Rule(
    "messages-required",
    "error",
    "the body has no message (a system prompt alone is not a conversation)",
    'Anthropic 400 "messages must have at least one element" (Helicone/helicone#5257)',
)
NO_PREFILL = Rule(
    NO_PREFILL_RULE,
    "error",
    "the conversation ends with an assistant turn (a prefill), which this model does not take",
    'Anthropic 400 "This model does not support assistant message prefill. The conversation must end with a user '
    "message.\" (langchain-ai/deepagents#1585); the model table's supports_assistant_prefill",
)
FORCED_WITH_THINKING_CHOICE = Rule(
    FORCED_WITH_THINKING_RULE,
    "error",
    "thinking is on and the tool choice forces tool use ('any' or a named tool)",
    f"{FORCED_WITH_THINKING}; extended-thinking docs: with thinking, tool_choice takes only 'auto' or 'none'",
)

RULES = (
    FORCED_WITH_THINKING_CHOICE,
    FIRST_USER,
    NO_PREFILL,
    THINKING_BUDGET,
    NO_MESSAGES,
    ALTERNATION,
    EMPTY,
    UNIQUE_IDS,
    RESULT_BEFORE_CALL,
    CALL_ANSWERED,
    RESULTS_FIRST,
    THINKING_LEADS,
    THINKING_ON_TOOL_TURN,
    THINKING_ON_FINAL_TEXT,
    FINAL_THINKING_OFF,
    TRAILING_WHITESPACE,
    THINKING_MODE,
    SAMPLING_PARAMS,
    THINKING_SAMPLING,
    BOTH_SAMPLING_PARAMS,
)


def check(body: JSON, profile: ModelProfile, *, prefill: bool = True) -> Iterator[Finding]:
    """Every rule ``body`` breaks, in body order (``prefill``: whether the model takes a final assistant turn)."""
    turns: list[JSON] = body.get("messages") or []
    thinking = body.get("thinking")
    mode = thinking.get("type") if isinstance(thinking, dict) else None
    thinking_on = mode in THINKING_ON
    accepted = ("adaptive",) if profile.name == ADAPTIVE_ONLY_PROFILE else THINKING_TYPES_OF_MODE[profile.thinking]
    if mode in THINKING_ON and mode not in accepted:
        takes = " or ".join(repr(t) for t in accepted) or "no extended thinking"
        yield THINKING_MODE.at("/thinking", f"thinking type {mode!r}; {profile.name} takes {takes}")
    for key in ("temperature", "top_p"):
        if key in body and not profile.sampling:
            yield SAMPLING_PARAMS.at(pointer(key), f"{profile.name} takes no {key}")
    yield from _sampling(body, thinking_on)
    yield from tools.check("messages", body, profile)
    choice = body.get("tool_choice")
    if thinking_on and isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        yield FORCED_WITH_THINKING_CHOICE.at("/tool_choice", f"tool_choice type {choice.get('type')!r} with thinking")
    if mode == "enabled" and isinstance(thinking, dict):
        budget, limit = thinking.get("budget_tokens"), body.get("max_tokens")
        if isinstance(budget, int) and (budget < BUDGET_MIN or (isinstance(limit, int) and budget >= limit)):
            yield THINKING_BUDGET.at("/thinking/budget_tokens", f"budget_tokens {budget} with max_tokens {limit}")
    if not turns:
        yield NO_MESSAGES.at("/messages")
    elif not prefill and turns[-1].get("role") == "assistant":
        yield NO_PREFILL.at(pointer("messages", len(turns) - 1))
    yield from _order(turns)
    yield from _tool_pairs(turns)
    yield from _thinking(turns, thinking_on)
    yield from _final(turns, thinking_on)


def _blocks(turn: JSON) -> list[JSON]:
    content = turn.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


def _order(turns: list[JSON]) -> Iterator[Finding]:
    if turns and turns[0].get("role") != "user":
        yield FIRST_USER.at(pointer("messages", 0))
    previous = None
    for i, turn in enumerate(turns):
        role = turn.get("role")
        if role == previous:
            yield ALTERNATION.at(pointer("messages", i), f"two {role} turns in a row")
        previous = role
        blocks = _blocks(turn)
        if not blocks:
            yield EMPTY.at(pointer("messages", i, "content"), "empty turn")
        for j, block in enumerate(blocks):
            if block.get("type") == "text" and not str(block.get("text") or "").strip():
                # "text content blocks must contain non-whitespace text" (anthropics/claude-code#23440).
                detail = "whitespace-only text block" if block.get("text") else "empty text block"
                yield EMPTY.at(pointer("messages", i, "content", j), detail)


def _tool_pairs(turns: list[JSON]) -> Iterator[Finding]:
    seen: set[str] = set()
    for i, turn in enumerate(turns):
        blocks = _blocks(turn)
        uses = [(j, b.get("id")) for j, b in enumerate(blocks) if b.get("type") == "tool_use"]
        for j, use_id in uses:
            if use_id in seen:
                yield UNIQUE_IDS.at(pointer("messages", i, "content", j), f"tool_use id {use_id!r} is used twice")
            seen.add(str(use_id))
        previous = _blocks(turns[i - 1]) if i and turns[i - 1].get("role") == "assistant" else []
        asked = {b.get("id") for b in previous if b.get("type") == "tool_use"}
        answered: set[str] = set()
        leading = True
        for j, block in enumerate(blocks):
            if block.get("type") != "tool_result":
                leading = False
                continue
            result_id = block.get("tool_use_id")
            at = pointer("messages", i, "content", j)
            if not leading:
                yield RESULTS_FIRST.at(at)
            if result_id not in asked:
                yield RESULT_BEFORE_CALL.at(at, f"tool_result for {result_id!r} answers no call of the turn before")
            elif result_id in answered:
                yield CALL_ANSWERED.at(at, f"tool_use {result_id!r} is answered twice")
            answered.add(str(result_id))
        if uses:
            following = _blocks(turns[i + 1]) if i + 1 < len(turns) and turns[i + 1].get("role") == "user" else []
            results = {b.get("tool_use_id") for b in following if b.get("type") == "tool_result"}
            for j, use_id in uses:
                if use_id not in results:
                    yield CALL_ANSWERED.at(
                        pointer("messages", i, "content", j), f"tool_use {use_id!r} has no tool_result right after"
                    )


def _thinking(turns: list[JSON], thinking_on: bool) -> Iterator[Finding]:
    if not thinking_on:
        return  # thinking in earlier turns is ignored when thinking is off; the final turn is _final's
    last_tool_turn = None
    for i, turn in enumerate(turns):
        if turn.get("role") != "assistant":
            continue
        blocks = _blocks(turn)
        types = [b.get("type") for b in blocks]
        if any(t == "tool_use" for t in types):
            last_tool_turn = i
        if any(t in THINKING_TYPES for t in types) and types[0] not in THINKING_TYPES:
            yield THINKING_LEADS.at(pointer("messages", i, "content", 0), f"the turn starts with {types[0]}")
        for j in range(1, len(types)):
            if types[j] in THINKING_TYPES and types[j - 1] == "text":
                yield THINKING_LEADS.at(pointer("messages", i, "content", j), "a thinking block follows text")
    if last_tool_turn is not None:
        first = _blocks(turns[last_tool_turn])[0].get("type")
        if first not in THINKING_TYPES:
            yield THINKING_ON_TOOL_TURN.at(pointer("messages", last_tool_turn, "content", 0), f"it starts with {first}")
    final = len(turns) - 1
    if turns and turns[final].get("role") == "assistant" and final != last_tool_turn:
        blocks = _blocks(turns[final])
        if blocks and blocks[0].get("type") not in THINKING_TYPES:
            where = pointer("messages", final, "content", 0)
            yield THINKING_ON_FINAL_TEXT.at(where, f"it starts with {blocks[0].get('type')}")


def _final(turns: list[JSON], thinking_on: bool) -> Iterator[Finding]:
    if not turns or turns[-1].get("role") != "assistant":
        return
    last = len(turns) - 1
    blocks = _blocks(turns[-1])
    if not thinking_on:
        for j, block in enumerate(blocks):
            if block.get("type") in THINKING_TYPES:
                yield FINAL_THINKING_OFF.at(pointer("messages", last, "content", j))
    if blocks and blocks[-1].get("type") == "text":
        text = blocks[-1].get("text")
        if isinstance(text, str) and text != text.rstrip():
            where = pointer("messages", last, "content") if isinstance(turns[-1].get("content"), str) else None
            yield TRAILING_WHITESPACE.at(where or pointer("messages", last, "content", len(blocks) - 1))


def _sampling(body: JSON, thinking_on: bool) -> Iterator[Finding]:
    """A temperature or top_p that thinking refuses, and the two together."""
    temperature, top_p = body.get("temperature"), body.get("top_p")
    if thinking_on and temperature is not None and temperature != THINKING_TEMPERATURE:
        yield THINKING_SAMPLING.at("/temperature", f"temperature {temperature} with thinking on")
    if thinking_on and isinstance(top_p, int | float) and top_p < THINKING_TOP_P_MIN:
        yield THINKING_SAMPLING.at("/top_p", f"top_p {top_p} with thinking on (0.95 to 1 taken)")
    if temperature is not None and top_p is not None:
        yield BOTH_SAMPLING_PARAMS.at("/top_p", "temperature and top_p both set")
