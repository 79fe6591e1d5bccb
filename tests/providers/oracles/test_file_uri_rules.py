"""File URLs a Gemini model does not fetch: an http:// URL, or any external URL on Gemini 2.0 and earlier. The
builder sends such a medium as text naming the rule, preflight calls the unfixed body an error, and the strict stub
refuses it as Gemini does. Files API URIs and YouTube URLs are fetched by every model.

External https URLs of a MIME type Gemini does not fetch from a URL are sent as text naming ``file-uri-mime-type``
(preflight calls the unfixed body an error); Files API URIs go whatever the type.

Oracles: Gemini 400 "Invalid or unsupported file uri: https://upload.wikimedia.org/wikipedia/commons/4/4d/
Cat_November_2010-1a.jpg" on gemini-2.0-flash (BoundaryML/baml#1548); ai.google.dev/gemini-api/docs/
file-input-methods (external https URLs); vercel/ai#16757, whose regression tests reject http:// URLs and keep the
Gemini 2.0 family's exclusion; for the MIME types, ai.google.dev/gemini-api/docs/file-input-methods#supported-content-
types (external HTTP / signed URLs) and vercel/ai#16757, whose regression test (packages/google/src/
google-provider.test.ts, "should support documented external HTTPS URLs for Gemini models that accept external URLs")
passes the 22 documented types as URLs and refuses ``text/markdown``.
"""

from __future__ import annotations

from typing import Any

import pytest

from core import AudioPart, FilePart, ImagePart, Message, MultiPartMessage, TextPart, VideoPart
from core.preflight import check_body
from core.preflight.catalogue import fixes
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import run
from web.devtools.stub_refusals import refusal

CAT = "https://upload.wikimedia.org/wikipedia/commons/4/4d/Cat_November_2010-1a.jpg"
FILES_API = "https://generativelanguage.googleapis.com/v1beta/files/abc-123"
YOUTUBE = "https://www.youtube.com/watch?v=9hE5-98ZeCg"


def _with(part: Any) -> list[Message]:
    return [MultiPartMessage(content=[TextPart(text="What is this?"), part], msg_id="u1", create_ts=1)]


def _uris(result: RequestResult) -> list[str]:
    return [p["fileData"]["fileUri"] for c in result.body["contents"] for p in c["parts"] if "fileData" in p]


def _fixed(result: RequestResult, rule: str = "file-uri-fetched") -> bool:
    found = [f for f in fixes(provider_named("gemini"), result.warnings) if f.rule.id == rule]
    return bool(found) and all(f.rule.authority != "not in the catalogue" for f in found)


def _body(uri: str, mime: str = "image/jpeg") -> dict[str, Any]:
    parts = [{"text": "What is this?"}, {"fileData": {"mimeType": mime, "fileUri": uri}}]
    return {"contents": [{"role": "user", "parts": parts}]}


def _errors(body: dict[str, Any], model: str) -> list[str]:
    dialect = provider_named("gemini")
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


@pytest.mark.parametrize("model", ["gemini-2.0-flash", "gemini-2.0-flash-lite"])
def test_an_external_image_url_to_gemini_2_0_is_sent_as_text_naming_its_rule(model: str) -> None:
    result = run("gemini", _with(ImagePart(url=CAT, media_type="image/jpeg")), model=model)
    assert _uris(result) == [] and _fixed(result)
    assert refusal("gemini", result.body, model) is None


@pytest.mark.oracle_accepts
@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
def test_an_external_https_url_is_sent_as_a_file_uri_to_later_models(model: str) -> None:
    result = run("gemini", _with(ImagePart(url=CAT, media_type="image/jpeg")), model=model)
    assert _uris(result) == [CAT] and not _fixed(result)
    assert refusal("gemini", result.body, model) is None


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-2.0-flash"])
def test_an_http_url_is_sent_as_text_naming_its_rule(model: str) -> None:
    result = run("gemini", _with(ImagePart(url="http://example.com/cat.jpg", media_type="image/jpeg")), model=model)
    assert _uris(result) == [] and _fixed(result)


@pytest.mark.oracle_accepts
@pytest.mark.parametrize(
    "part",
    [ImagePart(url=FILES_API, media_type="image/png"), VideoPart(url=YOUTUBE, media_type="video/mp4")],
)
def test_files_api_and_youtube_uris_are_fetched_by_gemini_2_0(part: Any) -> None:
    result = run("gemini", _with(part), model="gemini-2.0-flash")
    assert _uris(result) == [part.url] and not _fixed(result)


@pytest.mark.parametrize(
    ("uri", "model", "refused"),
    [
        (CAT, "gemini-2.0-flash", True),
        pytest.param(CAT, "gemini-2.5-flash", False, marks=pytest.mark.oracle_accepts),
        ("http://example.com/cat.jpg", "gemini-2.5-flash", True),
        pytest.param(FILES_API, "gemini-2.0-flash", False, marks=pytest.mark.oracle_accepts),
    ],
)
def test_preflight_and_the_stub_refuse_a_file_uri_the_model_does_not_fetch(uri: str, model: str, refused: bool) -> None:
    body = _body(uri)
    assert ("file-uri-fetched" in _errors(body, model)) is refused
    stub = refusal("gemini", body, model)
    assert (stub == (400, f"Invalid or unsupported file uri: {uri}")) is refused and (stub is None) is not refused


# -- the MIME types Gemini fetches from an external URL --------------------------------------------------------
MIME_RULE = "file-uri-mime-type"


@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
@pytest.mark.parametrize(
    "part",
    [
        FilePart(url="https://example.com/notes.md", media_type="text/markdown"),
        AudioPart(url="https://example.com/note.mp3", media_type="audio/mpeg"),
        ImagePart(url="https://example.com/cat.heic", media_type="image/heic"),
    ],
    ids=["markdown", "audio", "heic"],
)
def test_an_external_url_of_a_type_gemini_does_not_fetch_is_sent_as_text_naming_its_rule(model: str, part: Any) -> None:
    result = run("gemini", _with(part), model=model)
    assert _uris(result) == [] and _fixed(result, MIME_RULE)


@pytest.mark.oracle_accepts
@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview"])
@pytest.mark.parametrize(
    "part",
    [
        FilePart(url="https://example.com/report.pdf", media_type="application/pdf"),
        FilePart(url="https://example.com/table.csv", media_type="text/csv"),
        ImagePart(url="https://example.com/cat.webp", media_type="image/webp"),
        VideoPart(url="https://example.com/clip.mp4", media_type="video/mp4"),
    ],
    ids=["pdf", "csv", "webp", "mp4"],
)
def test_an_external_url_of_a_documented_type_is_sent_as_a_file_uri(model: str, part: Any) -> None:
    result = run("gemini", _with(part), model=model)
    assert _uris(result) == [part.url] and not _fixed(result, MIME_RULE)


@pytest.mark.oracle_accepts
def test_a_files_api_uri_goes_whatever_its_type() -> None:
    result = run("gemini", _with(FilePart(url=FILES_API, media_type="text/markdown")), model="gemini-2.5-flash")
    assert _uris(result) == [FILES_API] and not _fixed(result, MIME_RULE)


@pytest.mark.parametrize(
    ("uri", "mime", "model", "refused"),
    [
        ("https://example.com/notes.md", "text/markdown", "gemini-2.5-flash", True),
        ("https://example.com/note.mp3", "audio/mpeg", "gemini-3-pro-preview", True),
        pytest.param(
            "https://example.com/report.pdf",
            "application/pdf",
            "gemini-2.5-flash",
            False,
            marks=pytest.mark.oracle_accepts,
        ),
        pytest.param(FILES_API, "text/markdown", "gemini-2.5-flash", False, marks=pytest.mark.oracle_accepts),
    ],
)
def test_preflight_calls_an_external_url_of_an_unfetched_type_an_error(
    uri: str, mime: str, model: str, refused: bool
) -> None:
    assert (MIME_RULE in _errors(_body(uri, mime), model)) is refused
