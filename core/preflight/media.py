"""Media rules that depend on the model or the provider's limits, for every dialect: an image or a PDF sent to a
model whose table entry says it takes none, an inline image over the provider's size or side limit, more images
than a request may hold, and more inline data than a request may carry (``core.providers.media_rules`` is the
builder's side of the same rules)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from core.models.table import facts_for
from core.preflight.findings import Finding, Rule, pointer
from core.providers.media_rules import (
    IMAGE_COUNT_RULE,
    IMAGE_SIDE_RULE,
    IMAGE_SIZE_RULE,
    INLINE_TOTAL_RULE,
    NO_IMAGES_RULE,
    NO_PDF_RULE,
    PDF,
    image_size,
)

if TYPE_CHECKING:
    from core.providers.base import Dialect

JSON = dict[str, Any]
Path = tuple[str | int, ...]

NO_IMAGES = Rule(
    NO_IMAGES_RULE,
    "error",
    "an image is sent to a model whose model-table entry says it takes no images",
    "OpenAI 400 'Invalid content type. image_url is only supported by certain models.' (browser-use/web-ui#274, "
    "danny-avila/LibreChat#6333); LiteLLM model map supports_vision: false",
)
NO_PDF = Rule(
    NO_PDF_RULE,
    "error",
    "a PDF is sent to a model whose model-table entry says it takes no PDF input",
    "LiteLLM model map supports_pdf_input: false; Anthropic docs, PDF support: 'supported models'",
)
IMAGE_SIZE = Rule(
    IMAGE_SIZE_RULE,
    "error",
    "an inline image is over the provider's per-image size limit",
    "Anthropic 400 'image exceeds 5 MB maximum: 8259148 bytes > 5242880 bytes' (anthropics/claude-code#19631); "
    "OpenAI 'Up to 20MB per image' (platform.openai.com/docs/guides/images-vision)",
)
IMAGE_SIDE = Rule(
    IMAGE_SIDE_RULE,
    "error",
    "an inline image is larger on a side than the provider takes",
    "Anthropic 400 'At least one of the image dimensions exceed max allowed size: 8000 pixels' "
    "(anthropics/claude-code#4778); over 20 images in a request, 2000x2000 px at most "
    "(platform.claude.com/docs/en/build-with-claude/vision)",
)
IMAGE_COUNT = Rule(
    IMAGE_COUNT_RULE,
    "error",
    "a request holds more images than the provider takes",
    "Anthropic: 100 images per request for 200k-context models, 600 for others "
    "(platform.claude.com/docs/en/build-with-claude/vision); OpenAI: 'Up to 500 individual images per request' "
    "(platform.openai.com/docs/guides/images-vision)",
)
INLINE_TOTAL = Rule(
    INLINE_TOTAL_RULE,
    "error",
    "a request carries more inline media than the provider takes in one request",
    "Anthropic 413 request_too_large, 32 MB per request (docs.claude.com/en/api/errors); Gemini inline data up "
    "to 100 MB base64 (blog.google/innovation-and-ai/technology/developers-tools/gemini-api-new-file-limits)",
)

RULES = (NO_IMAGES, NO_PDF, IMAGE_SIZE, IMAGE_SIDE, IMAGE_COUNT, INLINE_TOTAL)

# The keys under which a body holds its turns, per dialect family; media sit anywhere below them.
TURN_KEYS = ("messages", "input", "contents")


@dataclass(frozen=True, slots=True)
class MediaNode:
    """A media part of a body: where it is, its media type when the body states one, its inline base64 (None
    for a URL or a file id) and whether it is an image."""

    path: Path
    media_type: str | None
    data: str | None
    image: bool


def check(dialect: Dialect, body: JSON, model: str | None) -> Iterator[Finding]:
    """Every media rule ``body`` breaks for ``model`` (None: the body's own ``model``) of ``dialect``."""
    choice = facts_for(dialect, model or body.get("model"))
    facts = choice.facts
    known = facts is not None and choice.match != "dialect"
    no_images = known and facts is not None and facts.says("vision") is False
    no_pdf = known and facts is not None and facts.says("pdf_input") is False
    nodes = [node for key in TURN_KEYS for node in media_nodes(body.get(key), (key,))]
    if not nodes:
        return
    images = [node for node in nodes if node.image]
    limit, side = dialect.inline_image_limit, dialect.max_image_side
    many = dialect.many_images
    if many is not None and len(images) > many[0]:
        side = min(side or many[1], many[1])
    for node in nodes:
        at = pointer(*node.path)
        if no_images and node.image and facts is not None:
            yield NO_IMAGES.at(at, f"{facts.model!r} takes no images ({facts.source})")
        if no_pdf and node.media_type == PDF and facts is not None:
            yield NO_PDF.at(at, f"{facts.model!r} takes no PDF input ({facts.source})")
        data = node.data
        if not node.image or data is None:
            continue
        if limit is not None and len(data) > limit:
            yield IMAGE_SIZE.at(at, f"{len(data):,} base64 bytes > {limit:,}")
        size = image_size(data) if side is not None else None
        if side is not None and size is not None and max(size) > side:
            yield IMAGE_SIDE.at(at, f"{size[0]}x{size[1]} px; at most {side} px a side with {len(images)} images")
    yield from _totals(dialect, dialect.max_images(choice), nodes, images)


def _totals(dialect: Dialect, most: int | None, nodes: list[MediaNode], images: list[MediaNode]) -> Iterator[Finding]:
    """The per-request rules: the image past the most a request holds, the medium past the inline limit."""
    if most is not None and len(images) > most:
        yield IMAGE_COUNT.at(pointer(*images[most].path), f"{len(images)} images; {dialect.name} takes {most}")
    total_limit = dialect.inline_request_limit
    if total_limit is None:
        return
    total = 0
    for node in nodes:
        total += len(node.data or "")
        if total > total_limit:
            yield INLINE_TOTAL.at(pointer(*node.path), f"inline media reach {total:,} base64 bytes > {total_limit:,}")
            return


def media_nodes(node: Any, path: Path) -> Iterator[MediaNode]:
    """Every media part under ``node`` of any dialect, in body order."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from media_nodes(item, (*path, i))
        return
    if not isinstance(node, dict):
        return
    found = _media(node, path)
    if found is not None:
        yield found
        return
    for key, value in node.items():
        if isinstance(value, list | dict):
            yield from media_nodes(value, (*path, key))


def _media(node: JSON, path: Path) -> MediaNode | None:
    """``node`` as a media part of any dialect, or None when it is none."""
    kind = node.get("type")
    if kind in ("image", "document"):  # Anthropic
        source = node.get("source")
        source = source if isinstance(source, dict) else {}
        data = source.get("data") if source.get("type") == "base64" else None
        return MediaNode(path, source.get("media_type"), _text(data), kind == "image")
    if kind in ("image_url", "input_image"):  # Chat Completions, Responses
        url = node.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        media_type, data = _data_url(url)
        return MediaNode(path, media_type, data, True)
    if kind in ("file", "input_file"):  # Chat Completions, Responses
        file = node.get("file") if kind == "file" else node
        media_type, data = _data_url(file.get("file_data") if isinstance(file, dict) else None)
        return MediaNode(path, media_type, data, False)
    for key in ("inlineData", "fileData"):  # Gemini
        blob = node.get(key)
        if isinstance(blob, dict):
            mime = blob.get("mimeType")
            mime = mime if isinstance(mime, str) else None
            data = _text(blob.get("data")) if key == "inlineData" else None
            return MediaNode(path, mime, data, (mime or "").startswith("image/"))
    return None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _data_url(url: Any) -> tuple[str | None, str | None]:
    """The media type and base64 of a ``data:`` URL, or (None, None) for anything else."""
    if isinstance(url, str) and url[:5].lower() == "data:":
        header, _, payload = url[5:].partition(",")
        return header.split(";", 1)[0].lower() or None, payload
    return None, None
