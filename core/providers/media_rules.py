"""What one request's model takes of media, beyond its dialect's format: images at all, PDFs at all, and an
inline image's size. A medium the model refuses becomes text with a warning (``RequestContext.resolve``).

The model facts come from the model table; only a model the table knows (its own entry, an alias or its
family) is limited, as :func:`core.models.limits.fit_to_model` does: an unknown model's stand-in facts say
nothing about it. The size limit is the dialect's (``Dialect.inline_image_limit``).
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.providers.base import Dialect
    from core.providers.media import ResolvedMedia

PDF = "application/pdf"
# Base64 characters decoded to find an image's size: a JPEG's frame header may follow 64 KiB of EXIF.
_HEAD_CHARS = 4 * 65536 // 3 // 4 * 4
# JPEG start-of-frame markers (those that carry the size): C0..CF but DHT (C4), JPG (C8) and DAC (CC).
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


@dataclass(frozen=True, slots=True)
class MediaRules:
    """The media limits of one model: ``no_images``/``no_pdf`` name the model when its table entry says it takes
    none; ``inline_image_limit`` is the most base64 characters one inline image may have (None: no limit)."""

    no_images: str | None = None
    no_pdf: str | None = None
    inline_image_limit: int | None = None
    max_image_side: int | None = None

    def refusal(self, media: ResolvedMedia) -> str | None:
        """Why the model refuses ``media`` (the reason of its text fallback), or None when it takes it."""
        media_type = media.media_type or ""
        if self.no_images is not None and (media.kind == "image" or media_type.startswith("image/")):
            return f"the model table says {self.no_images!r} takes no images"
        if self.no_pdf is not None and media_type == PDF:
            return f"the model table says {self.no_pdf!r} takes no PDF input"
        limit = self.inline_image_limit
        if limit is not None and media.data is not None and media_type.startswith("image/") and len(media.data) > limit:
            return f"inline image of {len(media.data):,} base64 bytes is over the provider's {limit:,}-byte limit"
        side = self.max_image_side
        size = image_size(media.data) if side is not None and media.data is not None else None
        if side is not None and size is not None and max(size) > side:
            return f"inline image of {size[0]}x{size[1]} px is over the provider's {side}-pixel limit per side"
        return None


NO_RULES = MediaRules()


def media_rules(dialect: Dialect, choice: FactsChoice) -> MediaRules:
    """The media rules of the model ``choice`` found, under ``dialect``'s inline image limit."""
    facts = choice.facts
    known = facts is not None and choice.match != "dialect"
    no_images = facts.model if known and facts is not None and facts.says("vision") is False else None
    no_pdf = facts.model if known and facts is not None and facts.says("pdf_input") is False else None
    if no_images is None and no_pdf is None and dialect.inline_image_limit is None and dialect.max_image_side is None:
        return NO_RULES
    return MediaRules(no_images, no_pdf, dialect.inline_image_limit, dialect.max_image_side)


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
