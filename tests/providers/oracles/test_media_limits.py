"""Media limits per request and per provider: OpenAI's 20 MB per image and 500 images; Anthropic's 100 or 600
images by the model's context window, 2000 px a side past 20 images, and 32 MB per request; Gemini's 100 MB of
inline data. What the builder can fix is sent as text with a warning naming the rule; preflight and the strict
stub call the unfixed body an error. Each case names its oracle."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from core import ImagePart, Message, MultiPartMessage, TextPart
from core.preflight import check_body, media, preflight
from core.preflight.catalogue import catalogue
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import PNG_B64, run
from web.devtools.stub_refusals import refusal

MiB = 1024 * 1024
PNG_HEAD = b"\x89PNG\r\n\x1a\n"


def _png_b64(raw_bytes: int) -> str:
    """An inline PNG of ``raw_bytes`` bytes (its header, then zeros), as base64."""
    return base64.b64encode(PNG_HEAD + b"\0" * (raw_bytes - len(PNG_HEAD))).decode()


def _png_of(width: int, height: int) -> str:
    ihdr = b"\0\0\0\rIHDR" + width.to_bytes(4) + height.to_bytes(4) + b"\x08\x02\0\0\0"
    return base64.b64encode(PNG_HEAD + ihdr + b"\0" * 16).decode()


def _with_images(*images: ImagePart) -> list[Message]:
    parts: list[TextPart | ImagePart] = [TextPart(text="Compare these pictures."), *images]
    return [MultiPartMessage(content=parts, msg_id="u1", create_ts=1000)]


def _pngs(count: int, data: str = PNG_B64) -> list[Message]:
    return _with_images(*[ImagePart(data=data, media_type="image/png") for _ in range(count)])


def _sent_images(result: RequestResult) -> int:
    """How many image parts the body's last user turn holds, in any dialect's shape."""
    turn = (result.body.get("messages") or result.body.get("input") or result.body.get("contents"))[-1]
    parts = turn.get("content") or turn.get("parts")
    return sum(1 for p in parts if p.get("type") in ("image", "image_url", "input_image") or "inlineData" in p)


def _rules_fixed(result: RequestResult) -> set[str | None]:
    return {w.rule for w in result.warnings}


def _errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named(provider)
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


def _media_errors(provider: str, body: dict[str, Any], model: str) -> list[str]:
    """The media rules alone: a body of 100 MB takes seconds to check against the SDK types, and adds nothing."""
    return [f.rule for f in media.check(provider_named(provider), body, model) if f.severity == "error"]


def _anthropic_body(model: str, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": model, "max_tokens": 100, "messages": [{"role": "user", "content": blocks}]}


def _anthropic_image(data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


# -- OpenAI: 20 MB per image ----------------------------------------------------------------------------------
# Oracle: platform.openai.com/docs/guides/images-vision, "Image input requirements": "Up to 20MB per image".
OVER_20_MB = _png_b64(20 * MiB + 3)
OPENAI_MODELS = ["gpt-4o", "gpt-4.1"]


@pytest.mark.parametrize("model", OPENAI_MODELS)
def test_an_inline_image_over_20_mb_to_chat_completions_is_sent_as_text(model: str) -> None:
    result = run("openai", _with_images(ImagePart(data=OVER_20_MB, media_type="image/png")), model=model)
    assert _sent_images(result) == 0
    assert "inline-image-size" in _rules_fixed(result)
    assert preflight(result).accepted


def test_an_inline_image_over_20_mb_to_responses_is_sent_as_text() -> None:
    result = run("openai-responses", _with_images(ImagePart(data=OVER_20_MB, media_type="image/png")))
    assert _sent_images(result) == 0
    assert "inline-image-size" in _rules_fixed(result)


@pytest.mark.parametrize(
    ("provider", "image"),
    [
        ("openai", {"type": "image_url", "image_url": {"url": "data:image/png;base64," + OVER_20_MB}}),
        ("openai-responses", {"type": "input_image", "image_url": "data:image/png;base64," + OVER_20_MB}),
    ],
)
def test_preflight_and_the_stub_call_an_openai_image_over_20_mb_an_error(provider: str, image: dict[str, Any]) -> None:
    key = "messages" if provider == "openai" else "input"
    body = {"model": "gpt-4o", key: [{"role": "user", "content": [image]}]}
    assert "inline-image-size" in _media_errors(provider, body, "gpt-4o")
    assert refusal(provider, body) is not None  # type: ignore[arg-type]


# -- image count per request ------------------------------------------------------------------------------------
# Oracle: platform.claude.com/docs/en/build-with-claude/vision, "General limits": "100 per request on the API, for
# models with a 200k-token context window. 600 per request on the API, for all other models."; the model table
# (LiteLLM) gives claude-sonnet-4-5 and claude-haiku-4-5 200,000 input tokens, claude-opus-4-6 1,000,000.
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-haiku-4-5"])
def test_the_101st_image_to_a_200k_claude_is_sent_as_text(model: str) -> None:
    result = run("anthropic", _pngs(101), model=model)
    assert _sent_images(result) == 100
    assert "image-count" in _rules_fixed(result)
    assert preflight(result).accepted


def test_a_1m_context_claude_takes_600_images_and_not_601() -> None:
    result = run("anthropic", _pngs(601), model="claude-opus-4-6")
    assert _sent_images(result) == 600
    assert "image-count" in _rules_fixed(result)


def test_preflight_calls_101_images_to_a_200k_claude_an_error_and_not_to_a_1m_one() -> None:
    body = _anthropic_body("claude-sonnet-4-5", [_anthropic_image(PNG_B64)] * 101)
    assert "image-count" in _errors("anthropic", body, "claude-sonnet-4-5")
    assert "image-count" not in _errors("anthropic", {**body, "model": "claude-opus-4-6"}, "claude-opus-4-6")


# Oracle: platform.openai.com/docs/guides/images-vision: "Up to 500 individual images per request".
def test_the_501st_image_to_openai_is_sent_as_text_and_preflight_calls_501_an_error() -> None:
    result = run("openai", _pngs(501), model="gpt-4.1")
    assert _sent_images(result) == 500
    assert "image-count" in _rules_fixed(result)
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + PNG_B64}}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": [image] * 501}]}
    assert "image-count" in _errors("openai", body, "gpt-4.1")
    assert refusal("openai", body) is not None


# -- Anthropic: 2000 px a side past 20 images -------------------------------------------------------------------
# Oracle: platform.claude.com/docs/en/build-with-claude/vision: "If you submit more than 20 images in one API
# request, this limit is reduced to 2000x2000 px."
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-haiku-4-5"])
def test_a_2001_pixel_image_among_21_is_sent_as_text_and_among_20_is_sent(model: str) -> None:
    wide = ImagePart(data=_png_of(2001, 600), media_type="image/png")
    small = [ImagePart(data=PNG_B64, media_type="image/png")] * 20
    result = run("anthropic", _with_images(wide, *small), model=model)
    assert _sent_images(result) == 20
    assert "inline-image-dimensions" in _rules_fixed(result)
    assert preflight(result).accepted
    assert _sent_images(run("anthropic", _with_images(wide, *small[1:]), model=model)) == 20


def test_preflight_calls_a_2001_pixel_image_among_21_an_error_and_not_among_20() -> None:
    wide = _anthropic_image(_png_of(2001, 600))
    many = _anthropic_body("claude-sonnet-4-5", [wide] + [_anthropic_image(PNG_B64)] * 20)
    assert "inline-image-dimensions" in _errors("anthropic", many, "claude-sonnet-4-5")
    few = _anthropic_body("claude-sonnet-4-5", [wide] + [_anthropic_image(PNG_B64)] * 19)
    assert "inline-image-dimensions" not in _errors("anthropic", few, "claude-sonnet-4-5")


# -- inline media per request -------------------------------------------------------------------------------------
# Oracle: docs.claude.com/en/api/errors: 413 request_too_large, "The maximum request size is 32 MB for standard API
# endpoints"; seven images just under the 5 MB image limit are 34 MB of base64.
UNDER_5_MB = _png_b64(3_700_000)


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-1"])
def test_images_past_32_mb_in_one_anthropic_request_are_sent_as_text(model: str) -> None:
    result = run("anthropic", _pngs(7, UNDER_5_MB), model=model)
    assert _sent_images(result) == 6
    assert "inline-media-total" in _rules_fixed(result)
    assert preflight(result).accepted


def test_preflight_and_the_stub_call_an_anthropic_request_past_32_mb_an_error() -> None:
    body = _anthropic_body("claude-sonnet-4-5", [_anthropic_image(UNDER_5_MB)] * 7)
    assert "inline-media-total" in _errors("anthropic", body, "claude-sonnet-4-5")
    assert refusal("anthropic", body) == (413, "Request exceeds the maximum allowed number of bytes.")


# Oracle: blog.google/innovation-and-ai/technology/developers-tools/gemini-api-new-file-limits: "the maximum payload
# size for inline data from 20MB to 100MB (base64 encoded)".
HALF_GEMINI_LIMIT = _png_b64(40_000_000)  # 53,333,336 base64 bytes


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
def test_inline_data_past_100_mb_in_one_gemini_request_is_sent_as_text(model: str) -> None:
    result = run("gemini", _pngs(2, HALF_GEMINI_LIMIT), model=model)
    assert _sent_images(result) == 1
    assert "inline-media-total" in _rules_fixed(result)


def test_preflight_and_the_stub_call_a_gemini_request_past_100_mb_of_inline_data_an_error() -> None:
    blob = {"inlineData": {"mimeType": "image/png", "data": HALF_GEMINI_LIMIT}}
    body = {"contents": [{"role": "user", "parts": [{"text": "Compare."}, blob, blob]}]}
    assert "inline-media-total" in _media_errors("gemini", body, "gemini-2.5-flash")
    assert refusal("gemini", body) is not None
    one = {"contents": [{"role": "user", "parts": [blob]}]}
    assert "inline-media-total" not in _media_errors("gemini", one, "gemini-2.5-flash")


# -- the strict stub and the catalogue ----------------------------------------------------------------------------
# Oracle: Anthropic 400 "image exceeds 5 MB maximum: 8259148 bytes > 5242880 bytes" (anthropics/claude-code#19631).
def test_the_strict_stub_refuses_an_anthropic_image_over_5_mb_as_the_api_does() -> None:
    body = _anthropic_body("claude-sonnet-4-5", [_anthropic_image(_png_b64(3_932_163))])
    refused = refusal("anthropic", body)
    assert refused is not None
    assert refused[1].endswith("image exceeds 5 MB maximum: 5242884 bytes > 5242880 bytes")


@pytest.mark.parametrize("provider", ["anthropic", "openai", "openai-responses", "gemini"])
def test_the_catalogue_lists_the_media_rules_with_their_sources(provider: str) -> None:
    rules = {rule.id: rule for rule in catalogue(provider_named(provider))}
    for rule_id in ("image-count", "inline-media-total", "model-takes-pdf"):
        assert rules[rule_id].authority
