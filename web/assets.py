"""The static files: read once at start-up, served by name from memory, under content-hashed names.

``asset("app.css")`` in a template gives ``/static/app.<hash>.css``; that name changes
whenever the file does, so it is cached for a year (``immutable``). The plain name
still answers (for bookmarks and old pages) but must be revalidated every time.
A request is looked up in this table and nowhere else: no path from a request ever
reaches the file system, so ``..``, ``%00`` or a symlink find nothing (404).
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from litestar import Request, Response, get
from litestar.exceptions import NotFoundException
from litestar.handlers import HTTPRouteHandler
from litestar.params import FromPath

from web import urls
from web.auth.access import PUBLIC, needs

STATIC_PREFIX = urls.STATIC
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
SERVED_SUFFIXES = frozenset({".css", ".js", ".png", ".svg", ".ico", ".woff2"})
"""Only built front-end files are served; a README or anything else in the folder is not."""

DIGEST_CHARS = 12


@dataclass(frozen=True, slots=True)
class Asset:
    """One static file: its bytes, its media type, its digest and whether its name is the hashed one."""

    content: bytes
    media_type: str
    digest: str
    hashed: bool


def hashed_name(name: str, digest: str) -> str:
    """``vendor/htmx-2.0.11.min.js`` -> ``vendor/htmx-2.0.11.min.<digest>.js``."""
    path = PurePosixPath(name)
    return str(path.with_name(f"{path.stem}.{digest}{path.suffix}"))


class Assets:
    """Every servable file under one folder, by plain and by hashed name."""

    def __init__(self, root: Path) -> None:
        self._by_name: dict[str, Asset] = {}
        self._urls: dict[str, str] = {}
        for file in sorted(root.rglob("*")):
            if not file.is_file() or file.suffix not in SERVED_SUFFIXES:
                continue
            name = file.relative_to(root).as_posix()
            content = file.read_bytes()
            digest = hashlib.sha256(content).hexdigest()[:DIGEST_CHARS]
            media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
            if media_type.startswith("text/") or media_type.endswith("javascript"):
                media_type += "; charset=utf-8"
            hashed = hashed_name(name, digest)
            self._by_name[name] = Asset(content, media_type, digest, hashed=False)
            self._by_name[hashed] = Asset(content, media_type, digest, hashed=True)
            self._urls[name] = f"{STATIC_PREFIX}/{hashed}"

    def url(self, name: str) -> str:
        """The hashed URL of ``name`` (a KeyError for a file that does not exist: a template bug)."""
        return self._urls[name]

    def get(self, name: str) -> Asset | None:
        """The file a request names, or None."""
        return self._by_name.get(name)

    def handler(self) -> HTTPRouteHandler:
        """``GET /static/{name}``: the file from memory, with its cache lifetime and ETag."""
        assets = self

        @get(
            f"{STATIC_PREFIX}/{{name:path}}",
            name="static",
            include_in_schema=False,
            sync_to_thread=False,
            opt=needs(PUBLIC),
        )
        def static(name: FromPath[str], request: Request[Any, Any, Any]) -> Response[bytes]:
            asset = assets.get(name.lstrip("/"))
            if asset is None:
                raise NotFoundException()
            etag = f'"{asset.digest}"'
            headers = {"Cache-Control": IMMUTABLE if asset.hashed else REVALIDATE, "ETag": etag}
            if request.headers.get("if-none-match") == etag:
                return Response(b"", status_code=304, headers=headers)
            return Response(asset.content, media_type=asset.media_type, headers=headers)

        return static
