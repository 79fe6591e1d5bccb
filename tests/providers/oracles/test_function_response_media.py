"""Media inside a Gemini functionResponse: only the types function responses take go there; other media are sent
after the responses with a warning, and preflight and the strict stub call them an error there.

Oracle: ai.google.dev/gemini-api/docs/function-calling#multimodal (Gemini 3 series): function responses take
"Images: image/png, image/jpeg, image/webp" and "Documents: application/pdf, text/plain"; peers map the same set
(openai/codex view_image handler, "Supported image MIME types for multimodal function responses").
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from core import AudioPart, FilePart, ImagePart, Message, ToolCall, ToolReturn, VideoPart
from core.messages.parts import _MediaPart
from core.preflight import check_body, preflight
from core.preflight.catalogue import fixes
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import PNG_B64, reply, run, tool, user
from web.devtools.stub_refusals import refusal

WAV_B64 = base64.b64encode(b"RIFF\x24\x00\x00\x00WAVEfmt " + b"\0" * 24).decode()
MP4_B64 = base64.b64encode(b"\0\0\0\x18ftypmp42" + b"\0" * 16).decode()
HEIC_B64 = base64.b64encode(b"\0\0\0\x18ftypheic" + b"\0" * 16).decode()
PDF_B64 = base64.b64encode(b"%PDF-1.4\n%\xe2\xe3\n1 0 obj\n").decode()
GEMINI_3 = ["gemini-3-pro-preview", "gemini-3-flash-preview"]


def _tool_result_with(*media: _MediaPart) -> list[Message]:
    return [
        user("Fetch the recording.", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="fetch", arguments="{}")]),
        tool(1, ToolReturn(call_id="call_1", name="fetch", result="Fetched.", attachments=list(media))),
    ]


def _response_and_after(result: RequestResult) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The functionResponse and the parts of the user content after it (empty when there is none)."""
    contents = result.body["contents"]
    after = contents[3]["parts"] if len(contents) > 3 else []
    return contents[2]["parts"][0]["functionResponse"], after


def _errors(body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named("gemini")
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


def _body_with_response_part(mime: str, data: str) -> dict[str, Any]:
    media = {"inlineData": {"mimeType": mime, "data": data}}
    response = {"id": "call_1", "name": "fetch", "response": {"output": "ok"}, "parts": [media]}
    return {
        "contents": [
            {"role": "user", "parts": [{"text": "Fetch the recording."}]},
            {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "fetch", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": response}]},
        ]
    }


@pytest.mark.parametrize("model", GEMINI_3)
def test_audio_in_a_tool_result_goes_after_the_function_response_on_gemini_3(model: str) -> None:
    result = run("gemini", _tool_result_with(AudioPart(data=WAV_B64, media_type="audio/wav")), model=model)
    response, after = _response_and_after(result)
    assert "parts" not in response
    assert after[1] == {"inlineData": {"mimeType": "audio/wav", "data": WAV_B64}}
    assert any(w.rule == "function-response-mime-type" for w in result.warnings)
    assert preflight(result).accepted


@pytest.mark.parametrize(
    ("part", "mime"),
    [
        (VideoPart(data=MP4_B64, media_type="video/mp4"), "video/mp4"),
        (ImagePart(data=HEIC_B64, media_type="image/heic"), "image/heic"),
    ],
    ids=["video", "heic-image"],
)
def test_a_medium_function_responses_do_not_take_goes_after_them(part: _MediaPart, mime: str) -> None:
    result = run("gemini", _tool_result_with(part), model="gemini-3-pro-preview")
    response, after = _response_and_after(result)
    assert "parts" not in response
    assert [p["inlineData"]["mimeType"] for p in after if "inlineData" in p] == [mime]
    assert preflight(result).accepted


def test_a_png_stays_in_the_function_response_and_only_the_audio_moves() -> None:
    png = ImagePart(data=PNG_B64, media_type="image/png")
    wav = AudioPart(data=WAV_B64, media_type="audio/wav")
    response, after = _response_and_after(run("gemini", _tool_result_with(png, wav), model="gemini-3-flash-preview"))
    assert [p["inlineData"]["mimeType"] for p in response["parts"]] == ["image/png"]
    assert [p["inlineData"]["mimeType"] for p in after if "inlineData" in p] == ["audio/wav"]


@pytest.mark.oracle_accepts
def test_a_pdf_stays_in_the_function_response() -> None:
    pdf = FilePart(data=PDF_B64, media_type="application/pdf", filename="invoice.pdf")
    response, after = _response_and_after(run("gemini", _tool_result_with(pdf), model="gemini-3-pro-preview"))
    assert [p["inlineData"]["mimeType"] for p in response["parts"]] == ["application/pdf"]
    assert after == []


def test_the_move_is_reported_as_a_fix_with_the_docs_as_its_source() -> None:
    result = run("gemini", _tool_result_with(AudioPart(data=WAV_B64, media_type="audio/wav")), model=GEMINI_3[0])
    found = [f for f in fixes(provider_named("gemini"), result.warnings) if f.rule.id == "function-response-mime-type"]
    assert len(found) == 1
    assert "ai.google.dev/gemini-api/docs/function-calling" in found[0].rule.authority


@pytest.mark.parametrize(
    ("mime", "data"), [("audio/wav", WAV_B64), ("video/mp4", MP4_B64), ("image/heic", HEIC_B64), ("image/gif", "R0lG")]
)
def test_preflight_calls_a_function_response_part_of_a_type_it_does_not_take_an_error(mime: str, data: str) -> None:
    assert "function-response-mime-type" in _errors(_body_with_response_part(mime, data), "gemini-3-pro-preview")


@pytest.mark.oracle_accepts
@pytest.mark.parametrize(
    ("mime", "data"), [("image/png", PNG_B64), ("application/pdf", PDF_B64), ("text/plain", "aGk=")]
)
def test_preflight_takes_a_function_response_part_of_a_documented_type(mime: str, data: str) -> None:
    assert "function-response-mime-type" not in _errors(_body_with_response_part(mime, data), "gemini-3-pro-preview")


def test_the_strict_stub_refuses_audio_inside_a_function_response() -> None:
    refused = refusal("gemini", _body_with_response_part("audio/wav", WAV_B64))
    assert refused is not None
    assert refused[0] == 400
    assert "audio/wav" in refused[1]
    assert refusal("gemini", _body_with_response_part("image/png", PNG_B64)) is None
