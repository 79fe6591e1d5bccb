"""Anthropic Messages (``POST /v1/messages``): docs/providers.md section 3. Translation only."""

from __future__ import annotations

import hashlib
import re
import string
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, assert_never
from urllib.parse import urlsplit

from core.llm import messages as llm
from core.models.table import facts_for
from core.providers import base
from core.providers.base import JSON, NamedToolChoice, ReadBody, RequestContext, RequestOptions, ToolChoice, ToolSpec
from core.providers.dialects import anthropic_read, anthropic_stream
from core.providers.dialects.anthropic_media import (
    IMAGES_PER_REQUEST,
    IMAGES_PER_REQUEST_WIDE,
    NARROW_CONTEXT,
    media_block,
)
from core.providers.dialects.anthropic_thinking import (
    before_trailing_text,
    leading_thinking,
    msg_id_of,
    settle_thinking,
    strip_final_thinking,
    table_profile,
    thinking_on,
    thinking_param,
)
from core.providers.dialects.anthropic_wire import MESSAGES_PATH, WIRE
from core.providers.profiles import ModelProfile, ThinkingMode, ToolNameRule
from core.providers.sampling import SamplingRanges, sampling
from core.providers.turns import Turns

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding

# max_tokens is Required on every request [SDK: MessageCreateParamsBase].
DEFAULT_MAX_TOKENS = 4096
# The preflight rules the fixes of this module answer (same ids as core/preflight/anthropic.py).
NO_PREFILL_RULE = "no-prefill"
NON_EMPTY_RULE = "non-empty-content"
TRAILING_WHITESPACE_RULE = "final-no-trailing-whitespace"
# The user turn added after a final assistant turn for a model that takes no prefill.
CONTINUE_TEXT = "(continue)"
# tool_use ids should match this [unverified; docs/providers.md section 3]; others are rewritten consistently.
TOOL_ID_CHARS = string.ascii_letters + string.digits + "_-"
TOOL_ID_INVALID = re.compile(r"[^A-Za-z0-9_-]")
TOOL_ID_DIGEST_BYTES = 4  # 8 hex digits after a rewritten id
UNSIGNED_REASONING_DROPPED = "unsigned reasoning_content cannot be replayed to Anthropic; dropped"

# tool_choice types [SDK: ToolChoiceParam]: auto, none, any (some tool must be called), tool (this one).
TOOL_CHOICE_TYPES = {"auto": "auto", "none": "none", "required": "any"}
# temperature "Ranges from 0.0 to 1.0" (docs.claude.com/en/api/messages); OpenAI's go to 2. top_p: 400 "top_p: range:
# -1 or 0..1" (anthropics/anthropic-sdk-typescript#484). No documented limit on stop_sequences. anthropic 1.0 dropped
# temperature and top_p from its request types; the API still takes them on the models before Opus 4.7
# (simonw/llm-anthropic#82).
SAMPLING_RANGES = SamplingRanges(
    temperature_max=1.0,
    source="Anthropic Messages API reference, temperature 'Ranges from 0.0 to 1.0' (docs.claude.com/en/api/messages); "
    "400 'top_p: range: -1 or 0..1' (anthropics/anthropic-sdk-typescript#484)",
    stop_key="stop_sequences",
)
# Opus 4.7 and later: 400 "`temperature` is deprecated for this model" (axonops/cqlai#194, obot-platform/nanobot#329).
SAMPLING_DEPRECATED = "Anthropic deprecated it for this model (400 '`temperature` is deprecated for this model')"
SAMPLING_RULE = "sampling-params"  # the preflight rule of core/preflight/anthropic.py this fix answers
# Extended thinking "isn't compatible with temperature or top_k modifications as well as forced tool use";
# top_p may be set between 0.95 and 1 [docs: extended thinking, feature compatibility].
WITH_THINKING = "Anthropic refuses it while extended thinking is on (docs: extended thinking)"
THINKING_SAMPLING_RULE = "thinking-sampling"
# Only a *modified* temperature is refused: 1.0, the default, is accepted while thinking (recorded 200s:
# DataDog/dd-trace-py tests/contrib/anthropic/cassettes/anthropic_completion_thinking.yaml).
THINKING_TEMPERATURE = 1.0
THINKING_TOP_P_MIN = 0.95
FORCED_WITH_THINKING = "Anthropic 400 'Thinking may not be enabled when tool_choice forces tool use.'"
FORCED_WITH_THINKING_RULE = "forced-tool-with-thinking"
# "`temperature` and `top_p` cannot both be specified for this model" (BerriAI/litellm#15097; the Messages
# docs: "alter temperature or top_p, but not both"): temperature is kept.
BOTH_SAMPLING_RULE = "temperature-with-top-p"
BOTH_SAMPLING = "Anthropic refuses temperature and top_p together (litellm#15097); temperature was kept"


# -- model profiles ----------------------------------------------------------------------------------------------
# 400 "tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
# (modelcontextprotocol/modelcontextprotocol#1345, home-assistant/core#147760, anthropics/claude-code#96152).
ANTHROPIC_TOOL_NAMES = ToolNameRule(
    re.compile(r"[A-Za-z0-9_-]+"), 128, "Anthropic 400 '^[a-zA-Z0-9_-]{1,128}$' (claude-code#96152)"
)


def _anthropic(name: str, thinking: ThinkingMode, evidence: str, sampling: bool = True) -> ModelProfile:
    return ModelProfile(name, "anthropic", evidence, ANTHROPIC_TOOL_NAMES, thinking=thinking, sampling=sampling)


_PYDANTIC_AI_ANTHROPIC = "pydantic-ai profiles/anthropic.py"
ANTHROPIC: tuple[tuple[str, ModelProfile], ...] = (
    # "Claude Opus 4.7+ requires adaptive thinking and returns a 400 for {'type': 'enabled', 'budget_tokens'}"
    # (anthropic_disallows_budget_thinking); later generations likewise (claude-sonnet-5, claude-haiku-5-5).
    (
        r"claude-opus-4-(?:[7-9]|\d\d)|claude-(?:opus|sonnet|haiku)-(?:[5-9]|\d\d)",
        _anthropic(
            "claude-adaptive-only",
            "adaptive",
            f"{_PYDANTIC_AI_ANTHROPIC}: anthropic_disallows_budget_thinking",
            sampling=False,
        ),
    ),
    # Sonnet 4.6 and Opus 4.6 take adaptive thinking (budget is deprecated there).
    (
        r"claude-(?:opus|sonnet)-4-6",
        _anthropic("claude-adaptive", "adaptive", f"{_PYDANTIC_AI_ANTHROPIC}: anthropic_supports_adaptive_thinking"),
    ),
    # Extended thinking with a token budget: Claude 4 / 4.1 / 4.5 and 3.7 Sonnet [docs: extended thinking models].
    (
        r"claude-(?:opus|sonnet|haiku)-4(?!-[6-9])|claude-3-7-sonnet",
        _anthropic("claude-budget", "budget", "Anthropic docs, extended thinking: supported models"),
    ),
    # Claude 3 and 3.5 have no extended thinking [docs].
    (r"claude-3", _anthropic("claude-no-thinking", "none", "Anthropic docs, extended thinking: supported models")),
)
# Budget thinking is what every Claude with extended thinking took before Opus 4.7.
ANTHROPIC_CONSERVATIVE = _anthropic("claude-conservative", "budget", "the long-standing form, for an unknown model")


def tool_id(call_id: str | None) -> str:
    """A tool id Anthropic accepts: the same id when it already does; else its invalid characters as ``_``
    followed by a short digest of the id as it was.

    The digest keeps two ids apart that differ only in rejected characters (``a.b``, ``a b``): rewritten
    alike they would be two tool_use blocks with one id, which Anthropic rejects, and each result must still
    pair with its own call. Not cached: the check is cheaper than a lookup, and a process-wide cache would
    make the first build of a trace (the one a reader waits for) slower than the builds after it.
    """
    text = call_id or "call"
    # Stripping the accepted characters leaves nothing exactly when [A-Za-z0-9_-]+ would match the whole id
    # (text is never empty here); cheaper than fullmatch (bench/PERFORMANCE.md).
    if not text.lstrip(TOOL_ID_CHARS):
        return text
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=TOOL_ID_DIGEST_BYTES).hexdigest()
    return f"{TOOL_ID_INVALID.sub('_', text)}_{digest}"


class _Turns(Turns):
    """Anthropic's messages list. A record's leading thinking blocks go to the front of an assistant turn that
    has none yet, and before the turn's trailing text in one that has: thinking always leads its turn and never
    follows text, and the thinking blocks keep their order ([thinking1, tool_use1, thinking2, tool_use2] for two
    records of one step)."""

    KEY = "content"
    MODEL_ROLE = "assistant"
    TEXT_ITEM = "a user text block"
    NO_TURNS_RULE = "messages-required"

    def text(self, text: str) -> JSON:
        return _text(text)

    def extend_last(self, items: list[JSON], msg_id: str | None) -> None:
        leads = leading_thinking(items) if self.turns[-1]["role"] == "assistant" else 0
        if leads:
            merged: list[JSON] = self.turns[-1]["content"]
            # A turn's first thinking goes to its front (at 0 below), so a turn that holds thinking starts with it.
            at = before_trailing_text(merged) if leading_thinking(merged) else 0
            for item in items[:leads]:
                self.ctx.tag(item, msg_id)
            merged[at:at] = items[:leads]
            items = items[leads:]
        super().extend_last(items, msg_id)


class AnthropicDialect(base.Dialect):
    """Anthropic Messages: system at top level, blocks, tool_use/tool_result, signed thinking."""

    name = "anthropic"
    default_model = "claude-sonnet-4-6"
    description = "Anthropic Messages"
    key_var = "ANTHROPIC_API_KEY"
    base_url_var = "ANTHROPIC_BASE_URL"
    wire = WIRE
    price_id = "anthropic"
    profiles = ANTHROPIC
    conservative = ANTHROPIC_CONSERVATIVE
    suggested_models = ("claude-opus-4-7", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-3-5-haiku")
    # docs.anthropic.com/en/docs/about-claude/models: every model id starts with claude-.
    model_families = ("claude-",)
    # Anthropic's own entries first; Vertex AI's keep the retired models the dashboard still offers.
    model_table_slice = ("anthropic", "vertex_ai-anthropic_models")
    # Counted on the base64 text: 400 "image exceeds 5 MB maximum: 8259148 bytes > 5242880 bytes"
    # (anthropics/claude-code#19631; lobehub/lobehub#14711 measures it on the encoded payload).
    inline_image_limit = 5 * 1024 * 1024
    # 400 "At least one of the image dimensions exceed max allowed size: 8000 pixels" (anthropics/claude-code#4778;
    # platform.claude.com/docs/en/build-with-claude/vision: "larger than 8000x8000 px, it will be rejected").
    max_image_side = 8000
    # platform.claude.com/docs/en/build-with-claude/vision, "General limits": "If you submit more than 20 images in
    # one API request, this limit is reduced to 2000x2000 px."
    many_images = (20, 2000)
    # docs.claude.com/en/api/errors: 413 request_too_large, "The maximum request size is 32 MB for standard API
    # endpoints"; the inline media alone past it make the request too large.
    inline_request_limit = 32 * 1024 * 1024
    sampling_ranges = SAMPLING_RANGES
    sdk_types = "anthropic"
    rules_module = "core.preflight.anthropic"

    def table_profile(self, profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
        return table_profile(profile, choice)

    def max_images(self, choice: FactsChoice) -> int | None:
        """100 images for a model with a 200k-token context window, 600 for every other (and an unknown) one."""
        facts = choice.facts
        window = facts.max_input_tokens if facts is not None and choice.match != "dialect" else None
        return IMAGES_PER_REQUEST if window is not None and window <= NARROW_CONTEXT else IMAGES_PER_REQUEST_WIDE

    def validate_types(self, body: JSON) -> None:
        from core.preflight.sdk_types import anthropic_body

        anthropic_body(body)

    def check_rules(self, body: JSON, profile: ModelProfile) -> Iterator[Finding]:
        from core.preflight import anthropic as rules

        return rules.check(body, profile, prefill=takes_prefill(self, body.get("model")))

    def claims(self, url: str | None, request: JSON, response: JSON | None) -> int:
        if url is not None:
            return int(urlsplit(url).path.endswith(MESSAGES_PATH))
        if response is not None:
            return int(response.get("type") == "message")
        # A request alone: max_tokens is required here, and the roles are user and assistant only.
        messages = request.get("messages")
        roles = {m.get("role") for m in messages if isinstance(m, dict)} if isinstance(messages, list) else {None}
        return int("max_tokens" in request and roles <= {"user", "assistant"})

    normalisations = anthropic_read.NORMALISATIONS
    fold_stream = staticmethod(anthropic_stream.fold)

    def read_request(self, body: JSON) -> ReadBody:
        return anthropic_read.read_request(body)

    def read_response(self, body: JSON) -> ReadBody:
        return anthropic_read.read_response(body)

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        max_tokens = options.max_tokens or DEFAULT_MAX_TOKENS
        params: JSON = {"model": options.model or self.default_model, "max_tokens": max_tokens}
        thinking_param(params, options, self.profile(options), self.facts(ctx), ctx)
        return params

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        return [base.tool_spec(tool, "input_schema") for tool in tools]

    def place_tool_choice(self, body: JSON, choice: ToolChoice, ctx: RequestContext) -> None:
        value: JSON
        if isinstance(choice, NamedToolChoice):
            value = {"type": "tool", "name": choice.name}
        else:
            value = {"type": TOOL_CHOICE_TYPES[choice]}
        if value["type"] in ("any", "tool") and thinking_on(body):
            reason = f"tool choice {base.choice_label(choice)} sent as 'auto': {FORCED_WITH_THINKING}"
            ctx.warn(None, "tool_choice", reason, FORCED_WITH_THINKING_RULE)
            value = {"type": "auto"}
        body["tool_choice"] = value

    def place_sampling(self, body: JSON, ctx: RequestContext) -> None:
        thinking = thinking_on(body)
        both = ctx.options.temperature is not None and ctx.options.top_p is not None
        deprecated = None if self.profile(ctx.options).sampling else SAMPLING_DEPRECATED
        thinking_temperature = thinking and ctx.options.temperature != THINKING_TEMPERATURE
        sent = sampling(
            ctx,
            SAMPLING_RANGES,
            temperature_refused=deprecated or (WITH_THINKING if thinking_temperature else None),
            top_p_refused=deprecated or (BOTH_SAMPLING if both and not thinking else None),
            top_p_floor=(THINKING_TOP_P_MIN, THINKING_SAMPLING_RULE) if thinking else None,
            refused_rule=SAMPLING_RULE if deprecated else (THINKING_SAMPLING_RULE if thinking else BOTH_SAMPLING_RULE),
        )
        body.update(sent.fields(SAMPLING_RANGES))

    def reformat(self, messages: Sequence[llm.LLMMessage], ctx: RequestContext) -> JSON:
        profile = self.profile(ctx.options)
        turns = _Turns(ctx)
        results: dict[str, JSON] = {}  # call id -> tool_result block of the current tool block
        for msg in messages:
            if isinstance(msg, llm.LLMToolMessage):
                block = _tool_result(msg, tool_id(msg.tool_call_id))
                results[msg.tool_call_id or ""] = block
                turns.push("user", [block], msg.msg_id)
            elif isinstance(msg, llm.LLMAssistantMessage):
                results = {}
                turns.push("assistant", self._assistant(msg, profile, ctx), msg.msg_id)
            elif isinstance(msg, llm.LLMUserMessage):
                target = results.get(msg.attachment_of or "")
                if target is not None:
                    self._fold(target, msg, ctx)
                else:
                    turns.push_user(msg, self._blocks(msg.content, msg.msg_id, ctx))
            elif isinstance(msg, llm.LLMSystemMessage):
                turns.push_system(msg)
            elif isinstance(msg, llm.LLMTFLMessage):
                turns.push_console(msg)
            elif isinstance(msg, llm.LLMFunctionMessage):
                raise AssertionError("to_list turns legacy function results into tool results")
            else:
                assert_never(msg)
        out = turns.finish()
        _fill_blank_text(out, ctx)
        fragments: JSON = {}
        prefill = takes_prefill(self, ctx.options.model)
        thinking = ctx.options.thinking_asked is True and profile.thinking != "none"
        thinking = thinking and settle_thinking(out, fragments, prefill, ctx)
        if out and out[-1]["role"] == "assistant":
            if not prefill:
                _end_with_user(out, ctx)
            else:
                if not thinking:
                    strip_final_thinking(out[-1], ctx)
                _trim_final_text(out[-1], ctx)
        if turns.system:
            fragments["system"] = turns.system
        fragments["messages"] = out
        return fragments

    @staticmethod
    def _assistant(msg: llm.LLMAssistantMessage, profile: ModelProfile, ctx: RequestContext) -> list[JSON]:
        """A record's blocks: signed thinking first and verbatim (litellm#15601), text, then its tool_use blocks."""
        msg_id = msg.msg_id
        reasoning = msg.reasoning_content
        blocks: list[JSON] = []
        if isinstance(reasoning, tuple):
            for item in reasoning:
                if isinstance(item, llm.LLMThinking):
                    # Empty thinking text with a signature (display omitted) is kept.
                    if item.signature:
                        blocks.append({"type": "thinking", "thinking": item.thinking, "signature": item.signature})
                    else:
                        ctx.warn(msg_id, "reasoning", "thinking block without a signature; dropped")
                elif isinstance(item, llm.LLMRedactedThinking):
                    blocks.append({"type": "redacted_thinking", "data": item.data})
                else:
                    assert_never(item)
        elif reasoning:
            ctx.warn(msg_id, "reasoning", UNSIGNED_REASONING_DROPPED)
        text = base.assistant_text(msg)
        if text:
            blocks.append(_text(text))
        names = profile.tool_names
        for call in msg.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": tool_id(call.id),
                    "name": ctx.tool_name(call.name, names, msg_id),
                    "input": base.arguments_object(call, msg_id, ctx),
                }
            )
        if not blocks:
            ctx.warn(msg_id, "assistant", "empty assistant turn; placeholder text sent", NON_EMPTY_RULE)
            blocks.append(_text(base.EMPTY_TURN_PLACEHOLDER))
        return blocks

    def _fold(self, block: JSON, msg: llm.LLMUserMessage, ctx: RequestContext) -> None:
        """Put a tool result's attachments inside its tool_result block (tool results can carry images)."""
        content = block.get("content", "")
        if isinstance(content, str):
            content = block["content"] = [_text(content)] if content else []
        content.extend(self._blocks(msg.content, msg.msg_id, ctx))

    def _blocks(self, parts: Sequence[llm.LLMUserPart], msg_id: str | None, ctx: RequestContext) -> list[JSON]:
        return base.map_parts(parts, msg_id, ctx, _text, media_block)  # "text content blocks must be non-empty"


def takes_prefill(dialect: base.Dialect, model: str | None) -> bool:
    """Whether the model takes a final assistant turn (a prefill), as the model table says; True when it says
    nothing or does not know the model (the long-standing behaviour)."""
    choice = facts_for(dialect, model)
    return choice.facts is None or choice.match == "dialect" or choice.facts.says("assistant_prefill") is not False


def _end_with_user(turns: list[JSON], ctx: RequestContext) -> None:
    """Claude 4.6 and later answer 400 "This model does not support assistant message prefill. The conversation
    must end with a user message." (langchain-ai/deepagents#1585; livekit/agents#7217 adds a user turn)."""
    ctx.warn(
        msg_id_of(turns[-1], ctx),
        "history",
        f"{ctx.options.model or 'the model'} takes no prefill (a final assistant turn); a user turn asking to "
        "continue was added",
        NO_PREFILL_RULE,
    )
    turns.append({"role": "user", "content": [_text(CONTINUE_TEXT)]})


def _fill_blank_text(turns: list[JSON], ctx: RequestContext) -> None:
    """Anthropic 400 "messages: text content blocks must contain non-whitespace text" (anthropics/claude-code#23440):
    a whitespace-only text block is dropped from a turn that holds something else, or becomes placeholder text."""
    for turn in turns:
        for block in turn["content"]:
            # _is_blank_text inline: this runs per block of every request, and nearly never finds one.
            if block["type"] == "text" and block["text"] and not block["text"].strip():
                _drop_blank_text(turn, ctx)
                break


def _is_blank_text(block: JSON) -> bool:
    """Whether a block is text of whitespace only."""
    return block["type"] == "text" and bool(block["text"]) and not block["text"].strip()


def _drop_blank_text(turn: JSON, ctx: RequestContext) -> None:
    """A turn's whitespace-only text blocks dropped, or the first made placeholder text when nothing else is left."""
    content: list[JSON] = turn["content"]
    blank = [b for b in content if _is_blank_text(b)]
    owner = ctx.tag_of(blank[0])
    kept = [b for b in content if not any(b is x for x in blank)]
    ctx.warn(
        owner if isinstance(owner, str) else msg_id_of(turn, ctx),
        turn["role"],
        "a text block held only whitespace, which Anthropic refuses; "
        + ("dropped" if kept else "placeholder text sent"),
        NON_EMPTY_RULE,
    )
    if kept:
        content[:] = kept
    else:
        blank[0]["text"] = base.EMPTY_TURN_PLACEHOLDER
        content[:] = [blank[0]]


def _trim_final_text(turn: JSON, ctx: RequestContext) -> None:
    """A final assistant turn (a prefill) must not end in whitespace: 400 "final assistant content cannot end
    with trailing whitespace" [docs: prefill]. Its last text block is trimmed."""
    content: list[JSON] = turn["content"]
    last = content[-1]
    if last["type"] != "text" or last["text"] == last["text"].rstrip():
        return
    owner = ctx.tag_of(last)
    ctx.warn(
        owner if isinstance(owner, str) else msg_id_of(turn, ctx),
        "assistant",
        "the final assistant text ended in whitespace, which Anthropic rejects; trimmed",
        TRAILING_WHITESPACE_RULE,
    )
    trimmed = last["text"].rstrip()
    if trimmed:
        last["text"] = trimmed
    elif len(content) > 1:
        content.pop()
    else:
        last["text"] = base.EMPTY_TURN_PLACEHOLDER


def _text(text: str) -> JSON:
    return {"type": "text", "text": text}


def _tool_result(msg: llm.LLMToolMessage, tool_use_id: str) -> JSON:
    """A tool_result block: one literal per shape, so the common block is built at once, keys in order."""
    content = msg.content
    if msg.is_error:
        if content:
            return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content, "is_error": True}
        return {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": True}
    if content:
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
    return {"type": "tool_result", "tool_use_id": tool_use_id}


DIALECT = AnthropicDialect()
