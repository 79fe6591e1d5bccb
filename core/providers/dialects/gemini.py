"""Google Gemini ``generateContent`` as REST JSON (camelCase): providers.md section 4. Translation only.

The model is part of the URL (``/models/<model>:generateContent``), not of the body.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from core.llm.messages import (
    LLMAssistantMessage,
    LLMFunctionMessage,
    LLMMediaPart,
    LLMMessage,
    LLMSystemMessage,
    LLMTFLMessage,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
    LLMUserPart,
)
from core.providers.base import (
    EMPTY_TURN_PLACEHOLDER,
    JSON,
    Dialect,
    RequestContext,
    RequestOptions,
    ToolSpec,
    arguments_object,
    assistant_text,
    attachments_header,
    map_parts,
    tool_spec,
)
from core.providers.profiles import ModelProfile
from core.providers.turns import Turns

# Accepted MIME types per kind [docs; list partly unverified]; anything else degrades to text.
MIME_TYPES: dict[str, frozenset[str]] = {
    "image": frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"}),
    "audio": frozenset({"audio/wav", "audio/mp3", "audio/aiff", "audio/aac", "audio/ogg", "audio/flac"}),
    "video": frozenset(
        {
            "video/mp4",
            "video/mpeg",
            "video/mov",
            "video/avi",
            "video/x-flv",
            "video/mpg",
            "video/webm",
            "video/wmv",
            "video/3gpp",
        }
    ),
    "file": frozenset({"application/pdf"}),  # plus every text/* type
}
# Gemini's spelling of a few types (the docs list audio/mp3 and video/mov).
MIME_RENAMES = {"audio/mpeg": "audio/mp3", "video/quicktime": "video/mov", "video/x-msvideo": "video/avi"}
# Documented dummy signature for calls Gemini did not produce (history from another provider) [docs].
DUMMY_THOUGHT_SIGNATURE = "skip_thought_signature_validator"
# Provider field on a stored ToolCall that holds the signature Gemini returned with that call.
THOUGHT_SIGNATURE_KEY = "thought_signature"
# functionResponse.response keys: "output" for a result, "error" for a failure [SDK docstring].
OUTPUT_KEY, ERROR_KEY = "output", "error"
# 2.5 Pro's smallest thinkingBudget; it cannot be 0 there [docs: thinking budgets].
MIN_THINKING_BUDGET = 128
# Gemini 3's lowest level that every model of the family takes, spelled as the SDK sends it [SDK: ThinkingLevel].
LOWEST_THINKING_LEVEL = "LOW"
REASONING_DROPPED = "Gemini takes no reasoning text back (thought summaries are not replayed); dropped"


class _Contents(Turns):
    """Gemini's contents list. A functionResponse content does not merge with other user content: it stays on
    its own directly after its functionCall content (langchain-ai/langchain#27799)."""

    KEY = "parts"
    MODEL_ROLE = "model"
    TEXT_ITEM = "user text"

    def __init__(self, ctx: RequestContext) -> None:
        super().__init__(ctx)
        self.last_is_response = False
        self.response = False  # whether the items being pushed are functionResponses

    def text(self, text: str) -> JSON:
        return _text(text)

    def merges(self, role: str) -> bool:
        return self.response is self.last_is_response and super().merges(role)

    def push(self, role: str, items: list[JSON], msg_id: str | None, response: bool = False) -> None:
        self.response = response
        super().push(role, items, msg_id)
        self.last_is_response = response


class GeminiDialect(Dialect):
    """Gemini generateContent: roles user/model, systemInstruction, functionCall/functionResponse parts."""

    name = "gemini"
    default_model = "gemini-2.5-flash"
    description = "Google Gemini generateContent (REST JSON)"

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        config: JSON = {}
        if options.max_tokens is not None:
            config["maxOutputTokens"] = options.max_tokens
        if options.thinking is not None:
            thinking = self._thinking_config(options.thinking, self.profile(options), ctx)
            if thinking is not None:
                config["thinkingConfig"] = thinking
        return {"generationConfig": config} if config else {}

    @staticmethod
    def _thinking_config(on: bool, profile: ModelProfile, ctx: RequestContext) -> JSON | None:
        """``thinkingConfig`` in the shape the model takes: a budget (2.5), a level (3), or none at all."""
        shape = profile.gemini_thinking
        if shape == "none":
            if on:
                ctx.warn(None, "thinking", f"{profile.name} models do not think; no thinkingConfig sent")
            return None
        if on:
            return {"includeThoughts": True}
        if profile.thinking_off:
            return {"thinkingBudget": 0}
        if shape == "budget":
            ctx.warn(None, "thinking", f"{profile.name} cannot switch thinking off; the smallest budget was sent")
            return {"thinkingBudget": MIN_THINKING_BUDGET}
        if shape == "level":
            ctx.warn(None, "thinking", f"{profile.name} cannot switch thinking off; the lowest thinkingLevel was sent")
            return {"thinkingLevel": LOWEST_THINKING_LEVEL}
        assert_never(shape)

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        return [{"functionDeclarations": [tool_spec(tool, "parametersJsonSchema") for tool in tools]}]

    def reformat(self, messages: Sequence[LLMMessage], ctx: RequestContext) -> JSON:
        profile = self.profile(ctx.options)
        out = _Contents(ctx)
        # call id -> functionResponse of the current tool block: a map, not a search, so that a long run of user
        # messages costs one lookup each.
        responses: dict[str, JSON] = {}
        for msg in messages:
            if isinstance(msg, LLMToolMessage):
                response = {
                    "id": msg.tool_call_id,
                    # The call's name (to_list gave the result its call's name), under the same rewrite.
                    "name": ctx.tool_name(msg.name or "", profile.tool_names, msg.msg_id),
                    "response": {ERROR_KEY: msg.content} if msg.is_error else {OUTPUT_KEY: msg.content},
                }
                out.push("user", [{"functionResponse": response}], msg.msg_id, response=True)
                responses[msg.tool_call_id or ""] = response
            elif isinstance(msg, LLMAssistantMessage):
                responses = {}
                out.push("model", self._model_parts(msg, profile, ctx), msg.msg_id)
            elif isinstance(msg, LLMUserMessage):
                target = responses.get(msg.attachment_of or "")
                if target is not None:
                    self._fold(target, msg, out, profile, ctx)
                else:
                    out.push_user(msg, self._parts(msg.content, msg.msg_id, ctx))
            elif isinstance(msg, LLMSystemMessage):
                out.push_system(msg)
            elif isinstance(msg, LLMTFLMessage):
                out.push_console(msg)
            elif isinstance(msg, LLMFunctionMessage):
                raise AssertionError("to_list turns legacy function results into tool results")
            else:
                assert_never(msg)
        fragments: JSON = {"contents": out.finish()}
        if out.system:
            fragments["systemInstruction"] = {"parts": out.system}
        return fragments

    @staticmethod
    def _model_parts(msg: LLMAssistantMessage, profile: ModelProfile, ctx: RequestContext) -> list[JSON]:
        msg_id = msg.msg_id
        if msg.reasoning_content:
            ctx.warn(msg_id, "reasoning", REASONING_DROPPED)
        text = assistant_text(msg)
        parts: list[JSON] = [_text(text)] if text else []
        _call_parts(msg.tool_calls, parts, msg_id, profile, ctx)
        if not parts:
            ctx.warn(msg_id, "assistant", "empty model turn; placeholder text sent")
            parts.append(_text(EMPTY_TURN_PLACEHOLDER))
        return parts

    def _fold(
        self, response: JSON, msg: LLMUserMessage, out: _Contents, profile: ModelProfile, ctx: RequestContext
    ) -> None:
        """Attachments of a tool result: text onto the response text; media where the model takes it, inside
        ``functionResponse.parts`` (Gemini 3) or in a user content after the responses (earlier models).

        to_list places attachments after every result of their block, so the responses stay one content.
        """
        key = next(iter(response["response"]))
        media: list[JSON] = []
        for part in self._parts(msg.content, msg.msg_id, ctx):
            if "text" in part:
                response["response"][key] += "\n" + part["text"]
            else:
                media.append(part)
        if not media:
            return
        placement = profile.tool_result_media
        if placement == "function_response_parts":
            response.setdefault("parts", []).extend(media)
        elif placement == "sibling_parts":
            out.push("user", [_text(attachments_header(msg.attachment_of or "")), *media], msg.msg_id)
        else:
            assert_never(placement)

    def _parts(self, parts: Sequence[LLMUserPart], msg_id: str | None, ctx: RequestContext) -> list[JSON]:
        return map_parts(parts, msg_id, ctx, _text, self._media)

    @staticmethod
    def _media(part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return {"text": media}
        mime = MIME_RENAMES.get(media.media_type or "", media.media_type)
        if mime is None:
            return {"text": ctx.degrade(part, msg_id, "media type unknown (Gemini needs a mimeType)")}
        if mime not in MIME_TYPES[part.kind] and not (part.kind == "file" and mime.startswith("text/")):
            return {"text": ctx.degrade(part, msg_id, f"{part.kind} type {mime} not accepted")}
        if media.url is not None:
            return {"fileData": {"mimeType": mime, "fileUri": media.url}}
        return {"inlineData": {"mimeType": mime, "data": media.data}}


def _text(text: str) -> JSON:
    return {"text": text}


def _call_parts(
    calls: Sequence[LLMToolCall], parts: list[JSON], msg_id: str | None, profile: ModelProfile, ctx: RequestContext
) -> None:
    """A turn's functionCall parts, each signature returned exactly where it came from."""
    any_signed = False  # a plain loop: a generator per turn costs more than the turn's calls
    for call in calls:
        if call.extra and _signature(call):
            any_signed = True
            break
    for i, call in enumerate(calls):
        name = ctx.tool_name(call.name, profile.tool_names, msg_id)
        function_call = {"id": call.id, "name": name, "args": arguments_object(call, msg_id, ctx)}
        signature = _signature(call) if any_signed else None
        if signature:
            parts.append({"functionCall": function_call, "thoughtSignature": signature})
        elif i == 0 and not any_signed:
            # A call Gemini did not sign (another provider's history): the first call of the step gets the
            # documented dummy; parallel calls after it carry none, as Gemini's own parallel calls do.
            parts.append({"functionCall": function_call, "thoughtSignature": DUMMY_THOUGHT_SIGNATURE})
        else:
            parts.append({"functionCall": function_call})


def _signature(call: LLMToolCall) -> str | None:
    """The thought signature Gemini returned with this call, if the stored call kept one."""
    signature = call.extra.get(THOUGHT_SIGNATURE_KEY) if call.extra else None
    return signature if isinstance(signature, str) and signature else None


DIALECT = GeminiDialect()
