"""Media rules that depend on the model or the provider's size limit, for every dialect: an image sent to a model
whose table entry says it takes none, and an inline image over the provider's limit (``core.providers.media_rules``
is the builder's side of the same rules)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from core.models.table import facts_for
from core.preflight.findings import Finding, Rule, pointer
from core.providers.media_rules import image_size

if TYPE_CHECKING:
    from core.providers.base import Dialect

JSON = dict[str, Any]
Path = tuple[str | int, ...]

NO_IMAGES = Rule(
    "model-takes-images",
    "error",
    "an image is sent to a model whose model-table entry says it takes no images",
    "OpenAI 400 'Invalid content type. image_url is only supported by certain models.' (browser-use/web-ui#274, "
    "danny-avila/LibreChat#6333); LiteLLM model map supports_vision: false",
)
IMAGE_SIZE = Rule(
    "inline-image-size",
    "error",
    "an inline image is over the provider's per-image size limit",
    "Anthropic 400 'image exceeds 5 MB maximum: 8259148 bytes > 5242880 bytes' (anthropics/claude-code#19631)",
)

IMAGE_SIDE = Rule(
    "inline-image-dimensions",
    "error",
    "an inline image is larger on a side than the provider takes",
    "Anthropic 400 'At least one of the image dimensions exceed max allowed size: 8000 pixels' "
    "(anthropics/claude-code#4778; platform.claude.com/docs/en/build-with-claude/vision)",
)

RULES = (NO_IMAGES, IMAGE_SIZE, IMAGE_SIDE)

# The keys under which a body holds its turns, per dialect family; media sit anywhere below them.
TURN_KEYS = ("messages", "input", "contents")


def check(dialect: Dialect, body: JSON, model: str | None) -> Iterator[Finding]:
    """Every media rule ``body`` breaks for ``model`` (None: the body's own ``model``) of ``dialect``."""
    choice = facts_for(dialect, model or body.get("model"))
    facts = choice.facts
    no_images = facts is not None and choice.match != "dialect" and facts.says("vision") is False
    limit, side = dialect.inline_image_limit, dialect.max_image_side
    if not no_images and limit is None and side is None:
        return
    for key in TURN_KEYS:
        for path, data in _images(body.get(key), (key,)):
            if no_images and facts is not None:
                yield NO_IMAGES.at(pointer(*path), f"{facts.model!r} takes no images ({facts.source})")
            if limit is not None and data is not None and len(data) > limit:
                yield IMAGE_SIZE.at(pointer(*path), f"{len(data):,} base64 bytes > {limit:,}")
            size = image_size(data) if side is not None and data is not None else None
            if side is not None and size is not None and max(size) > side:
                yield IMAGE_SIDE.at(pointer(*path), f"{size[0]}x{size[1]} px; at most {side} px a side")


def _images(node: Any, path: Path) -> Iterator[tuple[Path, str | None]]:
    """Every image node under ``node`` with its path and its inline base64 text (None for a URL)."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _images(item, (*path, i))
        return
    if not isinstance(node, dict):
        return
    found = _image_data(node)
    if found is not None:
        yield path, found[0]
        return
    for key, value in node.items():
        if isinstance(value, list | dict):
            yield from _images(value, (*path, key))


def _image_data(node: JSON) -> tuple[str | None] | None:
    """``(base64 or None,)`` when ``node`` is an image part of any dialect, else None."""
    kind = node.get("type")
    if kind == "image":  # Anthropic
        source = node.get("source") or {}
        return (source.get("data") if source.get("type") == "base64" else None,)
    if kind in ("image_url", "input_image"):  # Chat Completions, Responses
        url = node.get("image_url")
        url = url.get("url") if isinstance(url, dict) else url
        return (_data_url_payload(url),)
    for key in ("inlineData", "fileData"):  # Gemini
        blob = node.get(key)
        if isinstance(blob, dict) and str(blob.get("mimeType", "")).startswith("image/"):
            return (blob.get("data") if key == "inlineData" else None,)
    return None


def _data_url_payload(url: Any) -> str | None:
    if isinstance(url, str) and url[:5].lower() == "data:":
        return url.partition(",")[2]
    return None
