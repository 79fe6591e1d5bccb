"""Anthropic's media blocks: which images and documents a request takes, and how many images one request holds.

Part of the Anthropic dialect (:mod:`core.providers.dialects.anthropic`); the limits on an image's size and sides
and on a request's inline bytes are the dialect's class facts, applied by ``RequestContext.resolve``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.llm.messages import LLMMediaPart
    from core.providers.base import JSON, RequestContext

# Exactly these four image types; image/jpg, SVG, BMP are rejected [SDK: Base64ImageSourceParam.media_type].
IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})
# platform.claude.com/docs/en/build-with-claude/vision, "General limits": "100 per request on the API, for models
# with a 200k-token context window. 600 per request on the API, for all other models."
IMAGES_PER_REQUEST = 100
IMAGES_PER_REQUEST_WIDE = 600
NARROW_CONTEXT = 200_000
# document sources: base64 PDF, plain text, or a PDF by URL [SDK: DocumentBlockParam].
PDF = "application/pdf"
# Audio and video have no block: they degrade to text [SDK: no audio/video block in ContentBlockParam].
NO_BLOCK_KINDS = frozenset({"audio", "video"})


def media_block(part: LLMMediaPart, msg_id: str | None, ctx: RequestContext) -> JSON:
    """A media part as an image or document block, or the text that replaces it with a warning."""
    kind = part.kind
    if kind in NO_BLOCK_KINDS:
        return _text(ctx.degrade(part, msg_id, f"Anthropic takes no {kind}"))
    media = ctx.resolve(part, msg_id)
    if isinstance(media, str):
        return _text(media)
    media_type = media.media_type
    if kind == "image":
        if media.url is not None:
            if media_type is not None and media_type not in IMAGE_TYPES:
                return _text(ctx.degrade(part, msg_id, f"image type {media_type} not accepted"))
            return {"type": "image", "source": {"type": "url", "url": media.url}}
        if media_type not in IMAGE_TYPES:
            return _text(ctx.degrade(part, msg_id, f"image type {media_type} not accepted (no transcoder)"))
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": media.data}}
    source: JSON
    if media.url is not None:
        if media_type not in (PDF, None):
            return _text(ctx.degrade(part, msg_id, f"document URLs must be PDF, not {media_type}"))
        source = {"type": "url", "url": media.url}
    elif media_type == PDF:
        source = {"type": "base64", "media_type": PDF, "data": media.data}
    elif media_type is not None and media_type.startswith("text/"):
        try:
            text = media.raw_bytes().decode("utf-8")
        except UnicodeDecodeError:
            return _text(ctx.degrade(part, msg_id, "text document is not UTF-8"))
        source = {"type": "text", "media_type": "text/plain", "data": text}
    else:
        return _text(ctx.degrade(part, msg_id, f"documents must be PDF or text, not {media_type}"))
    document: JSON = {"type": "document", "source": source}
    if part.filename:
        document["title"] = part.filename
    return document


def _text(text: str) -> JSON:
    return {"type": "text", "text": text}
