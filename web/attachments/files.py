"""Path attachments of a trace, served only from under the configured attachments root.

A path in a trace is attacker-controlled (mlflow/mlflow#7166: ``/get-artifact?path=../../etc/passwd``;
jupyter/nbviewer#473: ``%2e%2e`` escaping a root). The route accepts only a plain relative path: no empty, ``.`` or
``..`` segment (``%2e%2e`` arrives decoded, so it is caught too), no absolute path,
drive letter, ``~``, backslash or NUL. The file is then read by the adapters' own
reader (``core.providers.media.MediaReader``): symlinks and ``..`` resolved, the
real path checked to be inside the root (``is_relative_to``, so ``/data/img2`` is
not inside ``/data/img``), a regular file opened with ``O_NOFOLLOW``, a size cap.

The response is a download (``Content-Disposition: attachment``, an opaque type,
``nosniff``, ``CSP: sandbox``). An image is served inline only when asked
(``?inline=1``, which the page does on a click) and only when its first bytes say it
is a raster image a browser decodes without running anything (SVG never).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from core.providers.media import MediaReader, sniff
from web import urls

PREFIX = urls.ATTACHMENTS
INLINE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
MAX_BYTES = 20 * 1024 * 1024
ATTACHMENT_CSP = "sandbox; default-src 'none'; frame-ancestors 'none'"


@dataclass(frozen=True, slots=True)
class Served:
    """What the route sends: the bytes, their type and how the browser should treat them."""

    data: bytes
    media_type: str
    disposition: str


def serve(root: Path | None, path: str, *, inline: bool) -> Served | None:
    """The response for ``path`` under ``root``, or None (a 404) for anything not plainly inside it.

    Raises ``ValueError`` when an inline view is asked of a file that is not a raster image.
    """
    checked = urls.checked_relative(path)
    if root is None or checked is None:
        return None
    data, _reason = MediaReader(root, MAX_BYTES).read(checked)
    if data is None:
        return None
    name = quote(checked.rsplit("/", 1)[-1], safe="")
    if inline:
        media_type = sniff(data[:48])
        if media_type is None or media_type not in INLINE_TYPES:
            raise ValueError("not a raster image: this file is served only as a download")
        return Served(data, media_type, f"inline; filename*=UTF-8''{name}")
    return Served(data, "application/octet-stream", f"attachment; filename*=UTF-8''{name}")
