"""OpenAI Responses API (``POST /v1/responses``), history as ``input`` items: docs/providers.md section 2.

Translation only. Tool calls and results are items of their own, not message fields; tool results
can carry images and files (``output`` parts), so attachments stay with their result.

Reasoning items (``rs_...`` with ``encrypted_content``) are bound to the OpenAI model that produced
them and must sit directly before their following item (pydantic/pydantic-ai#2861, #3230). The stored
format has no such items, so none is ever emitted, and function_call items carry no item ``id``
(an ``fc_...`` id would demand its reasoning item): bug 11 of docs/providers.md section 9 cannot arise.
Reasoning from other providers is dropped with a warning.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, assert_never
from urllib.parse import urlsplit

from core.llm import messages as llm
from core.messages.objects import ToolCall
from core.models.reasoning import NO_REASONING_RULE
from core.providers import base
from core.providers.base import JSON, NamedToolChoice, ReadBody, RequestContext, RequestOptions, ToolChoice, ToolSpec
from core.providers.dialects import responses_read, responses_stream
from core.providers.dialects.chat_completions import (
    OPENAI_IMAGE_LIMIT,
    OPENAI_MAX_IMAGES,
    OPENAI_TABLE_CORRECTIONS,
    REASONING_REFUSES,
    UNKNOWN_OPENAI_MODEL,
    openai_profile,
    openai_profiles,
    openai_table_profile,
)
from core.providers.dialects.chat_wire import openai_wire
from core.providers.effort import reasoning_effort
from core.providers.profiles import ModelProfile, ToolNameRule
from core.providers.sampling import SamplingRanges, sampling
from core.providers.wire import ReplyFields, Usage

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding

# input_image.detail is Required in the SDK type [SDK: ResponseInputImageParam]; "auto" leaves it to the API.
IMAGE_DETAIL = "auto"
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "image/gif"})
# No audio or video part in the input content union [SDK]: they degrade to text.
NO_PART_KINDS = frozenset({"audio", "video"})
# function_call_output has no is_error: the error is said in the output text [SDK].
ERROR_PREFIX = "Error: "


def parse_reply(data: JSON) -> ReplyFields:
    """A Responses answer's output items: message text, function calls and reasoning summaries."""
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    for item in data["output"]:
        kind = item.get("type")
        if kind == "message":
            texts += [c.get("text", "") for c in item.get("content", []) if c.get("type") == "output_text"]
        elif kind == "function_call":
            calls.append(ToolCall(id=item["call_id"], name=item["name"], arguments=item.get("arguments") or ""))
        elif kind == "reasoning":
            reasoning += [s.get("text", "") for s in item.get("summary", [])]
    usage = data.get("usage") or {}
    return (
        {"content": "".join(texts), "reasoning_content": "\n".join(reasoning) or None, "tool_calls": calls or None},
        Usage(usage.get("input_tokens"), usage.get("output_tokens"), usage.get("total_tokens")),
        data.get("status"),
    )


RESPONSES_PATH = "/responses"
WIRE = openai_wire("openai-responses", RESPONSES_PATH, parse_reply, "input_tokens", "output_tokens")

# temperature "between 0 and 2" [SDK: ResponseCreateParamsBase.temperature]; there is no stop parameter.
RESPONSES_SAMPLING = SamplingRanges(
    temperature_max=2.0,
    source="openai SDK ResponseCreateParamsBase: temperature 'between 0 and 2' "
    "(platform.openai.com/docs/api-reference/responses/create)",
)
NO_STOP = "the Responses API has no stop parameter [SDK: ResponseCreateParamsBase]"


# 400 "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10 instead."
# (vectorize-io/hindsight#58; braintrustdata/lingua#186 clamps to 16 likewise).
MIN_OUTPUT_TOKENS = 16
MIN_OUTPUT_RULE = "max-output-tokens-minimum"  # the preflight rule of core/preflight/openai.py this fix answers


class OpenAIResponsesDialect(base.Dialect):
    """OpenAI Responses: a flat timeline of message, function_call and function_call_output items."""

    name = "openai-responses"
    default_model = "gpt-4.1"
    description = "OpenAI Responses API (input items)"
    key_var = "OPENAI_API_KEY"
    base_url_var = "OPENAI_BASE_URL"
    wire = WIRE
    price_id = "openai"
    profiles = openai_profiles("openai-responses")
    conservative = openai_profile("openai-responses", "openai-conservative", UNKNOWN_OPENAI_MODEL)
    suggested_models = ("gpt-5.1", "gpt-5", "gpt-5-chat", "o3", "gpt-4.1")
    # platform.openai.com/docs/models: as Chat Completions, plus the computer-use-* models of Responses.
    model_families = ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "computer-use-")
    model_table_slice = ("openai",)
    model_table_corrections = OPENAI_TABLE_CORRECTIONS
    inline_image_limit = OPENAI_IMAGE_LIMIT
    max_images_per_request = OPENAI_MAX_IMAGES
    sampling_ranges = RESPONSES_SAMPLING
    sdk_types = "openai"
    rules_module = "core.preflight.openai"

    def table_profile(self, profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
        return openai_table_profile(profile, choice)

    def validate_types(self, body: JSON) -> None:
        from core.preflight.sdk_types import openai_responses_body

        openai_responses_body(body)

    def check_rules(self, body: JSON, profile: ModelProfile) -> Iterator[Finding]:
        from core.preflight import openai as rules

        return rules.check_responses(body, profile)

    def claims(self, url: str | None, request: JSON, response: JSON | None) -> int:
        if url is not None:
            return int(urlsplit(url).path.endswith(RESPONSES_PATH))
        return int(response.get("object") == "response" if response is not None else "input" in request)

    normalisations = responses_read.NORMALISATIONS
    fold_stream = staticmethod(responses_stream.fold)

    def read_request(self, body: JSON) -> ReadBody:
        return responses_read.read_request(body)

    def read_response(self, body: JSON) -> ReadBody:
        return responses_read.read_response(body)

    def check_model_rules(self, body: JSON, choice: FactsChoice) -> Iterator[Finding]:
        from core.preflight import openai as rules

        return rules.check_effort(body, choice)

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        params: JSON = {"model": options.model or self.default_model}
        if options.max_tokens is not None:
            params["max_output_tokens"] = max(options.max_tokens, MIN_OUTPUT_TOKENS)
            if options.max_tokens < MIN_OUTPUT_TOKENS:
                ctx.warn(
                    None,
                    "max_tokens",
                    f"max_tokens {options.max_tokens} is below the Responses API's minimum of {MIN_OUTPUT_TOKENS}; "
                    f"sent as {MIN_OUTPUT_TOKENS}",
                    MIN_OUTPUT_RULE,
                )
        effort = reasoning_effort(options, self.profile(options), self.facts(ctx), ctx)
        if effort is not None:
            params["reasoning"] = {"effort": effort}
        return params

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        # Flat, and parameters and strict are Required in the SDK type [SDK: FunctionToolParam].
        return [{"type": "function", **base.tool_spec(tool, "parameters"), "strict": False} for tool in tools]

    def place_tool_choice(self, body: JSON, choice: ToolChoice, ctx: RequestContext) -> None:
        # A forced function is flat here [SDK: ToolChoiceFunctionParam], not nested as in Chat Completions.
        if isinstance(choice, NamedToolChoice):
            body["tool_choice"] = {"type": "function", "name": choice.name}
        else:
            body["tool_choice"] = choice

    def place_sampling(self, body: JSON, ctx: RequestContext) -> None:
        refused = REASONING_REFUSES if self.profile(ctx.options).reasoning_model else None
        sent = sampling(
            ctx,
            RESPONSES_SAMPLING,
            temperature_refused=refused,
            top_p_refused=refused,
            stop_refused=NO_STOP,
            refused_rule=NO_REASONING_RULE,
        )
        body.update(sent.fields(RESPONSES_SAMPLING))  # no stop: refused above (NO_STOP)

    def reformat(self, messages: Sequence[llm.LLMMessage], ctx: RequestContext) -> JSON:
        names = self.profile(ctx.options).tool_names
        items: list[JSON] = []
        outputs: dict[str, JSON] = {}  # call id -> function_call_output item of the current tool block
        tag = ctx.tag
        # The function_call items of the open step, placed when its records end: the text of every record of a
        # step goes first, so the step's calls stay together, each answered by the outputs that follow them.
        calls: list[JSON] = []
        for msg in messages:
            if calls and not isinstance(msg, llm.LLMAssistantMessage):
                items.extend(calls)
                calls = []
            match msg:
                case llm.LLMToolMessage():
                    text = ERROR_PREFIX + msg.content if msg.is_error else msg.content
                    item = {"type": "function_call_output", "call_id": msg.tool_call_id, "output": text}
                    outputs[msg.tool_call_id or ""] = item
                    items.append(tag(item, msg.msg_id))
                case llm.LLMAssistantMessage():
                    outputs = {}
                    self._assistant(msg, names, items, calls, ctx)
                case llm.LLMUserMessage():
                    target = outputs.get(msg.attachment_of or "")
                    parts = self._parts(msg.content, msg.msg_id, ctx)
                    if target is not None:
                        output = target["output"]
                        if isinstance(output, str):
                            output = target["output"] = [{"type": "input_text", "text": output}] if output else []
                        output.extend(parts)
                    else:
                        items.append(tag({"role": "user", "content": _content(parts, msg, ctx)}, msg.msg_id))
                case llm.LLMSystemMessage():
                    items.append(tag({"role": "system", "content": msg.content}, msg.msg_id))
                case llm.LLMTFLMessage():
                    items.append(tag({"role": "user", "content": base.console_text(msg)}, msg.msg_id))
                case llm.LLMFunctionMessage():
                    raise AssertionError("legacy function results are converted by to_list")
                case _:
                    assert_never(msg)
        items.extend(calls)
        return {"input": items}

    @staticmethod
    def _assistant(
        msg: llm.LLMAssistantMessage, names: ToolNameRule, items: list[JSON], calls: list[JSON], ctx: RequestContext
    ) -> None:
        """The record's text as a message item in ``items``; its function_call items in ``calls``."""
        if msg.reasoning_content:
            ctx.warn(msg.msg_id, "reasoning", "only OpenAI's own reasoning items can be replayed to Responses; dropped")
        text = base.assistant_text(msg)
        tag = ctx.tag
        if text or not msg.tool_calls:
            if not text:
                ctx.warn(msg.msg_id, "assistant", "empty assistant turn; placeholder text sent")
            items.append(tag({"role": "assistant", "content": text or base.EMPTY_TURN_PLACEHOLDER}, msg.msg_id))
        for call in msg.tool_calls:
            calls.append(
                tag(
                    {
                        "type": "function_call",
                        "call_id": call.id,
                        "name": ctx.tool_name(call.name, names, msg.msg_id),
                        "arguments": base.check_arguments_text(call, msg.msg_id, ctx),
                    },
                    msg.msg_id,
                )
            )

    def _parts(self, parts: Sequence[llm.LLMUserPart], msg_id: str | None, ctx: RequestContext) -> list[JSON]:
        return base.map_parts(parts, msg_id, ctx, _input_text, self._media)

    @staticmethod
    def _media(part: llm.LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
        kind = part.kind
        if kind in NO_PART_KINDS:
            return {"type": "input_text", "text": ctx.degrade(part, msg_id, f"Responses input takes no {kind}")}
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return {"type": "input_text", "text": media}
        if kind == "image":
            if media.media_type is not None and media.media_type not in IMAGE_TYPES:
                return {
                    "type": "input_text",
                    "text": ctx.degrade(part, msg_id, f"image type {media.media_type} not accepted"),
                }
            return {"type": "input_image", "image_url": media.data_url, "detail": IMAGE_DETAIL}
        if media.url is not None:
            return {"type": "input_file", "file_url": media.url}
        return {"type": "input_file", "file_data": media.data_url, "filename": part.filename or "attachment"}


def _input_text(text: str) -> JSON:
    return {"type": "input_text", "text": text}


def _content(parts: list[JSON], msg: llm.LLMUserMessage, ctx: RequestContext) -> str | list[JSON]:
    """A user item's content: a plain string for one text part, else the parts."""
    if msg.attachment_of is not None:
        parts = [{"type": "input_text", "text": base.attachments_header(msg.attachment_of)}, *parts]
    if len(parts) == 1 and parts[0]["type"] == "input_text":
        text: str = parts[0]["text"]
        return text
    if not parts:
        ctx.warn(msg.msg_id, "user", "empty user turn; placeholder text sent")
        return base.EMPTY_TURN_PLACEHOLDER
    return parts


DIALECT = OpenAIResponsesDialect()
