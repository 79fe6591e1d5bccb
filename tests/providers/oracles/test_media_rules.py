"""Media by model: what a model or its provider refuses of media is sent as text with a warning, and preflight
calls the unfixed body an error. Each case names its oracle."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from core import ImagePart, Message, MultiPartMessage, TextPart, ToolCall, ToolReturn
from core.preflight import check_body, preflight
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import PNG_B64, reply, run, tool, user

PNG_HEAD = b"\x89PNG\r\n\x1a\n"
ANTHROPIC_IMAGE_LIMIT = 5 * 1024 * 1024  # base64 bytes


def _png_b64(raw_bytes: int) -> str:
    """An inline PNG of ``raw_bytes`` bytes (its header, then zeros), as base64."""
    return base64.b64encode(PNG_HEAD + b"\0" * (raw_bytes - len(PNG_HEAD))).decode()


# 3,932,160 raw bytes are exactly 5,242,880 base64 bytes; one 3-byte group more is over the limit.
OVER_LIMIT = _png_b64(ANTHROPIC_IMAGE_LIMIT // 4 * 3 + 3)
AT_LIMIT = _png_b64(ANTHROPIC_IMAGE_LIMIT // 4 * 3)


def _with_image(image: ImagePart) -> list[Message]:
    return [MultiPartMessage(content=[TextPart(text="What is in this picture?"), image], msg_id="u1", create_ts=1000)]


def _tool_result_with(image: ImagePart) -> list[Message]:
    return [
        user("Plot the sales.", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="plot", arguments="{}")]),
        tool(1, ToolReturn(call_id="call_1", name="plot", result="Chart rendered.", attachments=[image])),
    ]


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


def _accepted(result: RequestResult) -> bool:
    return not [f for f in preflight(result).findings if f.severity == "error"]


def _warned(result: RequestResult, text: str) -> bool:
    return any(text in str(w) for w in result.warnings)


# -- an image to a model without vision --------------------------------------------------------------------------
# Oracle: OpenAI 400 "Invalid content type. image_url is only supported by certain models." with param
# "messages.[1].content.[1].type" (browser-use/web-ui#274; danny-avila/LibreChat#6333); the model table
# (LiteLLM's model map) says supports_vision: false for o3-mini and the gpt-audio family.
@pytest.mark.parametrize("model", ["o3-mini", "gpt-audio"])
def test_an_image_to_a_chat_model_without_vision_is_sent_as_text(model: str) -> None:
    result = run("openai", _with_image(ImagePart(data=PNG_B64, media_type="image/png")), model=model)
    parts = result.body["messages"][-1]["content"]
    assert [p["type"] for p in parts] == ["text", "text"]
    assert parts[1]["text"].startswith("[image")
    assert _warned(result, f"the model table says {model!r} takes no images")
    assert _accepted(result)


def test_an_image_to_a_responses_model_without_vision_is_sent_as_text() -> None:
    result = run("openai-responses", _with_image(ImagePart(data=PNG_B64, media_type="image/png")), model="o3-mini")
    parts = result.body["input"][-1]["content"]
    assert [p["type"] for p in parts] == ["input_text", "input_text"]
    assert _warned(result, "takes no images")
    assert _accepted(result)


def test_an_image_url_to_a_model_without_vision_is_sent_as_text() -> None:
    image = ImagePart(url="https://example.com/cat.png", media_type="image/png")
    result = run("openai", _with_image(image), model="o3-mini-2025-01-31")
    assert "image_url" not in [p["type"] for p in result.body["messages"][-1]["content"]]
    assert _accepted(result)


@pytest.mark.parametrize("model", ["o3-mini", "gpt-audio"])
def test_preflight_calls_an_image_to_a_chat_model_without_vision_an_error(model: str) -> None:
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}}
    body = {"model": model, "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}, image]}]}
    assert "model-takes-images" in _errors("openai", body, model)
    assert "model-takes-images" not in _errors("openai", {**body, "model": "gpt-4o"}, "gpt-4o")


def test_preflight_calls_an_input_image_to_a_responses_model_without_vision_an_error() -> None:
    image = {"type": "input_image", "image_url": "https://example.com/cat.png", "detail": "auto"}
    body = {"model": "o3-mini", "input": [{"role": "user", "content": [image]}]}
    assert "model-takes-images" in _errors("openai-responses", body, "o3-mini")


# -- an inline image over the provider's size limit ---------------------------------------------------------------
# Oracle: Anthropic 400 "messages.2.content.0.image.source.base64: image exceeds 5 MB maximum: 8259148 bytes >
# 5242880 bytes" (anthropics/claude-code#19631); the limit counts base64 bytes (lobehub/lobehub#14711).
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-1"])
def test_an_inline_image_over_5_mb_to_anthropic_is_sent_as_text(model: str) -> None:
    result = run("anthropic", _with_image(ImagePart(data=OVER_LIMIT, media_type="image/png")), model=model)
    blocks = result.body["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["text", "text"]
    assert _warned(result, "over the provider's 5,242,880-byte limit")
    assert _accepted(result)


@pytest.mark.oracle_accepts
def test_an_inline_image_of_exactly_5_mb_is_sent_to_anthropic() -> None:
    result = run("anthropic", _with_image(ImagePart(data=AT_LIMIT, media_type="image/png")))
    assert [b["type"] for b in result.body["messages"][-1]["content"]] == ["text", "image"]
    assert _accepted(result)


def test_an_inline_image_over_5_mb_in_an_anthropic_tool_result_is_sent_as_text() -> None:
    result = run("anthropic", _tool_result_with(ImagePart(data=OVER_LIMIT, media_type="image/png")))
    blocks = [b for turn in result.body["messages"] for b in turn["content"] if isinstance(turn["content"], list)]
    nested = [c for b in blocks if b["type"] == "tool_result" for c in b.get("content") or []]
    assert "image" not in [b["type"] for b in blocks + nested]
    assert _accepted(result)


@pytest.mark.parametrize("in_tool_result", [False, True])
def test_preflight_calls_an_anthropic_image_over_5_mb_an_error(in_tool_result: bool) -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": OVER_LIMIT}}
    content: list[dict[str, Any]] = [image]
    if in_tool_result:
        content = [{"type": "tool_result", "tool_use_id": "call_1", "content": [image]}]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 100, "messages": [{"role": "user", "content": content}]}
    assert "inline-image-size" in _errors("anthropic", body, "claude-sonnet-4-5")


# Oracle: Anthropic 400 "messages.7.content.2.image.source.base64.data: At least one of the image dimensions exceed
# max allowed size: 8000 pixels" (anthropics/claude-code#4778); vision docs (platform.claude.com/docs/en/
# build-with-claude/vision): "If you submit an image larger than 8000x8000 px, it will be rejected."
def _png_of(width: int, height: int) -> str:
    ihdr = b"\0\0\0\rIHDR" + width.to_bytes(4) + height.to_bytes(4) + b"\x08\x02\0\0\0"
    return base64.b64encode(PNG_HEAD + ihdr + b"\0" * 16).decode()


def _jpeg_of(width: int, height: int) -> str:
    app0 = b"\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0\x00\x11\x08" + height.to_bytes(2) + width.to_bytes(2) + b"\x03" + b"\x01\x11\x00" * 3
    return base64.b64encode(b"\xff\xd8" + app0 + sof0 + b"\xff\xd9").decode()


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-1"])
@pytest.mark.parametrize(
    ("data", "media_type"),
    [(_png_of(8001, 600), "image/png"), (_jpeg_of(640, 9000), "image/jpeg")],
    ids=["png-8001-wide", "jpeg-9000-high"],
)
def test_an_image_over_8000_pixels_a_side_to_anthropic_is_sent_as_text(model: str, data: str, media_type: str) -> None:
    result = run("anthropic", _with_image(ImagePart(data=data, media_type=media_type)), model=model)
    assert [b["type"] for b in result.body["messages"][-1]["content"]] == ["text", "text"]
    assert _warned(result, "over the provider's 8000-pixel limit per side")
    assert _accepted(result)


@pytest.mark.oracle_accepts
def test_an_image_of_8000_pixels_a_side_is_sent_to_anthropic() -> None:
    result = run("anthropic", _with_image(ImagePart(data=_png_of(8000, 8000), media_type="image/png")))
    assert [b["type"] for b in result.body["messages"][-1]["content"]] == ["text", "image"]


def test_preflight_calls_an_anthropic_image_over_8000_pixels_a_side_an_error() -> None:
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": _png_of(600, 8192)}}
    body = {"model": "claude-opus-4-1", "max_tokens": 100, "messages": [{"role": "user", "content": [image]}]}
    assert "inline-image-dimensions" in _errors("anthropic", body, "claude-opus-4-1")


# -- a file URI inside a Gemini functionResponse -------------------------------------------------------------------
# Oracle: js-genai types.FunctionResponseFileData (googleapis.github.io/js-genai/release_docs): "URI based data for
# function response. This data type is not supported in Gemini API." (kotlin-genai's says the same).
@pytest.mark.parametrize("model", ["gemini-3-pro-preview", "gemini-3-flash-preview"])
def test_a_tool_result_image_url_on_gemini_3_goes_after_the_function_response(model: str) -> None:
    image = ImagePart(url="https://example.com/chart.png", media_type="image/png")
    result = run("gemini", _tool_result_with(image), model=model)
    contents = result.body["contents"]
    response = contents[2]["parts"][0]["functionResponse"]
    assert "parts" not in response
    assert contents[3]["role"] == "user"
    assert contents[3]["parts"][1] == {
        "fileData": {"mimeType": "image/png", "fileUri": "https://example.com/chart.png"}
    }
    assert _warned(result, "functionResponse.parts take inline data only")
    assert _accepted(result)


def test_a_tool_result_keeps_inline_media_inside_the_function_response_and_moves_only_the_uri() -> None:
    url_image = ImagePart(url="https://example.com/chart.png", media_type="image/png")
    inline = ImagePart(data=PNG_B64, media_type="image/png")
    msgs = _tool_result_with(url_image)
    msgs[-1] = tool(1, ToolReturn(call_id="call_1", name="plot", result="ok", attachments=[inline, url_image]))
    contents = run("gemini", msgs, model="gemini-3-pro-preview").body["contents"]
    assert [next(iter(p)) for p in contents[2]["parts"][0]["functionResponse"]["parts"]] == ["inlineData"]
    assert [next(iter(p)) for p in contents[3]["parts"]] == ["text", "fileData"]


def test_preflight_calls_file_data_inside_a_function_response_an_error() -> None:
    file_data = {"fileData": {"mimeType": "image/png", "fileUri": "https://example.com/chart.png"}}
    response = {"id": "call_1", "name": "plot", "response": {"output": "ok"}, "parts": [file_data]}
    body = {
        "contents": [
            {"role": "user", "parts": [{"text": "Plot the sales."}]},
            {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "plot", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": response}]},
        ]
    }
    assert "function-response-inline-only" in _errors("gemini", body, "gemini-3-pro-preview")
