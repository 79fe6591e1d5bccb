"""Anthropic's extended thinking: the ``thinking`` parameter a model takes, its budget, and the history rules
thinking brings (which turns must start with a thinking block, and what a final assistant turn may hold).

Part of the Anthropic dialect (:mod:`core.providers.dialects.anthropic`). Each fix names the preflight rule of
``core/preflight/anthropic.py`` it answers, with the same id.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, assert_never

from core.models.reasoning import Effort, effort_levels, nearest_effort
from core.providers.base import EMPTY_TURN_PLACEHOLDER

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import JSON, RequestContext, RequestOptions
    from core.providers.profiles import ModelProfile, ThinkingMode

THINKING_BUDGET_TOKENS = 2048  # must stay below max_tokens [docs]
THINKING_BUDGET_MIN = 1024  # anthropic SDK, ThinkingConfigEnabledParam.budget_tokens: "Must be ≥1024"
THINKING_DISABLED = {"type": "disabled"}  # [SDK: ThinkingConfigDisabledParam]
THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
THINKING_ON_TYPES = frozenset({"enabled", "adaptive"})
# --effort as a thinking budget: LiteLLM's DEFAULT_REASONING_EFFORT_*_THINKING_BUDGET (litellm/constants.py).
EFFORT_BUDGETS = {"minimal": THINKING_BUDGET_MIN, "low": THINKING_BUDGET_MIN, "medium": 2048, "high": 4096}
# --effort with adaptive thinking: output_config.effort [SDK: OutputConfigParam.effort low..max].
ADAPTIVE_EFFORTS: tuple[Effort, ...] = ("low", "medium", "high", "xhigh", "max")
BUDGET_EFFORTS: tuple[Effort, ...] = ("minimal", "low", "medium", "high")

# The preflight rules these fixes answer (same ids as core/preflight/anthropic.py).
THINKING_ON_TOOL_TURN_RULE = "thinking-on-last-tool-turn"
THINKING_ON_FINAL_TEXT_RULE = "thinking-on-final-assistant-turn"
FINAL_THINKING_OFF_RULE = "no-final-thinking-when-off"
THINKING_BUDGET_RULE = "thinking-budget-range"
THINKING_MODE_RULE = "thinking-mode"

# With thinking on, the last assistant turn holding tool_use must start with a thinking block: 400 "Expected
# `thinking` or `redacted_thinking`, but found `tool_use`" (BerriAI/litellm#15601). LiteLLM switches thinking
# off for a history that cannot satisfy it; so does this dialect, rather than send the request into the 400.
THINKING_OFF_REASON = (
    "thinking switched off for this request: the last assistant turn with tool_use does not start with a "
    "signed thinking block, which Anthropic requires while thinking is on"
)
# The same 400 for a final assistant turn (a prefill) that starts with text: "Expected `thinking` or
# `redacted_thinking`, but found `text`. When `thinking` is enabled, a final `assistant` message must start with a
# thinking block" (n8n-io/n8n#22550, router-for-me/CLIProxyAPI#1109); the error itself says to disable thinking.
FINAL_TEXT_REASON = (
    "thinking switched off for this request: the final assistant turn (a prefill) does not start with a thinking "
    "block, which Anthropic requires while thinking is on"
)


# Which thinking a Claude takes, from the model table's flags (LiteLLM: supports_reasoning, supports_adaptive_thinking,
# supports_legacy_thinking for a model that still takes a budget, supports_sampling_params false where temperature
# and top_p are refused): the profile names core/preflight/anthropic.py reads.
NO_THINKING_PROFILE = "claude-no-thinking"
BUDGET_PROFILE = "claude-budget"
ADAPTIVE_PROFILE = "claude-adaptive"
ADAPTIVE_ONLY_PROFILE = "claude-adaptive-only"


def table_profile(profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
    """``profile`` with the thinking mode and sampling the model table states for the model."""
    facts = choice.facts
    if facts is None:
        return profile
    mode: ThinkingMode
    if facts.says("reasoning") is not True:
        name, mode = NO_THINKING_PROFILE, "none"
    elif facts.says("adaptive_thinking"):
        name = ADAPTIVE_PROFILE if facts.says("legacy_thinking") else ADAPTIVE_ONLY_PROFILE
        mode = "adaptive"
    else:
        name, mode = BUDGET_PROFILE, "budget"
    sampling = facts.says("sampling_params") is not False
    evidence = f"{facts.source}: {facts.model}'s reasoning, adaptive_thinking, legacy_thinking and sampling_params"
    return replace(profile, name=name, thinking=mode, sampling=sampling, evidence=evidence)


def thinking_param(
    params: JSON, options: RequestOptions, profile: ModelProfile, choice: FactsChoice, ctx: RequestContext
) -> None:
    """Put the ``thinking`` parameter (and ``output_config.effort`` for an adaptive model) into ``params``."""
    on = options.thinking_asked
    if on is None:
        return
    mode = profile.thinking
    if mode == "none":
        reason = f"{profile.name} models have no extended thinking; no thinking parameter sent"
        ctx.warn(None, "thinking", reason, THINKING_MODE_RULE)
    elif not on:
        params["thinking"] = THINKING_DISABLED
    elif mode == "adaptive":
        params["thinking"] = {"type": "adaptive"}
        if options.effort is not None:
            params["output_config"] = {"effort": _fitted(options.effort, ADAPTIVE_EFFORTS, choice, ctx)}
    elif mode == "budget":
        budget = None
        if options.effort is not None:
            budget = EFFORT_BUDGETS[_fitted(options.effort, BUDGET_EFFORTS, choice, ctx)]
        params["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget(params, ctx, budget)}
    else:
        assert_never(mode)


def _fitted(effort: str, shape: tuple[Effort, ...], choice: FactsChoice, ctx: RequestContext) -> Effort:
    """``effort`` when the model takes it in this shape, else the nearest level it does take, with a warning."""
    levels = tuple(level for level in effort_levels(choice) or shape if level in shape) or shape
    for level in levels:
        if level == effort:
            return level
    sent = nearest_effort(levels, effort)
    ctx.warn(None, "thinking", f"this model takes no effort {effort!r} (it takes {', '.join(levels)}); {sent!r} sent")
    return sent


def thinking_budget(params: JSON, ctx: RequestContext, asked_budget: int | None = None) -> int:
    """A budget Anthropic takes: "Must be ≥1024 and less than `max_tokens`" (the SDK's ThinkingConfigEnabledParam).
    When the asked ``max_tokens`` leaves no room, the budget is added to it, so the answer keeps the room asked."""
    asked: int = params["max_tokens"]
    if asked_budget is not None:
        budget = asked_budget
    else:
        budget = max(THINKING_BUDGET_MIN, min(THINKING_BUDGET_TOKENS, asked - 1))
    if budget >= asked:
        params["max_tokens"] = asked + budget
        ctx.warn(
            None,
            "max_tokens",
            f"max_tokens {asked:,} leaves no room for "
            + (f"thinking's smallest budget ({budget:,})" if asked_budget is None else f"a budget of {budget:,}")
            + f"; sent as {asked + budget:,}, the budget plus the {asked:,} asked for",
            THINKING_BUDGET_RULE,
        )
    return budget


def thinking_on(body: JSON) -> bool:
    """Whether the body switches extended thinking on (reformat may have switched it off again)."""
    thinking = body.get("thinking")
    return isinstance(thinking, dict) and thinking.get("type") in THINKING_ON_TYPES


def before_trailing_text(blocks: list[JSON]) -> int:
    """Where the run of text blocks ending ``blocks`` starts (its length when it ends with another block)."""
    at = len(blocks)
    while at > 0 and blocks[at - 1].get("type") == "text":
        at -= 1
    return at


def leading_thinking(blocks: list[JSON]) -> int:
    """How many thinking blocks a record's blocks start with."""
    n = 0
    while n < len(blocks) and blocks[n]["type"] in THINKING_TYPES:
        n += 1
    return n


def settle_thinking(turns: list[JSON], fragments: JSON, prefill: bool, ctx: RequestContext) -> bool:
    """Thinking asked for, but a turn it needs to start with thinking does not: thinking is switched off for the
    request (``fragments["thinking"]``), with a warning. Returns whether thinking stays on."""
    if not _tool_turn_leads_with_thinking(turns):
        ctx.warn(None, "thinking", THINKING_OFF_REASON, THINKING_ON_TOOL_TURN_RULE)
    elif prefill and turns and turns[-1]["role"] == "assistant" and not leading_thinking(turns[-1]["content"]):
        ctx.warn(msg_id_of(turns[-1], ctx), "thinking", FINAL_TEXT_REASON, THINKING_ON_FINAL_TEXT_RULE)
    else:
        return True
    fragments["thinking"] = THINKING_DISABLED
    return False


def _tool_turn_leads_with_thinking(turns: list[JSON]) -> bool:
    """Whether the last assistant turn holding tool_use starts with a thinking block (True when none holds one)."""
    for turn in reversed(turns):
        if turn["role"] == "assistant" and any(block["type"] == "tool_use" for block in turn["content"]):
            return bool(turn["content"][0]["type"] in THINKING_TYPES)
    return True


def strip_final_thinking(turn: JSON, ctx: RequestContext) -> None:
    """Thinking off: "an assistant message in the final position cannot contain thinking" (litellm#18926)."""
    kept = [b for b in turn["content"] if b["type"] not in THINKING_TYPES]
    if len(kept) != len(turn["content"]):
        ctx.warn(
            msg_id_of(turn, ctx),
            "reasoning",
            "thinking is not on: thinking blocks stripped from the final assistant turn",
            FINAL_THINKING_OFF_RULE,
        )
        turn["content"] = kept or [{"type": "text", "text": EMPTY_TURN_PLACEHOLDER}]


def msg_id_of(turn: JSON, ctx: RequestContext) -> str | None:
    """The msg_id a turn was tagged with, if any."""
    tag = ctx.tag_of(turn)
    return tag if isinstance(tag, str) else None
