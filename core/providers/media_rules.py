"""What one request's model takes of media, beyond its dialect's format: images at all, PDFs at all, an inline
image's size and sides, how many images, and how much inline data one request may carry. A medium the model or
its provider refuses becomes text with a warning naming the preflight rule it answers
(``RequestContext.resolve``).

The model facts come from the model table; only a model the table knows (its own entry, an alias or its
family) is limited, as :func:`core.models.limits.fit_to_model` does: an unknown model's stand-in facts say
nothing about it. The size and count limits are the dialect's (``Dialect.inline_image_limit`` and friends).
"""

from __future__ import annotations

import binascii
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from core.llm.messages import LLMImagePart, LLMUserMessage

if TYPE_CHECKING:
    from core.llm.messages import LLMMessage
    from core.models.table import FactsChoice
    from core.providers.base import Dialect
    from core.providers.media import ResolvedMedia

PDF = "application/pdf"
# Base64 characters decoded to find an image's size: a JPEG's frame header may follow 64 KiB of EXIF.
_HEAD_CHARS = 4 * 65536 // 3 // 4 * 4
# JPEG start-of-frame markers (those that carry the size): C0..CF but DHT (C4), JPG (C8) and DAC (CC).
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}

# The preflight rules (core/preflight/media.py) whose fix a text fallback of this module is.
NO_IMAGES_RULE = "model-takes-images"
NO_PDF_RULE = "model-takes-pdf"
IMAGE_SIZE_RULE = "inline-image-size"
IMAGE_SIDE_RULE = "inline-image-dimensions"
IMAGE_COUNT_RULE = "image-count"
INLINE_TOTAL_RULE = "inline-media-total"

Refusal = tuple[str, str]
"""The preflight rule a medium would break and why, in words."""


def base64_length(raw_bytes: int) -> int:
    """How many base64 characters ``raw_bytes`` bytes take (a limit stated on the file, counted on the body)."""
    return 4 * ((raw_bytes + 2) // 3)


def is_image(kind: str, media_type: str | None) -> bool:
    """Whether a medium is an image, by its kind or its media type."""
    return kind == "image" or (media_type or "").startswith("image/")


@dataclass(slots=True)
class MediaTally:
    """What one request has taken so far: its images and its inline base64 characters."""

    images: int = 0
    inline_chars: int = 0

    def add(self, media: ResolvedMedia) -> None:
        """Count a medium the request sends."""
        if is_image(media.kind, media.media_type):
            self.images += 1
        if media.data is not None:
            self.inline_chars += len(media.data)


@dataclass(frozen=True, slots=True)
class MediaRules:
    """The media limits of one model: ``no_images``/``no_pdf`` name the model when its table entry says it takes
    none; ``inline_image_limit`` is the most base64 characters one inline image may have, ``max_image_side`` its
    most pixels a side, ``max_images`` the most images a request may hold and ``inline_request_limit`` the most
    base64 characters of inline media a request may carry, ``many_images`` the ``(count, side)`` past which images
    take a smaller side limit (None: no limit)."""

    no_images: str | None = None
    no_pdf: str | None = None
    inline_image_limit: int | None = None
    max_image_side: int | None = None
    max_images: int | None = None
    inline_request_limit: int | None = None
    many_images: tuple[int, int] | None = None

    def for_request(self, messages: Sequence[LLMMessage]) -> MediaRules:
        """These rules for a request of ``messages``: with the smaller side limit past ``many_images[0]`` images
        (counted before any is refused, so the limit may apply to a request that ends with fewer)."""
        many = self.many_images
        if many is None:
            return self
        count = sum(1 for m in messages if type(m) is LLMUserMessage for p in m.content if type(p) is LLMImagePart)
        if count <= many[0]:
            return self
        return replace(self, max_image_side=min(self.max_image_side or many[1], many[1]))

    def refusal(self, media: ResolvedMedia, sent: MediaTally | None = None) -> Refusal | None:
        """Why the model refuses ``media`` after the media ``sent`` before it (its text fallback's rule and
        reason), or None when it takes it."""
        media_type = media.media_type or ""
        image = is_image(media.kind, media_type)
        if self.no_images is not None and image:
            return NO_IMAGES_RULE, f"the model table says {self.no_images!r} takes no images"
        if self.no_pdf is not None and media_type == PDF:
            return NO_PDF_RULE, f"the model table says {self.no_pdf!r} takes no PDF input"
        data = media.data
        limit = self.inline_image_limit
        if limit is not None and data is not None and image and len(data) > limit:
            return IMAGE_SIZE_RULE, (
                f"inline image of {len(data):,} base64 bytes is over the provider's {limit:,}-byte limit"
            )
        side = self.max_image_side
        size = image_size(data) if side is not None and data is not None and image else None
        if side is not None and size is not None and max(size) > side:
            return IMAGE_SIDE_RULE, (
                f"inline image of {size[0]}x{size[1]} px is over the provider's {side}-pixel limit per side"
            )
        if sent is None:
            return None
        if self.max_images is not None and image and sent.images >= self.max_images:
            return IMAGE_COUNT_RULE, f"the request already holds the provider's {self.max_images} images at most"
        total = self.inline_request_limit
        if total is not None and data is not None and sent.inline_chars + len(data) > total:
            return INLINE_TOTAL_RULE, (
                f"{len(data):,} more base64 bytes would take the request's inline media over the provider's "
                f"{total:,}-byte limit"
            )
        return None


NO_RULES = MediaRules()


def media_rules(dialect: Dialect, choice: FactsChoice) -> MediaRules:
    """The media rules of the model ``choice`` found, under ``dialect``'s limits."""
    facts = choice.facts
    known = facts is not None and choice.match != "dialect"
    no_images = facts.model if known and facts is not None and facts.says("vision") is False else None
    no_pdf = facts.model if known and facts is not None and facts.says("pdf_input") is False else None
    rules = MediaRules(
        no_images,
        no_pdf,
        dialect.inline_image_limit,
        dialect.max_image_side,
        dialect.max_images(choice),
        dialect.inline_request_limit,
        dialect.many_images,
    )
    return NO_RULES if rules == NO_RULES else rules


def image_size(data: str) -> tuple[int, int] | None:
    """The width and height a base64 PNG, GIF or JPEG states in its header, or None when it states none."""
    try:
        head = binascii.a2b_base64(data[:_HEAD_CHARS])
    except binascii.Error:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return int.from_bytes(head[16:20]), int.from_bytes(head[20:24])
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    if head[:2] == b"\xff\xd8":
        return _jpeg_size(head)
    return None


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 <= len(head):
        if head[i] != 0xFF:
            return None
        marker = head[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in _JPEG_SOF:
            return int.from_bytes(head[i + 7 : i + 9]), int.from_bytes(head[i + 5 : i + 7])
        i += 2 + int.from_bytes(head[i + 2 : i + 4])
    return None
