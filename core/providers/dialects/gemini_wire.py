"""Gemini's wire: the google-genai SDK's client, its errors, the typed call, and the answer read back."""

from __future__ import annotations

import json
import ssl
from typing import Any

from core.messages.objects import ToolCall
from core.providers.base import JSON
from core.providers.dialects.gemini_read import THOUGHT_SIGNATURE_KEY
from core.providers.wire import ErrorTable, ReplyFields, StepUsage, Usage, Wire, int_or_none
from core.sdk_imports import SDK_IMPORT_LOCK


def _client(base_url: str | None, key: str, timeout: float, follow_redirects: bool, verify: ssl.SSLContext) -> Any:
    with SDK_IMPORT_LOCK:
        from google import genai
        from google.genai import types

    options = types.HttpOptions(
        base_url=base_url,
        timeout=int(timeout * 1000),
        retry_options=types.HttpRetryOptions(attempts=1),
        client_args={"follow_redirects": follow_redirects, "verify": verify},
        async_client_args={"follow_redirects": follow_redirects},
    )
    return genai.Client(api_key=key, http_options=options)


def _call(client: Any, model: str, body: JSON) -> tuple[int, str, dict[str, str]]:
    """google-genai takes typed objects, so the REST body is read back into its types first."""
    with SDK_IMPORT_LOCK:
        from google.genai import types

    contents = [types.Content.model_validate(c) for c in body.get("contents", [])]
    config: dict[str, Any] = dict(body.get("generationConfig") or {})
    for key in ("systemInstruction", "tools", "toolConfig", "safetySettings"):
        if key in body:
            config[key] = body[key]
    response = client.models.generate_content(
        model=model, contents=contents, config=types.GenerateContentConfig.model_validate(config)
    )
    dumped = response.model_dump(mode="json", by_alias=True, exclude_none=True)
    dumped.pop("sdkHttpResponse", None)
    return 200, json.dumps(dumped), {}


def _errors() -> ErrorTable:
    with SDK_IMPORT_LOCK:
        import httpx2  # google-genai sends through httpx2, a fork of httpx under its own name, and lets its errors out
        from google.genai import errors

    return {
        errors.APIError: "http_error",  # a status outside 4xx and 5xx (a 3xx)
        errors.ClientError: "http_error",  # 4xx; a 429 among them is rate_limited by its status (no own class)
        errors.ServerError: "http_error",
        httpx2.TimeoutException: "timeout",
        httpx2.TransportError: "connection_error",
        json.JSONDecodeError: "malformed",  # google-genai parses the answer itself
    }


def parse_reply(data: JSON) -> ReplyFields:
    """A generateContent answer's first candidate: text, thoughts and function calls (with their signatures)."""
    candidate = data["candidates"][0]
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for i, part in enumerate((candidate.get("content") or {}).get("parts") or []):
        call = part.get("functionCall") or part.get("function_call")
        if call:
            call_id = call.get("id") or f"gemini-call-{i}"
            # The signature goes back with this call on the next request (the dialect reads it).
            signature = part.get("thoughtSignature") or part.get("thought_signature")
            extra = {THOUGHT_SIGNATURE_KEY: signature} if isinstance(signature, str) and signature else {}
            arguments = json.dumps(call.get("args") or {})
            calls.append(ToolCall(id=call_id, name=call["name"], arguments=arguments, **extra))
        elif part.get("thought"):
            thoughts.append(part.get("text", ""))
        elif "text" in part:
            texts.append(part["text"])
    usage = data.get("usageMetadata") or data.get("usage_metadata") or {}
    return (
        {"content": "".join(texts), "reasoning_content": "\n".join(thoughts) or None, "tool_calls": calls or None},
        Usage(usage.get("promptTokenCount"), usage.get("candidatesTokenCount"), usage.get("totalTokenCount")),
        candidate.get("finishReason") or candidate.get("finish_reason"),
    )


def step_usage(response: JSON) -> StepUsage:
    """The usage of an answer; thoughts are reported apart from the answer and count as output."""
    raw = response.get("usageMetadata") or response.get("usage_metadata") or {}
    answer, thoughts = int_or_none(raw.get("candidatesTokenCount")), int_or_none(raw.get("thoughtsTokenCount"))
    output = None if answer is None and thoughts is None else (answer or 0) + (thoughts or 0)
    return StepUsage(
        int_or_none(raw.get("promptTokenCount")), output, int_or_none(raw.get("cachedContentTokenCount")), thoughts
    )


WIRE = Wire(
    name="gemini",
    sdk_module="google.genai",
    logger="google_genai",
    client=_client,
    call=_call,
    errors=_errors,
    parse=parse_reply,
    usage=step_usage,
)
