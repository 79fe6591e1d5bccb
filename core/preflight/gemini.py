"""Gemini generateContent: the request-time rules the SDK types cannot express (docs/providers.md section 4)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.models.reasoning import reasons
from core.preflight import tools
from core.preflight.findings import Finding, Rule, pointer
from core.providers.dialects.gemini import FUNCTION_RESPONSE_MIME_RULE, FUNCTION_RESPONSE_MIME_TYPES
from core.providers.dialects.gemini_model_rules import (
    FILE_URI_MIME_RULE,
    FILE_URI_RULE,
    NO_SYSTEM_RULE,
    NO_THINKING_RULE,
    THINKING_CONFIG_RULE,
    file_uri_refusal,
    takes_system,
)
from core.providers.profiles import ModelProfile

if TYPE_CHECKING:
    from core.models.table import FactsChoice

JSON = dict[str, Any]

FIRST_USER = Rule(
    "first-message-user",
    "warning",
    "the first content is not a user turn",
    "docs/providers.md section 7: a model-first history is unsafe on Gemini",
)
EMPTY = Rule(
    "non-empty-content",
    "error",
    "empty parts or empty text",
    "Gemini 400 'contents.parts must not be empty' (langchainjs#9987)",
)
UNIQUE_IDS = Rule(
    "unique-tool-ids",
    "error",
    "a functionCall id is used twice",
    "functionResponse pairs with its functionCall by id (google-genai FunctionResponse.id)",
)
RESULT_BEFORE_CALL = Rule(
    "result-before-call",
    "error",
    "a functionResponse does not directly follow a model turn with its functionCall",
    "Gemini 400: 'function response turn comes immediately after a function call turn' (langchain#27799)",
)
CALL_ANSWERED = Rule(
    "call-answered-once",
    "error",
    "the functionCalls of a model turn are not answered one for one in the next turn",
    "Gemini 400 'number of function response parts is equal to the number of function call parts'",
)
RESPONSE_NAME = Rule(
    "response-names-its-call",
    "error",
    "a functionResponse's name is not the name of the call it answers",
    "docs/providers.md section 4: functionResponse.name must equal the call's name",
)
RESPONSE_PARTS = Rule(
    "function-response-parts",
    "error",
    "functionResponse.parts is sent to a model that does not take it",
    "Gemini 400 'function_response.parts is not supported for this model' (gemini-cli#19436; "
    "Vercel AI SDK supportsFunctionResponseParts)",
)
RESPONSE_FILE_DATA = Rule(
    "function-response-inline-only",
    "error",
    "a functionResponse part holds fileData (a file URI); only inline data may go there",
    "js-genai types.FunctionResponseFileData (googleapis.github.io/js-genai): 'URI based data for function "
    "response. This data type is not supported in Gemini API.'",
)
RESPONSE_MIME = Rule(
    FUNCTION_RESPONSE_MIME_RULE,
    "error",
    "a functionResponse part holds inline data of a MIME type function responses do not take",
    "ai.google.dev/gemini-api/docs/function-calling#multimodal: 'Images: image/png, image/jpeg, image/webp; "
    "Documents: application/pdf, text/plain'",
)

THINKING_CONFIG = Rule(
    THINKING_CONFIG_RULE,
    "error",
    "a thinkingConfig this model does not take",
    "Gemini docs, thinking: Gemini 3 takes thinkingLevel (400 with both it and thinkingBudget), 2.5 takes "
    "thinkingBudget; 2.5 Pro and 3 Pro answer 400 'Budget 0 is invalid. This model only works in thinking mode.'",
)
NO_THINKING = Rule(
    "thinking-config",
    "warning",
    "a thinkingConfig sent to a model without thinking",
    "Gemini docs, thinking: supported models (2.0 and 1.5 do not think)",
)
NO_CONTENTS = Rule(
    "contents-required",
    "error",
    "the body has no content (a system instruction alone is not a conversation)",
    "Gemini API reference, models.generateContent (ai.google.dev/api/generate-content#request-body): "
    '"contents[] Required"',
)
NO_SYSTEM = Rule(
    NO_SYSTEM_RULE,
    "error",
    "a systemInstruction sent to a model that takes none",
    "Gemini 400 'Developer instruction is not enabled for models/gemma-3-27b-it' (0xPlaygrounds/rig#788, "
    "QuantumNous/new-api#989); LiteLLM model map supports_system_messages: false",
)
FILE_URI = Rule(
    FILE_URI_RULE,
    "error",
    "a fileData.fileUri the model does not fetch (an http:// URL; an external URL on Gemini 2.0 and earlier)",
    "Gemini 400 'Invalid or unsupported file uri' (BoundaryML/baml#1548, gemini-2.0-flash); "
    "ai.google.dev/gemini-api/docs/file-input-methods; vercel/ai#16757 (no Gemini 2.0, no http)",
)
FILE_URI_MIME = Rule(
    FILE_URI_MIME_RULE,
    "error",
    "an external https fileData.fileUri of a MIME type Gemini does not fetch from a URL",
    "ai.google.dev/gemini-api/docs/file-input-methods#supported-content-types (external URLs); vercel/ai#16757 "
    "(google-provider.ts supportedExternalUrlMediaTypes, its test refuses text/markdown)",
)
TABLE_NO_THINKING = Rule(
    NO_THINKING_RULE,
    "error",
    "a thinkingConfig sent to a model the model table says does not think",
    "Gemini 400 'Thinking is not enabled for models/gemini-2.0-flash-preview-image-generation' (lobehub/lobehub#7985); "
    "LiteLLM model map supports_reasoning",
)

RULES = (
    NO_SYSTEM,
    FILE_URI,
    FILE_URI_MIME,
    TABLE_NO_THINKING,
    NO_CONTENTS,
    FIRST_USER,
    EMPTY,
    UNIQUE_IDS,
    RESULT_BEFORE_CALL,
    CALL_ANSWERED,
    RESPONSE_NAME,
    RESPONSE_PARTS,
    RESPONSE_FILE_DATA,
    RESPONSE_MIME,
    THINKING_CONFIG,
    NO_THINKING,
)


def check(body: JSON, profile: ModelProfile) -> Iterator[Finding]:
    """Every rule ``body`` breaks, in body order."""
    yield from _thinking_config(body, profile)
    yield from tools.check("generate_content", body, profile)
    contents: list[JSON] = body.get("contents") or []
    if not contents:
        yield NO_CONTENTS.at("/contents")
    elif contents[0].get("role") != "user":
        yield FIRST_USER.at(pointer("contents", 0))
    seen: set[str] = set()
    for i, content in enumerate(contents):
        parts: list[JSON] = content.get("parts") or []
        if not parts:
            yield EMPTY.at(pointer("contents", i, "parts"), "empty parts")
        for j, part in enumerate(parts):
            if "text" in part and not part["text"] and not part.get("thoughtSignature"):
                yield EMPTY.at(pointer("contents", i, "parts", j), "empty text part")
        calls = [(j, p["functionCall"]) for j, p in enumerate(parts) if isinstance(p.get("functionCall"), dict)]
        for j, call in calls:
            call_id = call.get("id")
            if call_id is not None and call_id in seen:
                yield UNIQUE_IDS.at(pointer("contents", i, "parts", j), f"functionCall id {call_id!r} is used twice")
            if call_id is not None:
                seen.add(str(call_id))
        responses = [
            (j, p["functionResponse"]) for j, p in enumerate(parts) if isinstance(p.get("functionResponse"), dict)
        ]
        for j, response in responses:
            if response.get("parts") and profile.tool_result_media != "function_response_parts":
                yield RESPONSE_PARTS.at(pointer("contents", i, "parts", j, "functionResponse", "parts"))
            for k, media in enumerate(response.get("parts") or []):
                at = pointer("contents", i, "parts", j, "functionResponse", "parts", k)
                if isinstance(media, dict) and ("fileData" in media or "file_data" in media):
                    yield RESPONSE_FILE_DATA.at(at)
                blob = (media.get("inlineData") or media.get("inline_data")) if isinstance(media, dict) else None
                mime = blob.get("mimeType", blob.get("mime_type")) if isinstance(blob, dict) else None
                if mime is not None and mime not in FUNCTION_RESPONSE_MIME_TYPES:
                    yield RESPONSE_MIME.at(at, f"{mime} is not among the types function responses take")
        if responses:
            yield from _answers(contents, i, responses)
        if calls:
            following = contents[i + 1].get("parts") or [] if i + 1 < len(contents) else []
            answered = [p for p in following if "functionResponse" in p]
            if len(answered) != len(calls):
                yield CALL_ANSWERED.at(
                    pointer("contents", i), f"{len(calls)} functionCall parts, {len(answered)} responses after them"
                )


def _answers(contents: list[JSON], i: int, responses: list[tuple[int, JSON]]) -> Iterator[Finding]:
    previous: list[JSON] = contents[i - 1].get("parts") or [] if i else []
    calls = [p["functionCall"] for p in previous if isinstance(p.get("functionCall"), dict)]
    if not i or contents[i - 1].get("role") != "model" or not calls:
        yield RESULT_BEFORE_CALL.at(pointer("contents", i, "parts", responses[0][0]))
        return
    by_id = {c.get("id"): c for c in calls if c.get("id") is not None}
    for position, (j, response) in enumerate(responses):
        at = pointer("contents", i, "parts", j)
        response_id = response.get("id")
        if response_id is not None and by_id:
            call = by_id.get(response_id)
            if call is None:
                yield RESULT_BEFORE_CALL.at(at, f"functionResponse {response_id!r} answers no call of the turn before")
                continue
        else:  # no ids: paired by order
            call = calls[position] if position < len(calls) else None
            if call is None:
                continue  # counted by call-answered-once
        if response.get("name") != call.get("name"):
            yield RESPONSE_NAME.at(at, f"named {response.get('name')!r}, answers {call.get('name')!r}")


def _thinking_config(body: JSON, profile: ModelProfile) -> Iterator[Finding]:
    config = (body.get("generationConfig") or {}).get("thinkingConfig")
    if not isinstance(config, dict):
        return
    at = pointer("generationConfig", "thinkingConfig")
    if profile.gemini_thinking == "none":
        yield NO_THINKING.at(at, f"{profile.name} does not think")
        return
    if "thinkingLevel" in config and "thinkingBudget" in config:
        yield THINKING_CONFIG.at(at, "thinkingLevel and thinkingBudget together")
    elif "thinkingLevel" in config and profile.gemini_thinking == "budget":
        yield THINKING_CONFIG.at(at, f"{profile.name} takes thinkingBudget, not thinkingLevel")
    if config.get("thinkingBudget") == 0 and not profile.thinking_off:
        yield THINKING_CONFIG.at(at, f"{profile.name} cannot switch thinking off (thinkingBudget 0)")


def check_model(body: JSON, choice: FactsChoice) -> Iterator[Finding]:
    """The rules that depend on the model: a system instruction or a thinkingConfig the model table says it does not
    take, a file URI it does not fetch."""
    yield from _file_uris(body, choice.model)
    facts = choice.facts
    if facts is None:
        return
    if "systemInstruction" in body and not takes_system(choice):
        yield NO_SYSTEM.at(pointer("systemInstruction"), f"{facts.model} takes no system instruction ({facts.source})")
    config = body.get("generationConfig")
    if isinstance(config, dict) and "thinkingConfig" in config and reasons(choice) is False:
        at = pointer("generationConfig", "thinkingConfig")
        yield TABLE_NO_THINKING.at(at, f"{facts.model} does not think ({facts.source})")


def _file_uris(body: JSON, model: str) -> Iterator[Finding]:
    for i, content in enumerate(body.get("contents") or ()):
        for j, part in enumerate(content.get("parts") or () if isinstance(content, dict) else ()):
            data = part.get("fileData") if isinstance(part, dict) else None
            if not isinstance(data, dict) or not isinstance(data.get("fileUri"), str):
                continue
            mime = data.get("mimeType")
            refused = file_uri_refusal(data["fileUri"], model, mime if isinstance(mime, str) else None)
            if refused is not None:
                rule, reason = refused
                at = pointer("contents", i, "parts", j, "fileData", "fileUri")
                yield (FILE_URI if rule == FILE_URI_RULE else FILE_URI_MIME).at(at, reason)
