"""The Chat Completions shape shared by OpenAI and the OpenAI-compatible Zhipu and Doubao endpoints.

Not a provider module itself: ``openai``, ``zhipu`` and ``doubao`` each subclass
:class:`ChatCompletionsDialect`, set its quirk constants and map media parts their own way.
What they share (providers.md sections 1, 5, 6):

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

from collections.abc import Sequence
from typing import ClassVar, assert_never

from core.llm.messages import (
    LLMAssistantMessage,
    LLMFunctionMessage,
    LLMMediaPart,
    LLMMessage,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMToolMessage,
    LLMUserMessage,
)
from core.providers.base import (
    EMPTY_TURN_PLACEHOLDER,
    JSON,
    Dialect,
    RequestContext,
    RequestOptions,
    ToolSpec,
    assistant_text,
    attachments_header,
    check_arguments_text,
    console_text,
    map_parts,
    tool_spec,
)
from core.providers.media import ResolvedMedia
from core.providers.profiles import ToolNameRule

# Tool messages have no is_error field in this shape: the error is said in the text (providers.md section 1).
ERROR_PREFIX = "Error: "
# Reasoning text sent on an assistant turn that recorded none, where the provider requires the field once
# thinking is on and tools are in the history (BerriAI/litellm#37636, #28045; bug 10). Empty: never invented.
REASONING_PLACEHOLDER = ""


class ChatCompletionsDialect(Dialect):
    """A Chat-Completions-shaped dialect; subclasses implement :meth:`media_part` and set the quirks."""

    SYSTEM_ROLE: ClassVar[str] = "system"
    # Does the provider take assistant ``reasoning_content`` back in history?
    TAKES_REASONING_CONTENT: ClassVar[bool] = False
    # With thinking on and tool calls in history, must every assistant turn carry ``reasoning_content``?
    REASONING_ON_EVERY_TOOL_TURN: ClassVar[bool] = False
    # ``content`` of an assistant turn that only calls tools: None (OpenAI) or "" (GLM wants a string).
    EMPTY_TOOL_TURN_CONTENT: ClassVar[str | None] = None

    def media_part(self, part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON | str:
        """The content part for a medium, or the text that replaces it (after recording a warning)."""
        raise NotImplementedError

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        params: JSON = {"model": options.model or self.default_model}
        if options.max_tokens is not None:
            params["max_tokens"] = options.max_tokens
        return params

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        return [{"type": "function", "function": tool_spec(tool, "parameters")} for tool in tools]

    def reformat(self, messages: Sequence[LLMMessage], ctx: RequestContext) -> JSON:
        reasoning_required = (
            self.REASONING_ON_EVERY_TOOL_TURN
            and ctx.options.thinking is True
            and any(type(m) is LLMAssistantMessage and m.tool_calls for m in messages)
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
            if step is not None and not isinstance(msg, LLMAssistantMessage):
                step.close()
                step = None
            if isinstance(msg, LLMToolMessage):
                text = ERROR_PREFIX + msg.content if msg.is_error else msg.content
                node = {"role": "tool", "tool_call_id": msg.tool_call_id, "content": text}
            elif isinstance(msg, LLMAssistantMessage):
                node = self._assistant(msg, names, ctx, reasoning_required, dropped)
                if step is not None:
                    for call_node in node.get("tool_calls") or ():
                        ctx.tag(call_node, msg.msg_id)
                    step.add(node)
                    continue
                if node.get("tool_calls"):
                    step = _Step(node)
            elif isinstance(msg, LLMUserMessage):
                node = {"role": "user", "content": self._user_content(msg, ctx)}
            elif isinstance(msg, LLMSystemMessage):
                node = {"role": self.SYSTEM_ROLE, "content": msg.content}
            elif isinstance(msg, LLMTFLMessage):
                node = {"role": "user", "content": console_text(msg)}
            elif isinstance(msg, LLMFunctionMessage):
                raise AssertionError("to_list turns legacy function results into tool results")
            else:
                assert_never(msg)
            out.append(ctx.tag(node, msg.msg_id))
        if step is not None:
            step.close()
        return {"messages": out}

    def _assistant(
        self,
        msg: LLMAssistantMessage,
        names: ToolNameRule,
        ctx: RequestContext,
        reasoning_required: bool,
        dropped: tuple[str, str],
    ) -> JSON:
        text = assistant_text(msg)
        out: JSON = {"role": "assistant"}
        calls = msg.tool_calls
        if calls:
            out["content"] = text or self.EMPTY_TOOL_TURN_CONTENT
            msg_id = msg.msg_id
            tool_calls: list[JSON] = []  # a loop, not a comprehension: no extra frame per turn on Python 3.11
            for call in calls:
                name = ctx.tool_name(call.name, names, msg_id)
                function = {"name": name, "arguments": check_arguments_text(call, msg_id, ctx)}
                tool_calls.append({"id": call.id, "type": "function", "function": function})
            out["tool_calls"] = tool_calls
        elif text:
            out["content"] = text
        else:
            ctx.warn(msg.msg_id, "assistant", "empty assistant turn; placeholder text sent")
            out["content"] = EMPTY_TURN_PLACEHOLDER
        reasoning = msg.reasoning_content
        if reasoning:
            if self.TAKES_REASONING_CONTENT and isinstance(reasoning, str):
                out["reasoning_content"] = reasoning
                return out
            ctx.warn(msg.msg_id, "reasoning", dropped[0] if isinstance(reasoning, tuple) else dropped[1])
        if reasoning_required:
            out["reasoning_content"] = REASONING_PLACEHOLDER
        return out

    def _user_content(self, msg: LLMUserMessage, ctx: RequestContext) -> str | list[JSON]:
        parts = msg.content
        if len(parts) == 1 and type(parts[0]) is LLMTextPart and msg.attachment_of is None:
            text = parts[0].text
            if text:
                return text
        out = map_parts(parts, msg.msg_id, ctx, _text, self._mapped)
        if msg.attachment_of is not None:
            out.insert(0, _text(attachments_header(msg.attachment_of)))
        if not out:
            ctx.warn(msg.msg_id, "user", "empty user turn; placeholder text sent")
            return EMPTY_TURN_PLACEHOLDER
        return out

    def _mapped(self, part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
        mapped = self.media_part(part, msg_id, ctx)
        return _text(mapped) if isinstance(mapped, str) else mapped

    @staticmethod
    def image_part(
        part: LLMMediaPart, media: ResolvedMedia, msg_id: str | None, ctx: RequestContext, accepted: frozenset[str]
    ) -> JSON | str:
        """``image_url`` with an http(s) URL or a data URL, when the media type (if known) is accepted."""
        if media.media_type is not None and media.media_type not in accepted:
            return ctx.degrade(part, msg_id, f"image type {media.media_type} not accepted")
        return data_url_part("image_url", media.data_url)

    @staticmethod
    def inline_audio_part(
        part: LLMMediaPart, media: ResolvedMedia, msg_id: str | None, ctx: RequestContext
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
