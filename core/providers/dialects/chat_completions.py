"""The Chat Completions shape shared by OpenAI and the OpenAI-compatible Zhipu and Doubao endpoints.

Not a provider module itself: ``openai``, ``zhipu`` and ``doubao`` each subclass
:class:`ChatCompletionsDialect`, set its quirk constants and map media parts their own way.
What they share (docs/providers.md sections 1, 5, 6):

* system fragments stay ``system`` messages in place (any number, anywhere);
* tool calls are ``tool_calls`` on the assistant message, ``arguments`` the model's JSON text;
* one ``tool`` message per call, directly after the assistant turn, ``content`` a **string**
  (GLM drops list-form tool content: BerriAI/litellm#25868; no ``is_error`` field, so errors are
  said in the text);
* tool and console attachments travel in a user message after the tool block (tool messages are text-only;
  pydantic/pydantic-ai#4162);
* console output becomes a user message (the seed's table).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, assert_never
from urllib.parse import urlsplit

from core.llm import messages as llm
from core.models.reasoning import NO_REASONING_RULE
from core.providers import base
from core.providers.base import JSON, NamedToolChoice, ReadBody, RequestContext, RequestOptions, ToolChoice, ToolSpec
from core.providers.dialects import chat_read, chat_stream
from core.providers.dialects.chat_wire import CHAT_PATH, CHAT_WIRE
from core.providers.media import ResolvedMedia
from core.providers.media_rules import base64_length
from core.providers.profiles import ModelProfile, ToolNameRule
from core.providers.sampling import SamplingRanges, sampling

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding

# Tool messages have no is_error field in this shape: the error is said in the text (docs/providers.md section 1).
ERROR_PREFIX = "Error: "
# Reasoning text sent on an assistant turn that recorded none, where the provider requires the field once
# thinking is on and tools are in the history (BerriAI/litellm#37636, #28045; docs/providers.md section 9,
# bug 10). Empty: never invented.
REASONING_PLACEHOLDER = ""
# Reasoning models take no sampling settings or stop sequences: 400 "Unsupported parameter" (pydantic-ai
# openai_unsupported_model_settings: temperature, top_p, stop, ...).
REASONING_REFUSES = "OpenAI reasoning models refuse it (400 'Unsupported parameter')"
# temperature "between 0 and 2"; stop "Up to 4 sequences" [SDK: openai CompletionCreateParamsBase]; OpenAI answers
# 400 "3.0 is greater than the maximum of 2 - 'temperature'" (Frrrrrrrrank/auto_job__find__chatgpt__rpa#40); top_p
# 0 to 1 inclusive (huggingface/text-generation-inference#2228, matching OpenAI's range).
OPENAI_SAMPLING = SamplingRanges(
    temperature_max=2.0,
    source="openai SDK CompletionCreateParamsBase: temperature 'between 0 and 2', stop 'Up to 4 sequences' "
    "(platform.openai.com/docs/api-reference/chat/create); 400 '3.0 is greater than the maximum of 2 - "
    "'temperature'' (Frrrrrrrrank/auto_job__find__chatgpt__rpa#40)",
    max_stop=4,
)


# -- model profiles of the OpenAI models (and the OpenAI-compatible vendors' helper) --------------------------
# [SDK: openai FunctionDefinition.name] "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum
# length of 64". Zhipu and Doubao copy OpenAI's schema [unverified]; they use the same rule.
OPENAI_TOOL_NAMES = ToolNameRule(re.compile(r"[A-Za-z0-9_-]+"), 64, "openai SDK FunctionDefinition.name")


def openai_profile(
    dialect: str, name: str, evidence: str, reasoning: bool = False, effort_off: str = "low", thinking_off: bool = True
) -> ModelProfile:
    """A profile of a model sent through OpenAI's request shapes (OpenAI's tool-name rule)."""
    return ModelProfile(
        name,
        dialect,
        evidence,
        OPENAI_TOOL_NAMES,
        reasoning_model=reasoning,
        effort_off=effort_off,
        thinking_off=thinking_off,
    )


_PYDANTIC_AI_OPENAI = "pydantic-ai profiles/openai.py"


def openai_profiles(dialect: str) -> tuple[tuple[str, ModelProfile], ...]:
    """The OpenAI model profiles, for the dialect ``dialect`` (Chat Completions or Responses)."""
    return (
        # Chat variants of GPT-5 do not reason (pydantic-ai: thinking_always_enabled excludes '-chat').
        (r"gpt-5[.\d]*-chat", openai_profile(dialect, "gpt-5-chat", f"{_PYDANTIC_AI_OPENAI}: '-chat' variants")),
        # GPT-5.1 and later take reasoning_effort "none" (pydantic-ai: is_gpt_5_1_plus).
        (
            r"gpt-5\.\d",
            openai_profile(
                dialect, "gpt-5.1+", f"{_PYDANTIC_AI_OPENAI}: is_gpt_5_1_plus", reasoning=True, effort_off="none"
            ),
        ),
        # GPT-5 always reasons; its lowest effort is "minimal" [docs: reasoning].
        (
            r"gpt-5",
            openai_profile(dialect, "gpt-5", f"{_PYDANTIC_AI_OPENAI}: is_gpt_5", reasoning=True, effort_off="minimal"),
        ),
        # o-series always reason and reject sampling settings (pydantic-ai openai_unsupported_model_settings).
        (
            r"(?:^|[/.])o\d",
            openai_profile(
                dialect, "o-series", f"{_PYDANTIC_AI_OPENAI}: is_o_series", reasoning=True, thinking_off=False
            ),
        ),
        (r"gpt-4|gpt-3\.5", openai_profile(dialect, "gpt-4", "no reasoning parameters (OpenAI docs)")),
    )


# Where OpenAI's answers contradict LiteLLM's flags. GPT-5 Chat does not reason: 400 "Unsupported parameter:
# 'reasoning.effort' is not supported with this model" (Laisky/one-api#120, logancyang/obsidian-copilot#1712).
# GPT-5.2 Chat takes one effort: 400 "Unsupported value: 'reasoning_effort' does not support 'high' with this model.
# Supported values are: 'medium'." (egoist/chatwise-releases#1257).
_NO_REASONING = {"supports_reasoning": False, "source_note": "Laisky/one-api#120 (400 'reasoning.effort' unsupported)"}
OPENAI_TABLE_CORRECTIONS: dict[str, dict[str, object]] = {
    "gpt-5-chat": _NO_REASONING,
    "gpt-5-chat-latest": _NO_REASONING,
    "gpt-5.2-chat-latest": {
        "supports_low_reasoning_effort": False,
        "supports_high_reasoning_effort": False,
        "source_note": "egoist/chatwise-releases#1257 (400 'Supported values are: medium')",
    },
}


def openai_table_profile(profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
    """``profile`` with the reasoning the model table states for an OpenAI model: whether it reasons
    (``supports_reasoning``) and the least effort it takes (``supports_none_reasoning_effort``, then
    ``supports_minimal_reasoning_effort``, else low); only a model that takes ``none`` switches reasoning off."""
    facts = choice.facts
    if facts is None:
        return profile
    evidence = f"{facts.source}: {facts.model}'s supports_reasoning and its reasoning efforts"
    named = replace(profile, name=facts.model, evidence=evidence)
    if facts.says("reasoning") is not True:
        return replace(named, reasoning_model=False, effort_off="low", thinking_off=True)
    least = "none" if facts.says("none_reasoning_effort") else None
    least = least or ("minimal" if facts.says("minimal_reasoning_effort") else None)
    return replace(named, reasoning_model=True, effort_off=least or "low", thinking_off=least == "none")


# An unknown OpenAI model gets no reasoning parameters: a model without reasoning rejects reasoning_effort.
UNKNOWN_OPENAI_MODEL = "no reasoning parameters, for an unknown model"
# platform.openai.com/docs/guides/images-vision, "Image input requirements": "Up to 20MB per image", "Up to 500
# individual images per request" (Chat Completions and Responses alike); the 20 MB is the file, counted on its
# base64 text.
OPENAI_IMAGE_LIMIT = base64_length(20 * 1024 * 1024)
OPENAI_MAX_IMAGES = 500


@dataclass(frozen=True, slots=True)
class Extensions:
    """What an OpenAI-compatible vendor adds to OpenAI's Chat request types (checked by hand, then removed)."""

    params: frozenset[str]
    parts: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Content-part types of its own -> the keys each takes (a ``url`` among them)."""
    reasoning_content_back: bool = False
    """Takes ``reasoning_content`` (a string) on assistant messages."""
    string_tool_content: bool = False
    """Tool and assistant ``content`` must be a string."""
    audio_url: bool = False
    """``input_audio`` may name a ``url`` instead of inline data."""
    thinking_keys: frozenset[str] = frozenset()
    """Keys its ``thinking`` object takes besides ``type`` (``enabled`` or ``disabled``)."""


# 400 "Invalid 'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40"
# (microsoft/autogen#6377, camel-ai/camel#2215; openclaw/openclaw#875 shortens them the same way).
MAX_CALL_ID = 40
CALL_ID_LENGTH_RULE = "tool-call-id-length"  # the preflight rule of core/preflight/openai.py this fix answers
# The preflight rules of core/preflight/openai.py these fixes answer: an assistant message needs content unless it
# has tool calls; a vendor's endpoint may take fewer tool choices than OpenAI's.
ASSISTANT_CONTENT_RULE = "assistant-content-required"
TOOL_CHOICE_RULE = "tool-choice-supported"


def fitted_call_id(call_id: str | None) -> str | None:
    """A call id OpenAI takes: itself when short enough, else its start and a digest of the whole (the same in the
    call and its result, and two long ids sharing a start stay apart)."""
    if call_id is None or len(call_id) <= MAX_CALL_ID:
        return call_id
    digest = hashlib.blake2b(call_id.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
    return f"{call_id[: MAX_CALL_ID - len(digest) - 1]}_{digest}"


class ChatCompletionsDialect(base.Dialect):
    """A Chat-Completions-shaped dialect; subclasses implement :meth:`media_part` and set the quirks."""

    SYSTEM_ROLE: ClassVar[str] = "system"
    # Does the provider take assistant ``reasoning_content`` back in history?
    TAKES_REASONING_CONTENT: ClassVar[bool] = False
    # With thinking on and tool calls in history, must every assistant turn carry ``reasoning_content``?
    REASONING_ON_EVERY_TOOL_TURN: ClassVar[bool] = False
    # ``content`` of an assistant turn that only calls tools: None (OpenAI) or "" (GLM wants a string).
    EMPTY_TOOL_TURN_CONTENT: ClassVar[str | None] = None
    # Does preflight check OpenAI's reasoning parameters (``reasoning_effort``, what reasoning models reject)?
    SENDS_REASONING_EFFORT: ClassVar[bool] = False
    # What the vendor adds to OpenAI's Chat types; None: the body is OpenAI's Chat as it is.
    EXTENSIONS: ClassVar[Extensions | None] = None
    sampling_ranges = OPENAI_SAMPLING
    # What the vendor's ``thinking`` switch carries besides ``type`` when thinking is on (Extensions.thinking_keys).
    THINKING_ON: ClassVar[Mapping[str, object]] = {}
    # Hosts besides the default base URL's that serve this vendor (how a recorded exchange's URL names it).
    LOG_HOSTS: ClassVar[frozenset[str | None]] = frozenset()
    # The neutral tool choices the endpoint takes; another is sent as the default, "auto", with a warning.
    TOOL_CHOICES: ClassVar[frozenset[str]] = frozenset({"auto", "none", "required", "named"})
    wire = CHAT_WIRE
    sdk_types = "openai"
    rules_module = "core.preflight.openai"

    def validate_types(self, body: JSON) -> None:
        from core.preflight.sdk_types import compat_body, openai_chat_body

        if self.EXTENSIONS is None:
            openai_chat_body(body)
        else:
            compat_body(self.EXTENSIONS, body)

    def check_rules(self, body: JSON, profile: ModelProfile) -> Iterator[Finding]:
        from core.preflight import openai as rules

        return rules.check_chat(
            body, profile, reasoning_params=self.SENDS_REASONING_EFFORT, tool_choices=self.TOOL_CHOICES
        )

    def claims(self, url: str | None, request: JSON, response: JSON | None) -> int:
        if self.default_base_url is not None:  # a vendor: only its own hosts, as the shape is OpenAI's
            hosts = self.LOG_HOSTS | {urlsplit(self.default_base_url).hostname}
            return 2 if url is not None and urlsplit(url).hostname in hosts else 0
        if url is not None:
            return int(urlsplit(url).path.endswith(CHAT_PATH))
        return int("choices" in response if response is not None else "messages" in request)

    normalisations = chat_read.NORMALISATIONS
    fold_stream = staticmethod(chat_stream.fold)

    @property
    def sends_thinking_switch(self) -> bool:
        """Does the vendor take its own ``thinking`` object (``{"type": "enabled" | "disabled"}``)?"""
        return self.EXTENSIONS is not None and "thinking" in self.EXTENSIONS.params

    def read_request(self, body: JSON) -> ReadBody:
        switch = self.sends_thinking_switch
        return chat_read.read_request(body, effort_sent=self.SENDS_REASONING_EFFORT, switch_sent=switch)

    def read_response(self, body: JSON) -> ReadBody:
        return chat_read.read_response(body)

    def media_part(self, part: llm.LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON | str:
        """The content part for a medium, or the text that replaces it (after recording a warning)."""
        raise NotImplementedError

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        params: JSON = {"model": options.model or self.default_model}
        if options.max_tokens is not None:
            params["max_tokens"] = options.max_tokens
        thinking = options.thinking_asked  # --effort none is "disabled", any other level "enabled"
        if thinking is not None and self.sends_thinking_switch:
            params["thinking"] = {"type": "enabled", **self.THINKING_ON} if thinking else {"type": "disabled"}
        return params

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        return [{"type": "function", "function": base.tool_spec(tool, "parameters")} for tool in tools]

    def place_tool_choice(self, body: JSON, choice: ToolChoice, ctx: RequestContext) -> None:
        named = isinstance(choice, NamedToolChoice)
        if ("named" if named else choice) not in self.TOOL_CHOICES:
            label = base.choice_label(choice)
            reason = f"{self.description} takes no tool choice {label}; 'auto' sent"
            ctx.warn(None, "tool_choice", reason, TOOL_CHOICE_RULE)
            body["tool_choice"] = "auto"
        elif isinstance(choice, NamedToolChoice):
            body["tool_choice"] = {"type": "function", "function": {"name": choice.name}}
        else:
            body["tool_choice"] = choice

    def place_sampling(self, body: JSON, ctx: RequestContext) -> None:
        reasoning = self.SENDS_REASONING_EFFORT and self.profile(ctx.options).reasoning_model
        refused = REASONING_REFUSES if reasoning else None
        ranges = self.sampling_ranges or OPENAI_SAMPLING
        sent = sampling(
            ctx,
            ranges,
            temperature_refused=refused,
            top_p_refused=refused,
            stop_refused=refused,
            refused_rule=NO_REASONING_RULE,
        )
        body.update(sent.fields(ranges))

    def reformat(self, messages: Sequence[llm.LLMMessage], ctx: RequestContext) -> JSON:
        reasoning_required = (
            self.REASONING_ON_EVERY_TOOL_TURN
            and ctx.options.thinking_asked is True
            and any(type(m) is llm.LLMAssistantMessage and m.tool_calls for m in messages)
        )
        names = self.profile(ctx.options).tool_names
        out: list[JSON] = []
        # The two reasons a dropped reasoning gets, made once: a long trace drops one per assistant turn.
        dropped = (
            f"signed thinking blocks not accepted by {self.name}; dropped",
            f"reasoning_content not accepted by {self.name}; dropped",
        )
        step: _Step | None = None  # the assistant message whose calls are open, while its step's records come
        for msg in messages:
            node: JSON
            if step is not None and not isinstance(msg, llm.LLMAssistantMessage):
                step.close()
                step = None
            if isinstance(msg, llm.LLMToolMessage):
                text = ERROR_PREFIX + msg.content if msg.is_error else msg.content
                node = {"role": "tool", "tool_call_id": fitted_call_id(msg.tool_call_id), "content": text}
            elif isinstance(msg, llm.LLMAssistantMessage):
                node = self._assistant(msg, names, ctx, reasoning_required, dropped)
                if step is not None:
                    for call_node in node.get("tool_calls") or ():
                        ctx.tag(call_node, msg.msg_id)
                    step.add(node)
                    continue
                if node.get("tool_calls"):
                    step = _Step(node)
            elif isinstance(msg, llm.LLMUserMessage):
                node = {"role": "user", "content": self._user_content(msg, ctx)}
            elif isinstance(msg, llm.LLMSystemMessage):
                node = {"role": self.SYSTEM_ROLE, "content": msg.content}
            elif isinstance(msg, llm.LLMTFLMessage):
                node = {"role": "user", "content": base.console_text(msg)}
            elif isinstance(msg, llm.LLMFunctionMessage):
                raise AssertionError("to_list turns legacy function results into tool results")
            else:
                assert_never(msg)
            out.append(ctx.tag(node, msg.msg_id))
        if step is not None:
            step.close()
        return {"messages": out}

    def _assistant(
        self,
        msg: llm.LLMAssistantMessage,
        names: ToolNameRule,
        ctx: RequestContext,
        reasoning_required: bool,
        dropped: tuple[str, str],
    ) -> JSON:
        text = base.assistant_text(msg)
        out: JSON = {"role": "assistant"}
        calls = msg.tool_calls
        if calls:
            out["content"] = text or self.EMPTY_TOOL_TURN_CONTENT
            msg_id = msg.msg_id
            tool_calls: list[JSON] = []  # a loop, not a comprehension: no extra frame per turn on Python 3.11
            for call in calls:
                name = ctx.tool_name(call.name, names, msg_id)
                function = {"name": name, "arguments": base.check_arguments_text(call, msg_id, ctx)}
                call_id = fitted_call_id(call.id)
                if call_id != call.id:
                    ctx.warn(
                        msg_id,
                        "tool_call.id",
                        f"call id {call.id!r} is longer than {MAX_CALL_ID} characters; sent as {call_id!r}",
                        CALL_ID_LENGTH_RULE,
                    )
                tool_calls.append({"id": call_id, "type": "function", "function": function})
            out["tool_calls"] = tool_calls
        elif text:
            out["content"] = text
        else:
            reason = "empty assistant turn; placeholder text sent"
            ctx.warn(msg.msg_id, "assistant", reason, ASSISTANT_CONTENT_RULE)
            out["content"] = base.EMPTY_TURN_PLACEHOLDER
        reasoning = msg.reasoning_content
        if reasoning:
            if self.TAKES_REASONING_CONTENT and isinstance(reasoning, str):
                out["reasoning_content"] = reasoning
                return out
            ctx.warn(msg.msg_id, "reasoning", dropped[0] if isinstance(reasoning, tuple) else dropped[1])
        if reasoning_required:
            out["reasoning_content"] = REASONING_PLACEHOLDER
        return out

    def _user_content(self, msg: llm.LLMUserMessage, ctx: RequestContext) -> str | list[JSON]:
        parts = msg.content
        if len(parts) == 1 and type(parts[0]) is llm.LLMTextPart and msg.attachment_of is None:
            text = parts[0].text
            if text:
                return text
        out = base.map_parts(parts, msg.msg_id, ctx, _text, self._mapped)
        if msg.attachment_of is not None:
            out.insert(0, _text(base.attachments_header(msg.attachment_of)))
        if not out:
            ctx.warn(msg.msg_id, "user", "empty user turn; placeholder text sent")
            return base.EMPTY_TURN_PLACEHOLDER
        return out

    def _mapped(self, part: llm.LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
        mapped = self.media_part(part, msg_id, ctx)
        return _text(mapped) if isinstance(mapped, str) else mapped

    @staticmethod
    def image_part(
        part: llm.LLMMediaPart, media: ResolvedMedia, msg_id: str | None, ctx: RequestContext, accepted: frozenset[str]
    ) -> JSON | str:
        """``image_url`` with an http(s) URL or a data URL, when the media type (if known) is accepted."""
        if media.media_type is not None and media.media_type not in accepted:
            return ctx.degrade(part, msg_id, f"image type {media.media_type} not accepted")
        return data_url_part("image_url", media.data_url)

    @staticmethod
    def inline_audio_part(
        part: llm.LLMMediaPart, media: ResolvedMedia, msg_id: str | None, ctx: RequestContext
    ) -> JSON | str:
        """``input_audio`` with inline base64 wav or mp3 (no URL form)."""
        fmt = audio_format(media.media_type)
        if media.data is None or fmt is None:
            return ctx.degrade(part, msg_id, "input_audio takes inline wav or mp3 only")
        return {"type": "input_audio", "input_audio": {"data": media.data, "format": fmt}}


def _text(text: str) -> JSON:
    return {"type": "text", "text": text}


def data_url_part(kind_key: str, url: str) -> JSON:
    """``{"type": kind_key, kind_key: {"url": url}}``: the ``image_url``/``video_url``/``file_url`` form."""
    return {"type": kind_key, kind_key: {"url": url}}


def audio_format(media_type: str | None) -> str | None:
    """The ``input_audio.format`` for a media type (``wav``/``mp3``), or None."""
    return {"audio/wav": "wav", "audio/mpeg": "mp3"}.get(media_type or "")


class _Step:
    """An assistant message with tool calls and the later records of its step, sent as one message.

    A streamed agent writes one record per call before the results; OpenAI requires "An assistant message
    with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'", so the records
    become one message: the texts in order, then every call. Texts are joined once, when the step ends.
    """

    __slots__ = ("node", "reasoning", "texts")

    def __init__(self, node: JSON) -> None:
        self.node = node
        self.texts: list[str] = []
        self.reasoning: list[str] = []

    def add(self, later: JSON) -> None:
        """Merge a later record of the step (a message with tool calls)."""
        self.node["tool_calls"].extend(later["tool_calls"])
        if later.get("content"):
            self.texts.append(later["content"])
        if later.get("reasoning_content"):
            self.reasoning.append(later["reasoning_content"])

    def close(self) -> None:
        """Join the texts and reasoning of the merged records into the message."""
        node = self.node
        if self.texts:
            node["content"] = "\n\n".join([node["content"], *self.texts] if node.get("content") else self.texts)
        if self.reasoning:
            first = node.get("reasoning_content")
            node["reasoning_content"] = "\n\n".join([first, *self.reasoning] if first else self.reasoning)
