"""External https file URLs of a MIME type Gemini does not fetch from a URL: the builder sends the medium as text
naming ``file-uri-mime-type``, preflight calls the unfixed body an error. Files API URIs and YouTube go whatever the
type; the documented types go as ``fileData`` to the models that fetch external URLs at all.

Oracles: ai.google.dev/gemini-api/docs/file-input-methods#supported-content-types (external HTTP / signed URLs);
vercel/ai#16757, whose regression test (packages/google/src/google-provider.test.ts, "should support documented
external HTTPS URLs for Gemini models that accept external URLs") passes the 22 documented types as URLs and refuses
``text/markdown``; its provider downloads any other type instead of sending the URL.
"""

from __future__ import annotations

from typing import Any

import pytest

from core import AudioPart, FilePart, ImagePart, Message, MultiPartMessage, TextPart, VideoPart
from core.preflight import check_body
from core.preflight.catalogue import fixes
from core.providers import RequestOptions, RequestResult, provider_named
from tests.providers.builders import run

FILES_API = "https://generativelanguage.googleapis.com/v1beta/files/abc-123"


def _with(part: Any) -> list[Message]:
    return [MultiPartMessage(content=[TextPart(text="What is this?"), part], msg_id="u1", create_ts=1)]


def _uris(result: RequestResult) -> list[str]:
    return [p["fileData"]["fileUri"] for c in result.body["contents"] for p in c["parts"] if "fileData" in p]


def _fixed(result: RequestResult) -> bool:
    found = [f for f in fixes(provider_named("gemini"), result.warnings) if f.rule == "file-uri-mime-type"]
    return bool(found) and all(f.source != "not in the catalogue" for f in found)


def _errors(uri: str, mime: str, model: str) -> list[str]:
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}, {"fileData": {"mimeType": mime, "fileUri": uri}}]}]}
    dialect = provider_named("gemini")
    findings = check_body(dialect, body, dialect.profile(RequestOptions(model=model)), model)
    return [f.rule for f in findings if f.severity == "error"]


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
    assert _uris(result) == [] and _fixed(result)


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
    assert _uris(result) == [part.url] and not _fixed(result)


@pytest.mark.oracle_accepts
def test_a_files_api_uri_goes_whatever_its_type() -> None:
    result = run("gemini", _with(FilePart(url=FILES_API, media_type="text/markdown")), model="gemini-2.5-flash")
    assert _uris(result) == [FILES_API] and not _fixed(result)


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
    assert ("file-uri-mime-type" in _errors(uri, mime, model)) is refused
