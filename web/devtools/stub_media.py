"""The media the stub provider refuses in its strict mode, as the real APIs do: an inline image over the size limit,
more images than a request may hold, more inline data than a request may carry, media of a type a Gemini
``functionResponse`` does not take, and a Gemini file URI the model does not fetch.

The limits are the providers' documented ones, written here again on purpose: the stub is an oracle for the
builder and preflight, so it does not read their constants. Messages are the providers' own where a public report
quotes one (named beside it), else the stub's wording.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Refusal = tuple[int, str]

BAD_REQUEST = 400
TOO_LARGE = 413
MiB = 1024 * 1024

# platform.claude.com/docs/en/build-with-claude/vision; docs.claude.com/en/api/errors (32 MB, 413).
ANTHROPIC_IMAGE_BYTES = 5 * MiB  # on the base64 text (anthropics/claude-code#19631)
ANTHROPIC_REQUEST_BYTES = 32 * MiB
ANTHROPIC_MOST_IMAGES = 600  # 100 for a 200k-context model; the stub does not know the model's window
# platform.openai.com/docs/guides/images-vision: 20 MB per image (the file), 500 images per request.
OPENAI_IMAGE_BYTES = 20 * MiB
OPENAI_MOST_IMAGES = 500
# ai.google.dev/gemini-api/docs/function-calling#multimodal; the inline data limit of January 2026.
GEMINI_RESPONSE_TYPES = frozenset({"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"})
GEMINI_INLINE_BYTES = 100_000_000


def anthropic_media(body: dict[str, Any]) -> Refusal | None:
    """Why Anthropic refuses the media of ``body``, or None."""
    images = 0
    total = 0
    for where, block in _blocks(body.get("messages"), "messages"):
        source = block.get("source")
        source = source if isinstance(source, dict) else {}
        data = source.get("data") if source.get("type") == "base64" else None
        size = len(data) if isinstance(data, str) else 0
        total += size
        if block.get("type") != "image":
            continue
        images += 1
        if size > ANTHROPIC_IMAGE_BYTES:
            # anthropics/claude-code#19631
            return BAD_REQUEST, (
                f"{where}.image.source.base64: image exceeds 5 MB maximum: {size} bytes > {ANTHROPIC_IMAGE_BYTES} bytes"
            )
    if total > ANTHROPIC_REQUEST_BYTES:
        return TOO_LARGE, "Request exceeds the maximum allowed number of bytes."  # docs.claude.com/en/api/errors
    if images > ANTHROPIC_MOST_IMAGES:
        return BAD_REQUEST, f"messages: too many images in the request: {images} > {ANTHROPIC_MOST_IMAGES}"
    return None


def openai_media(body: dict[str, Any], key: str) -> Refusal | None:
    """Why OpenAI (Chat Completions: ``messages``; Responses: ``input``) refuses the media of ``body``, or None."""
    images = 0
    for where, block in _blocks(body.get(key), key):
        if block.get("type") not in ("image_url", "input_image"):
            continue
        images += 1
        url = block.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        inline = url.partition(",")[2] if isinstance(url, str) and url[:5].lower() == "data:" else ""
        if len(inline) * 3 // 4 > OPENAI_IMAGE_BYTES:
            return BAD_REQUEST, f"Invalid '{where}': image is larger than the 20 MB limit."
    if images > OPENAI_MOST_IMAGES:
        return BAD_REQUEST, f"Too many images in request. Max is {OPENAI_MOST_IMAGES}."
    return None


def gemini_media(body: dict[str, Any]) -> Refusal | None:
    """Why Gemini refuses the media of ``body``, or None."""
    total = 0
    for i, content in enumerate(_list(body.get("contents"))):
        for j, part in enumerate(_list(content.get("parts") if isinstance(content, dict) else None)):
            if not isinstance(part, dict):
                continue
            total += _inline_size(part)
            response = part.get("functionResponse")
            for k, media in enumerate(_list(response.get("parts") if isinstance(response, dict) else None)):
                total += _inline_size(media)
                blob = media.get("inlineData") if isinstance(media, dict) else None
                mime = blob.get("mimeType") if isinstance(blob, dict) else None
                if mime is not None and mime not in GEMINI_RESPONSE_TYPES:
                    return BAD_REQUEST, (
                        f"contents[{i}].parts[{j}].function_response.parts[{k}]: "
                        f"unsupported MIME type {mime} in a function response"
                    )
    if total > GEMINI_INLINE_BYTES:
        return BAD_REQUEST, f"Request payload size exceeds the limit: {GEMINI_INLINE_BYTES} bytes."
    return None


# ai.google.dev/gemini-api/docs/file-input-methods: Files API URIs, YouTube, and external https URLs (not on Gemini
# 2.0 and earlier: BoundaryML/baml#1548 quotes the 400; vercel/ai#16757 never passes an http:// one).
GEMINI_FETCHED = ("https://generativelanguage.googleapis.com/", "https://www.youtube.com/", "https://youtu.be/")


def gemini_file_uris(body: dict[str, Any], model: str) -> Refusal | None:
    """Why Gemini refuses a ``fileData.fileUri`` of ``body`` sent to ``model``, or None."""
    old_model = "gemini-2.0" in model or "gemini-1." in model
    for content in _list(body.get("contents")):
        for part in _list(content.get("parts") if isinstance(content, dict) else None):
            data = part.get("fileData") if isinstance(part, dict) else None
            uri = data.get("fileUri") if isinstance(data, dict) else None
            if not isinstance(uri, str) or uri.startswith(GEMINI_FETCHED):
                continue
            if uri.startswith("http://") or old_model:
                return BAD_REQUEST, f"Invalid or unsupported file uri: {uri}"
    return None


def _inline_size(part: Any) -> int:
    blob = part.get("inlineData") if isinstance(part, dict) else None
    data = blob.get("data") if isinstance(blob, dict) else None
    return len(data) if isinstance(data, str) else 0


def _blocks(turns: Any, key: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every content block of the turns, with its place, and the blocks nested in tool results."""
    for i, turn in enumerate(_list(turns)):
        content = (turn.get("content") or turn.get("output")) if isinstance(turn, dict) else None
        for j, block in enumerate(_list(content)):
            if not isinstance(block, dict):
                continue
            yield f"{key}.{i}.content.{j}", block
            for k, inner in enumerate(_list(block.get("content") or block.get("output"))):
                if isinstance(inner, dict):
                    yield f"{key}.{i}.content.{j}.content.{k}", inner


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
