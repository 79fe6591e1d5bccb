"""``/attachments/<path>``: a trace's Path attachment, from under the attachments root only, as a download.

The path is read from the request's own (decoded) path, not from a converted
parameter, so nothing normalises ``..`` or ``//`` away before ``web.attachments.files``
judges it. Anything not plainly inside the root is a 404 that names nothing.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.exceptions import HTTPException, NotFoundException
from litestar.params import FromQuery

from web.attachments.files import ATTACHMENT_CSP, PREFIX, serve
from web.auth.access import PageController
from web.deps import SettingsDep

NOT_FOUND = "No attachment at this path under the attachments root."


class AttachmentController(PageController):
    """Serves files under ``Settings.attachments_root``; never fetches a URL."""

    @get("/attachments/{path:path}", name="attachment", sync_to_thread=True)
    def attachment(
        self, request: Request[Any, Any, Any], settings: SettingsDep, inline: FromQuery[bool] = False
    ) -> Response[bytes]:
        """The file's bytes as a download; ``?inline=1`` shows a raster image (magic bytes checked)."""
        if settings.attachments_root is None:
            raise NotFoundException(
                "No attachments root is configured: start the dashboard with --attachments-root DIR."
            )
        raw = str(request.scope.get("path", ""))
        if not raw.startswith(PREFIX):
            raise NotFoundException(NOT_FOUND)
        try:
            served = serve(settings.attachments_root, raw[len(PREFIX) :], inline=inline)
        except ValueError as exc:
            raise HTTPException(status_code=415, detail=str(exc)) from None
        if served is None:
            raise NotFoundException(NOT_FOUND)
        return Response(
            served.data,
            media_type=served.media_type,
            headers={
                "Content-Disposition": served.disposition,
                "Content-Security-Policy": ATTACHMENT_CSP,
                "X-Content-Type-Options": "nosniff",
            },
        )
