"""Where a media part's bytes are, for the dialects: an http(s) URL, or base64 with a checked media type.

Three sources, one rule each:

* inline ``data`` (or a ``data:`` URL): the base64 is checked and its first bytes sniffed;
* an ``http``/``https`` URL: passed on by reference, never fetched here;
* a path: read **only** from under the configured attachments root, after resolving symlinks
  and ``..``; a missing file, a file outside the root, a non-regular file or one over the size
  cap is not an error but a reason, and the part degrades to text.

Any other scheme (``file:``, ``javascript:``, ``ftp:``) is never sent and never opened.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from core.llm.messages import LLMMediaPart
from core.messages.convert import guess_media_type

# Media types some writers use that providers reject (image/jpg: anthropics/claude-code#8184).
MEDIA_TYPE_ALIASES: dict[str, str] = {
    "image/jpg": "image/jpeg",
    "image/pjpeg": "image/jpeg",
    "image/x-png": "image/png",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-mp3": "audio/mpeg",
    "audio/mp3": "audio/mpeg",
    "application/x-pdf": "application/pdf",
}

# Magic bytes -> media type; the bytes win over a declared type ("Image does not match the provided
# media type", anthropics/claude-code#12015).
_MAGIC: tuple[tuple[bytes, int, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
    (b"\xff\xd8\xff", 0, "image/jpeg"),
    (b"GIF87a", 0, "image/gif"),
    (b"GIF89a", 0, "image/gif"),
    (b"%PDF-", 0, "application/pdf"),
    (b"BM", 0, "image/bmp"),
    (b"ID3", 0, "audio/mpeg"),
    (b"\x1a\x45\xdf\xa3", 0, "video/webm"),
    (b"fLaC", 0, "audio/flac"),
    (b"OggS", 0, "audio/ogg"),
    (b"ftyp", 4, "video/mp4"),
)
# ISO-BMFF brands of still images (an ftyp box is otherwise a video); ISO/IEC 23008-12 and the AVIF spec.
_HEIF_BRANDS = {b"heic": "image/heic", b"heix": "image/heic", b"mif1": "image/heif", b"avif": "image/avif"}
_SNIFF_CHARS = 64  # base64 characters decoded for sniffing: 48 bytes


@dataclass(frozen=True, slots=True)
class ResolvedMedia:
    """A medium ready for a body: exactly one of ``url`` (http/https) or ``data`` (standard base64)."""

    kind: str
    media_type: str | None
    url: str | None = None
    data: str | None = None
    filename: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def data_url(self) -> str:
        """The medium as a ``data:`` URL (OpenAI-style image and file parts), or its http(s) URL."""
        if self.data is None:
            return self.url or ""
        return f"data:{self.media_type or 'application/octet-stream'};base64,{self.data}"

    def raw_bytes(self) -> bytes:
        """The decoded bytes of an inline medium (empty for a URL)."""
        return base64.b64decode(self.data) if self.data is not None else b""


def normalise_media_type(media_type: str | None) -> str | None:
    """Lower-case, drop parameters, and map known aliases (``image/jpg`` -> ``image/jpeg``)."""
    if not media_type:
        return None
    clean = media_type.split(";", 1)[0].strip().lower()
    return MEDIA_TYPE_ALIASES.get(clean, clean) or None


def sniff(head: bytes) -> str | None:
    """The media type the first bytes announce, or None when they announce nothing known."""
    if head[4:8] == b"ftyp" and head[8:12] in _HEIF_BRANDS:
        return _HEIF_BRANDS[head[8:12]]
    for magic, offset, media_type in _MAGIC:
        if head[offset : offset + len(magic)] == magic:
            return media_type
    if head[:4] == b"RIFF":
        return {b"WAVE": "audio/wav", b"WEBP": "image/webp", b"AVI ": "video/x-msvideo"}.get(head[8:12])
    text = head.lstrip()[:5].lower()
    if text.startswith((b"<svg", b"<?xml")):
        return "image/svg+xml"
    return None


def fallback_text(part: LLMMediaPart) -> str:
    """The text sent in place of a medium: its ``detail`` when it has one, else a line naming it."""
    if part.detail:
        return f"[{part.kind}: {part.detail}]"
    name = part.filename or part.location
    if name is None or name[:5].lower() == "data:":
        name = f"inline {part.media_type or 'data'}"
    return f"[{part.kind} not included: {name}]"


class MediaReader:
    """Resolves media parts for one request; reads files only under ``root`` and caches each read."""

    __slots__ = ("_cache", "max_bytes", "root")

    def __init__(self, root: Path | None, max_bytes: int) -> None:
        self.root = root.resolve() if root is not None else None
        self.max_bytes = max_bytes
        self._cache: dict[str, tuple[bytes, None] | tuple[None, str]] = {}

    def resolve(self, part: LLMMediaPart) -> ResolvedMedia | str:
        """The part's bytes or URL, or the reason it cannot be sent (a string)."""
        declared = normalise_media_type(part.media_type)
        if part.data is not None:
            return _inline(part, part.data, declared, part.filename)
        if part.url is not None:
            scheme = part.url.split(":", 1)[0].lower()
            if scheme == "data":
                return _data_url(part, part.url, declared)
            if scheme not in ("http", "https"):
                return f"a {scheme}: URL is never sent to a provider"
            return ResolvedMedia(
                part.kind,
                declared or normalise_media_type(guess_media_type(part.url)),
                url=part.url,
                filename=part.filename,
            )
        if part.path is not None:
            raw, reason = self.read(part.path)
            if raw is None:
                return reason or "unreadable"
            media_type = declared or normalise_media_type(guess_media_type(part.path))
            return _checked(part, base64.b64encode(raw).decode("ascii"), raw[:48], media_type, part.filename)
        return "no url, path or data"

    def read(self, path: str) -> tuple[bytes, None] | tuple[None, str]:
        """The bytes of ``path`` under the root, or (None, reason). Never reads outside the root."""
        cached = self._cache.get(path)
        if cached is None:
            cached = self._cache[path] = self._read(path)
        return cached

    def _read(self, path: str) -> tuple[bytes, None] | tuple[None, str]:
        if self.root is None:
            return None, f"path {path!r} not read: no attachments root is configured"
        if "\x00" in path or "\\" in path or (len(path) > 1 and path[1] == ":"):
            return None, f"path {path!r} is not a path under the attachments root"
        try:
            real = (self.root / path).resolve(strict=True)
        except (OSError, RuntimeError):
            return None, f"path {path!r} not found under the attachments root"
        if not real.is_relative_to(self.root):
            return None, f"path {path!r} is outside the attachments root"
        try:
            # O_NOFOLLOW: the resolved path has no symlink left, so one appearing now is a race: refuse it.
            # O_NONBLOCK: a FIFO planted under the root must not hang the request.
            fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return None, f"path {path!r} cannot be opened"
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                return None, f"path {path!r} is not a regular file"
            if info.st_size > self.max_bytes:
                return None, f"path {path!r} is larger than the {self.max_bytes:,}-byte attachment limit"
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(self.max_bytes + 1)
        except OSError:
            return None, f"path {path!r} cannot be read"
        finally:
            os.close(fd)
        if len(data) > self.max_bytes:
            return None, f"path {path!r} is larger than the {self.max_bytes:,}-byte attachment limit"
        return data, None


def _data_url(part: LLMMediaPart, url: str, declared: str | None) -> ResolvedMedia | str:
    header, sep, payload = url[5:].partition(",")
    if not sep or not header.lower().endswith(";base64"):
        return "a data: URL that is not base64"
    media_type = normalise_media_type(header[: -len(";base64")]) or declared
    return _inline(part, payload, media_type, part.filename)


def _inline(part: LLMMediaPart, data: str, media_type: str | None, filename: str | None) -> ResolvedMedia | str:
    try:
        head = binascii.a2b_base64(data[:_SNIFF_CHARS], strict_mode=True)
        if len(data) > _SNIFF_CHARS:
            binascii.a2b_base64(data, strict_mode=True)
    except binascii.Error:
        return "inline data is not valid base64"
    return _checked(part, data, head, media_type, filename)


def _checked(part: LLMMediaPart, data: str, head: bytes, media_type: str | None, filename: str | None) -> ResolvedMedia:
    sniffed = sniff(head)
    notes: tuple[str, ...] = ()
    if sniffed is not None and sniffed != media_type:
        if media_type is not None:
            notes = (f"declared media type {media_type} but the bytes are {sniffed}; sent as {sniffed}",)
        media_type = sniffed
    return ResolvedMedia(part.kind, media_type, data=data, filename=filename, notes=notes)
