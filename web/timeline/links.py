"""How a path or URL from a trace is shown: never fetched by the server, never live unless harmless.

Every location in a trace is attacker-controlled. Only ``http``/``https`` become
links (opened in a new tab, without referrer); ``data:`` images can be shown after
a click when they are small raster images; everything else (``javascript:``,
``vbscript:``, ``file:``, unknown schemes) is shown as inert text.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from typing import Literal

from core.messages.refs import looks_like_url
from web import urls

LocationKind = Literal["remote", "data", "path", "inert"]

# Raster types a browser decodes without running anything; SVG is left out on purpose.
INLINE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_LINK_CHARS = 8192
"""A longer "URL" is shown as clipped text, never as a link: no real link is that long, and it would bloat the page."""
MAX_INLINE_DATA_BYTES = 256 * 1024
"""Inline base64 media above this size stays a placeholder: it would bloat the page budget."""

_DATA_URL = re.compile(r"^data:([^;,]*)((?:;[^;,]*)*),", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x20]")


@dataclass(frozen=True, slots=True)
class LocationView:
    """A location ready for a template: what to print, and the only href or src it may use."""

    kind: LocationKind
    text: str
    href: str | None = None
    inline_src: str | None = None
    media_type: str | None = None
    size: int | None = None
    scheme: str | None = None
    attachment: str | None = None
    """For a path: the dashboard URL that serves it from the attachments root (plain relative paths only)."""


def location_view(text: str, *, media_type: str | None = None) -> LocationView:
    """Classify a path or URL from a trace (FORMAT.md's scheme rule decides which it is)."""
    if not looks_like_url(text):
        return LocationView(
            kind="path", text=_preview(text, MAX_LINK_CHARS), media_type=media_type, attachment=urls.attachment(text)
        )
    # Browsers drop control characters and spaces inside schemes ("java\tscript:"), so judge the cleaned text.
    cleaned = _CONTROL.sub("", text)
    scheme = cleaned.split(":", 1)[0].lower()
    if scheme in ("http", "https") and len(text) <= MAX_LINK_CHARS:
        return LocationView(kind="remote", text=text, href=text, media_type=media_type, scheme=scheme)
    if scheme == "data":
        return data_url_view(text)
    return LocationView(kind="inert", text=_preview(text, MAX_LINK_CHARS), scheme=scheme, media_type=media_type)


def data_url_view(text: str) -> LocationView:
    """A ``data:`` URL: its media type and decoded size, and a src only for small raster images."""
    match = _DATA_URL.match(text)
    if match is None:
        return LocationView(kind="inert", text=_preview(text), scheme="data")
    declared = match.group(1) or "text/plain"  # shown as written; compared in lower case
    payload = text[match.end() :]
    is_base64 = ";base64" in match.group(2).lower()
    size = len(payload) * 3 // 4 if is_base64 else len(payload)
    inline = is_base64 and declared.lower() in INLINE_IMAGE_TYPES and size <= MAX_INLINE_DATA_BYTES
    src = f"data:{declared.lower()};base64,{payload}" if inline else None
    return LocationView(kind="data", text=_preview(text), inline_src=src, media_type=declared, size=size, scheme="data")


def inline_data_view(data: str, media_type: str | None) -> LocationView:
    """Base64 bytes carried in a part's ``data`` field, shown like a ``data:`` URL."""
    declared = media_type or "application/octet-stream"
    size = len(data) * 3 // 4
    src = None
    if declared.lower() in INLINE_IMAGE_TYPES and size <= MAX_INLINE_DATA_BYTES and _is_base64(data):
        src = f"data:{declared.lower()};base64,{data}"
    return LocationView(kind="data", text=_preview(data), inline_src=src, media_type=declared, size=size, scheme="data")


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return True


def _preview(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"
