"""Google Gemini ``generateContent`` as REST JSON (camelCase): docs/providers.md section 4. Translation only.

The model is part of the URL (``/models/<model>:generateContent``), not of the body.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, assert_never

from core.llm import messages as llm
from core.providers import base
from core.providers.base import JSON, NamedToolChoice, ReadBody, RequestContext, RequestOptions, ToolChoice, ToolSpec
from core.providers.dialects import gemini_read, gemini_stream
from core.providers.dialects.gemini_model_rules import (
    HAND_VERIFIED_MODELS,
    file_uri_refusal,
    fold_system,
    takes_system,
    thinking_config,
)
from core.providers.dialects.gemini_model_rules import table_profile as gemini_table_profile
from core.providers.dialects.gemini_read import DUMMY_THOUGHT_SIGNATURE, ERROR_KEY, OUTPUT_KEY, THOUGHT_SIGNATURE_KEY
from core.providers.dialects.gemini_schema import gemini_schema
from core.providers.dialects.gemini_wire import WIRE
from core.providers.profiles import GeminiThinking, ModelProfile, ToolNameRule, ToolResultMedia
from core.providers.sampling import SamplingRanges, sampling
from core.providers.turns import NON_EMPTY_RULE, Turns

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding

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
FILE_URI_MOVED = (
    "functionResponse.parts take inline data only; the file URI was sent in a user content after the responses"
)
# ai.google.dev/gemini-api/docs/function-calling#multimodal: function responses take "Images: image/png,
# image/jpeg, image/webp" and "Documents: application/pdf, text/plain"; other media go after the responses.
FUNCTION_RESPONSE_MIME_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"})
FUNCTION_RESPONSE_URI_RULE = "function-response-inline-only"
FUNCTION_RESPONSE_MIME_RULE = "function-response-mime-type"
# blog.google/innovation-and-ai/technology/developers-tools/gemini-api-new-file-limits (January 2026): "the maximum
# payload size for inline data from 20MB to 100MB (base64 encoded)"; MB read as 10^6, the lower reading.
INLINE_REQUEST_LIMIT = 100_000_000
REASONING_DROPPED = "Gemini takes no reasoning text back (thought summaries are not replayed); dropped"

# functionCallingConfig modes [SDK: FunctionCallingConfigMode]; a named choice is ANY with that one name allowed.
TOOL_CHOICE_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
# generationConfig (ai.google.dev/api/generate-content#generationconfig): temperature 0.0-2.0 on Gemini 2 and later,
# stopSequences "up to 5"; topP 0-1.
SAMPLING_RANGES = SamplingRanges(
    temperature_max=2.0,
    source="Gemini API reference, GenerationConfig (ai.google.dev/api/generate-content#generationconfig): "
    "temperature [0.0, 2.0], stopSequences 'up to 5'",
    max_stop=5,
    within=("generationConfig",),
    top_p_key="topP",
    stop_key="stopSequences",
)
MAX_SCHEMA_CHANGES = 3


# -- model profiles --------------------------------------------------------------------------------------------
# [SDK: google-genai FunctionDeclaration.name] "Must start with a letter or an underscore. Must be a-z, A-Z,
# 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 128."
GEMINI_TOOL_NAMES = ToolNameRule(
    re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*"), 128, "google-genai SDK FunctionDeclaration.name"
)


def _gemini(
    name: str,
    evidence: str,
    thinking: GeminiThinking = "none",
    thinking_off: bool = True,
    media: ToolResultMedia = "sibling_parts",
) -> ModelProfile:
    return ModelProfile(
        name,
        "gemini",
        evidence,
        GEMINI_TOOL_NAMES,
        gemini_thinking=thinking,
        thinking_off=thinking_off,
        tool_result_media=media,
    )


GEMINI: tuple[tuple[str, ModelProfile], ...] = (
    # functionResponse.parts is Gemini 3+ only: 400 "function_response.parts is not supported for this model"
    # on 2.5 (google-gemini/gemini-cli#19436); Vercel ai sets supportsFunctionResponseParts for Gemini 3.
    # Gemini 3 takes thinkingLevel and cannot switch thinking off [docs: Gemini 3 thinking].
    (
        r"gemini-[3-9]",
        _gemini(
            "gemini-3",
            "gemini-cli#19436; Vercel ai supportsFunctionResponseParts; Gemini docs thinkingLevel",
            thinking="level",
            thinking_off=False,
            media="function_response_parts",
        ),
    ),
    # 2.5 Pro: thinkingBudget 128..32768, thinking cannot be turned off [docs: thinking budgets].
    (
        r"gemini-2\.5-pro",
        _gemini("gemini-2.5-pro", "Gemini docs, thinking budgets", thinking="budget", thinking_off=False),
    ),
    # 2.5 Flash / Flash-Lite: thinkingBudget 0 switches thinking off [docs: thinking budgets].
    (r"gemini-2\.5", _gemini("gemini-2.5-flash", "Gemini docs, thinking budgets", thinking="budget")),
    # 2.0 and 1.5 are not thinking models: no thinkingConfig [docs].
    (r"gemini-(?:2\.0|1\.)", _gemini("gemini-no-thinking", "Gemini docs, thinking: supported models")),
)
# Sibling media parts are what every Gemini accepts (Vercel's fallback for supportsFunctionResponseParts=false).
GEMINI_CONSERVATIVE = _gemini("gemini-conservative", "what every Gemini accepts", thinking="budget")


class _Contents(Turns):
    """Gemini's contents list. A functionResponse content does not merge with other user content: it stays on
    its own directly after its functionCall content (langchain-ai/langchain#27799)."""

    KEY = "parts"
    MODEL_ROLE = "model"
    TEXT_ITEM = "user text"
    NO_TURNS_RULE = "contents-required"

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


class GeminiDialect(base.Dialect):
    """Gemini generateContent: roles user/model, systemInstruction, functionCall/functionResponse parts."""

    name = "gemini"
    # LangChain's ChatGoogleGenerativeAI and ChatVertexAI report these in _get_ls_params.
    other_names = ("google_genai", "google_vertexai")
    default_model = "gemini-2.5-flash"
    description = "Google Gemini generateContent (REST JSON)"
    key_var = "GEMINI_API_KEY"
    base_url_var = "GEMINI_BASE_URL"
    wire = WIRE
    price_id = "google"
    profiles = GEMINI
    conservative = GEMINI_CONSERVATIVE
    suggested_models = ("gemini-3-pro", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.0-flash")
    # ai.google.dev/gemini-api/docs/models: gemini-* and the open gemma-* models, with or without "models/".
    model_families = ("gemini-", "gemma-", "models/gemini-", "models/gemma-")
    # The Gemini API's own entries first; Vertex AI lists the same models, and some the Gemini API has retired.
    model_table_slice = ("gemini", "vertex_ai-language-models", "vertex_ai")
    model_table_extra = HAND_VERIFIED_MODELS
    inline_request_limit = INLINE_REQUEST_LIMIT
    sampling_ranges = SAMPLING_RANGES
    sdk_types = "google-genai"
    rules_module = "core.preflight.gemini"

    def table_profile(self, profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
        return gemini_table_profile(profile, choice)

    def validate_types(self, body: JSON) -> None:
        from core.preflight.sdk_types import gemini_body

        gemini_body(body)

    def check_rules(self, body: JSON, profile: ModelProfile) -> Iterator[Finding]:
        from core.preflight import gemini as rules

        return rules.check(body, profile)

    def claims(self, url: str | None, request: JSON, response: JSON | None) -> int:
        if url is not None:
            return int(gemini_read.model_of(url) is not None)
        return int("candidates" in response if response is not None else "contents" in request)

    def model_of(self, url: str) -> str | None:
        return gemini_read.model_of(url)

    normalisations = gemini_read.NORMALISATIONS
    fold_stream = staticmethod(gemini_stream.fold)

    def read_request(self, body: JSON) -> ReadBody:
        return gemini_read.read_request(body)

    def read_response(self, body: JSON) -> ReadBody:
        return gemini_read.read_response(body)

    def check_model_rules(self, body: JSON, choice: FactsChoice) -> Iterator[Finding]:
        from core.preflight import gemini as rules

        return rules.check_model(body, choice)

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        config: JSON = {}
        if options.max_tokens is not None:
            config["maxOutputTokens"] = options.max_tokens
        thinking = thinking_config(options, self.profile(options), self.facts(ctx), ctx)
        if thinking is not None:
            config["thinkingConfig"] = thinking
        return {"generationConfig": config} if config else {}

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        return [{"functionDeclarations": [base.tool_spec(tool, "parametersJsonSchema") for tool in tools]}]

    def tool_schema(self, tool: ToolSpec, ctx: RequestContext) -> ToolSpec:
        schema, changes = gemini_schema(tool.parameters)
        if not changes:
            return tool
        shown = "; ".join(changes[:MAX_SCHEMA_CHANGES])
        more = f"; and {len(changes) - MAX_SCHEMA_CHANGES} more" if len(changes) > MAX_SCHEMA_CHANGES else ""
        ctx.warn(None, "tools", f"tool {tool.name!r}: Gemini refuses part of its schema: {shown}{more}")
        return replace(tool, parameters=schema)

    def place_tool_choice(self, body: JSON, choice: ToolChoice, ctx: RequestContext) -> None:
        config: JSON
        if isinstance(choice, NamedToolChoice):
            config = {"mode": "ANY", "allowedFunctionNames": [choice.name]}
        else:
            config = {"mode": TOOL_CHOICE_MODES[choice]}
        body["toolConfig"] = {"functionCallingConfig": config}

    def place_sampling(self, body: JSON, ctx: RequestContext) -> None:
        fields = sampling(ctx, SAMPLING_RANGES).fields(SAMPLING_RANGES)
        if fields:
            body["generationConfig"] = {**body.get("generationConfig", {}), **fields}

    def reformat(self, messages: Sequence[llm.LLMMessage], ctx: RequestContext) -> JSON:
        profile = self.profile(ctx.options)
        out = _Contents(ctx)
        # call id -> functionResponse of the current tool block: a map, not a search, so that a long run of user
        # messages costs one lookup each.
        responses: dict[str, JSON] = {}
        for msg in messages:
            if isinstance(msg, llm.LLMToolMessage):
                response = {
                    "id": msg.tool_call_id,
                    # The call's name (to_list gave the result its call's name), under the same rewrite.
                    "name": ctx.tool_name(msg.name or "", profile.tool_names, msg.msg_id),
                    "response": {ERROR_KEY: msg.content} if msg.is_error else {OUTPUT_KEY: msg.content},
                }
                out.push("user", [{"functionResponse": response}], msg.msg_id, response=True)
                responses[msg.tool_call_id or ""] = response
            elif isinstance(msg, llm.LLMAssistantMessage):
                responses = {}
                out.push("model", self._model_parts(msg, profile, ctx), msg.msg_id)
            elif isinstance(msg, llm.LLMUserMessage):
                target = responses.get(msg.attachment_of or "")
                if target is not None:
                    self._fold(target, msg, out, profile, ctx)
                else:
                    out.push_user(msg, self._parts(msg.content, msg.msg_id, ctx))
            elif isinstance(msg, llm.LLMSystemMessage):
                out.push_system(msg)
            elif isinstance(msg, llm.LLMTFLMessage):
                out.push_console(msg)
            elif isinstance(msg, llm.LLMFunctionMessage):
                raise AssertionError("to_list turns legacy function results into tool results")
            else:
                assert_never(msg)
        fragments: JSON = {"contents": out.finish()}
        if out.system:
            choice = self.facts(ctx)
            if takes_system(choice):
                fragments["systemInstruction"] = {"parts": out.system}
            else:
                fold_system(fragments, out.system, choice, ctx)
        return fragments

    @staticmethod
    def _model_parts(msg: llm.LLMAssistantMessage, profile: ModelProfile, ctx: RequestContext) -> list[JSON]:
        msg_id = msg.msg_id
        if msg.reasoning_content:
            ctx.warn(msg_id, "reasoning", REASONING_DROPPED)
        text = base.assistant_text(msg)
        parts: list[JSON] = [_text(text)] if text else []
        _call_parts(msg.tool_calls, parts, msg_id, profile, ctx)
        if not parts:
            ctx.warn(msg_id, "assistant", "empty model turn; placeholder text sent", NON_EMPTY_RULE)
            parts.append(_text(base.EMPTY_TURN_PLACEHOLDER))
        return parts

    def _fold(
        self, response: JSON, msg: llm.LLMUserMessage, out: _Contents, profile: ModelProfile, ctx: RequestContext
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
            # functionResponse.parts carry inline data only: FunctionResponseFileData "is not supported in Gemini
            # API" (js-genai and kotlin-genai type docs); a file URI goes in the user content after the responses.
            inline = [part for part in media if _takes_in_response(part)]
            moved = [part for part in media if not _takes_in_response(part)]
            if inline:
                response.setdefault("parts", []).extend(inline)
            for part in moved:
                if "fileData" in part:
                    ctx.warn(msg.msg_id, "tool_result", FILE_URI_MOVED, FUNCTION_RESPONSE_URI_RULE)
                else:
                    mime = part["inlineData"]["mimeType"]
                    reason = f"functionResponse.parts take no {mime}; it was sent in a user content after the responses"
                    ctx.warn(msg.msg_id, "tool_result", reason, FUNCTION_RESPONSE_MIME_RULE)
            if moved:
                out.push("user", [_text(base.attachments_header(msg.attachment_of or "")), *moved], msg.msg_id)
        elif placement == "sibling_parts":
            out.push("user", [_text(base.attachments_header(msg.attachment_of or "")), *media], msg.msg_id)
        else:
            assert_never(placement)

    def _parts(self, parts: Sequence[llm.LLMUserPart], msg_id: str | None, ctx: RequestContext) -> list[JSON]:
        return base.map_parts(parts, msg_id, ctx, _text, self._media)

    @staticmethod
    def _media(part: llm.LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
        media = ctx.resolve(part, msg_id)
        if isinstance(media, str):
            return {"text": media}
        mime = MIME_RENAMES.get(media.media_type or "", media.media_type)
        if mime is None:
            return {"text": ctx.degrade(part, msg_id, "media type unknown (Gemini needs a mimeType)")}
        if mime not in MIME_TYPES[part.kind] and not (part.kind == "file" and mime.startswith("text/")):
            return {"text": ctx.degrade(part, msg_id, f"{part.kind} type {mime} not accepted")}
        if media.url is not None:
            refused = file_uri_refusal(media.url, ctx.options.model or GeminiDialect.default_model, mime)
            if refused is not None:
                rule, reason = refused
                return {"text": ctx.degrade(part, msg_id, reason, rule)}
            return {"fileData": {"mimeType": mime, "fileUri": media.url}}
        return {"inlineData": {"mimeType": mime, "data": media.data}}


def _text(text: str) -> JSON:
    return {"text": text}


def _takes_in_response(part: JSON) -> bool:
    """Whether a media part may go inside ``functionResponse.parts``: inline data of a type it takes."""
    blob = part.get("inlineData")
    return blob is not None and blob.get("mimeType") in FUNCTION_RESPONSE_MIME_TYPES


def _call_parts(
    calls: Sequence[llm.LLMToolCall], parts: list[JSON], msg_id: str | None, profile: ModelProfile, ctx: RequestContext
) -> None:
    """A turn's functionCall parts, each signature returned exactly where it came from."""
    any_signed = False  # a plain loop: a generator per turn costs more than the turn's calls
    for call in calls:
        if call.extra and _signature(call):
            any_signed = True
            break
    for i, call in enumerate(calls):
        name = ctx.tool_name(call.name, profile.tool_names, msg_id)
        function_call = {"id": call.id, "name": name, "args": base.arguments_object(call, msg_id, ctx)}
        signature = _signature(call) if any_signed else None
        if signature:
            parts.append({"functionCall": function_call, "thoughtSignature": signature})
        elif i == 0 and not any_signed:
            # A call Gemini did not sign (another provider's history): the first call of the step gets the
            # documented dummy; parallel calls after it carry none, as Gemini's own parallel calls do.
            parts.append({"functionCall": function_call, "thoughtSignature": DUMMY_THOUGHT_SIGNATURE})
        else:
            parts.append({"functionCall": function_call})


def _signature(call: llm.LLMToolCall) -> str | None:
    """The thought signature Gemini returned with this call, if the stored call kept one."""
    signature = call.extra.get(THOUGHT_SIGNATURE_KEY) if call.extra else None
    return signature if isinstance(signature, str) and signature else None


DIALECT = GeminiDialect()
