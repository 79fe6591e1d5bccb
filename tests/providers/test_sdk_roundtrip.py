"""Each body goes through its real SDK client to a loopback stub; the received body equals the produced one.

Normalisation (docs/providers.md section 8.3): null-valued keys dropped (the Ark and OpenAI clients may
add explicit nulls); for Gemini, keys compared in camelCase (the SDK mixes camel and snake on the
wire) and base64 fields (``data``, ``thoughtSignature``) compared as decoded bytes (the SDK re-encodes
them in the URL-safe alphabet). ``max_retries=0`` everywhere; only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import base64
import inspect
import re
from collections.abc import Iterator
from typing import Any

import pytest

from core.providers import RequestResult, dialect_names
from tests.providers.cases import CASES, build
from tests.providers.stub import Captured, stub_server

BASE64_KEYS = {"data", "thoughtSignature"}


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[str, Captured]]:
    with stub_server() as running:
        yield running


def drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_nulls(v) for v in value]
    return value


def _camel(key: str) -> str:
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), key)


def gemini_normal(value: Any, key: str = "") -> Any:
    """camelCase keys, nulls dropped, base64 fields as decoded bytes (either alphabet)."""
    if isinstance(value, dict):
        # Free-form JSON (function args, responses, schemas) keeps its keys exactly.
        free = key in ("args", "response", "parametersJsonSchema")
        return {
            (k if free else _camel(k)): gemini_normal(v, "" if free else _camel(k))
            for k, v in value.items()
            if v is not None
        }
    if isinstance(value, list):
        return [gemini_normal(v, key) for v in value]
    if key in BASE64_KEYS and isinstance(value, str):
        return base64.urlsafe_b64decode(value.replace("+", "-").replace("/", "_"))
    return value


def send_openai_chat(base: str, result: RequestResult) -> None:
    import openai

    with openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as client:
        create = client.chat.completions.create
        known = set(inspect.signature(create).parameters)
        kwargs = {k: v for k, v in result.body.items() if k in known}
        extra = {k: v for k, v in result.body.items() if k not in known}  # zhipu/doubao extensions
        create(**kwargs, extra_body=extra or None)


def send_openai_responses(base: str, result: RequestResult) -> None:
    import openai

    with openai.OpenAI(base_url=f"{base}/v1", api_key="x", max_retries=0) as client:
        client.responses.create(**result.body)


def send_anthropic(base: str, result: RequestResult) -> None:
    import anthropic

    # anthropic 1.0 removed temperature and top_p from create(); they travel as extra body fields
    # (simonw/llm-anthropic#82), which the stub receives at the top level of the body as before.
    body = dict(result.body)
    sampling = {key: body.pop(key) for key in ("temperature", "top_p") if key in body}
    with anthropic.Anthropic(base_url=base, api_key="x", max_retries=0) as client:
        client.messages.create(**body, extra_body=sampling or None)


def send_gemini(base: str, result: RequestResult) -> None:
    from google import genai
    from google.genai import types
    from pydantic import TypeAdapter

    body = result.body
    config: dict[str, Any] = dict(body.get("generationConfig", {}))
    if "systemInstruction" in body:
        config["systemInstruction"] = body["systemInstruction"]
    for key in ("tools", "toolConfig"):
        if key in body:
            config[key] = body[key]
    with genai.Client(
        api_key="x",
        http_options=types.HttpOptions(base_url=base, retry_options=types.HttpRetryOptions(attempts=1)),
    ) as client:
        client.models.generate_content(
            model=result.model,
            contents=TypeAdapter(list[types.Content]).validate_python(body["contents"]),
            config=types.GenerateContentConfig.model_validate(config) if config else None,
        )


SENDERS = {
    "openai": send_openai_chat,
    "zhipu": send_openai_chat,
    "doubao": send_openai_chat,
    "openai-responses": send_openai_responses,
    "anthropic": send_anthropic,
    "gemini": send_gemini,
}
PATHS = {
    "openai": "/v1/chat/completions",
    "zhipu": "/v1/chat/completions",
    "doubao": "/v1/chat/completions",
    "openai-responses": "/v1/responses",
    "anthropic": "/v1/messages",
    "gemini": ":generateContent",
}


def test_every_dialect_has_a_sender() -> None:
    assert sorted(SENDERS) == dialect_names()


# A newer SDK may call a default model deprecated; that says nothing about the body, which is what is checked.
@pytest.mark.filterwarnings(r"ignore:The model .* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("case", list(CASES))
def test_sdk_client_sends_the_produced_body(stub: tuple[str, Captured], case: str, dialect: str) -> None:
    base, captured = stub
    result = build(case, dialect)
    SENDERS[dialect](base, result)
    assert PATHS[dialect] in captured.last_path
    received = captured.last_body
    if dialect == "gemini":
        assert captured.last_path.endswith(f"/models/{result.model}:generateContent")
        if received.get("generationConfig") == {}:  # the SDK sends an empty one for a config without fields
            del received["generationConfig"]
        assert gemini_normal(received) == gemini_normal(result.body)
    else:
        assert drop_nulls(received) == drop_nulls(result.body)
