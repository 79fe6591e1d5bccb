"""``/api-docs``: every operation of the JSON API, its parameters and answers, and the schemas they name.

Litestar's bundled OpenAPI UIs (Swagger, ReDoc, Scalar, RapiDoc, Stoplight) load their scripts from CDNs and
start them with inline scripts, which the CSP (``script-src 'self'``) refuses and an offline machine cannot
fetch; this page is the same document rendered by the server. ``/schema`` keeps the document itself.
"""

from __future__ import annotations

from typing import Any

from litestar import Request, get
from litestar.response import Template

from web import urls
from web.apidocs.pages import api_page
from web.auth.access import PageController


class ApiDocsController(PageController):
    """The API page (a page of the dashboard, not part of the API it describes)."""

    @get(urls.API_DOCS, name="api-docs", sync_to_thread=False)
    def api_docs(self, request: Request[Any, Any, Any]) -> Template:
        """The OpenAPI document as a page, with a way back to the dashboard."""
        return Template("apidocs/api.html", context={"page": api_page(request.app.openapi_schema.to_schema())})
