"""Errors to responses, in one place: an HTML page in the app's layout, or JSON for API clients.

``core``'s error tree maps here (misuse is the client's 4xx, a provider failure is
502); anything unexpected is a 500 that says so without leaking a traceback.
"""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.response import Template
from litestar.types import ExceptionHandlersMap
from sqlalchemy.exc import InterfaceError, OperationalError

from core import InputError, MisuseError, ProviderError, UnknownNameError
from core.store import StoreError
from web.heavy import BudgetExceeded, ClientGone, HeavyBusy
from web.pages import ErrorPage
from web.security import log_safe

log = logging.getLogger(__name__)

_DETAILS: dict[int, str] = {
    400: "The request could not be understood.",
    403: "This request is not allowed.",
    404: "There is nothing at this address.",
    405: "This address does not accept that method.",
    413: "The request body is larger than this dashboard accepts.",
    415: "This file cannot be shown here.",
    422: "The request cannot be built from this conversation.",
    500: "Something went wrong inside the dashboard; the server log has the details.",
}

DATABASE_LOST = (StoreError, OperationalError, InterfaceError)
"""The database cannot answer (gone, locked, unreachable): 503, the page says so, the log has one line."""

BUSY_RETRY_SECONDS = 2


def wants_json(request: Request[Any, Any, Any]) -> bool:
    """API paths and clients that ask for JSON (and not HTML) get JSON errors."""
    if request.url.path.startswith("/api/"):
        return True
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def error_response(
    request: Request[Any, Any, Any],
    status: int,
    detail: str,
    *,
    command: str | None = None,
    headers: dict[str, str] | None = None,
) -> Response[Any]:
    """The response for an error: JSON ``{status_code, detail}`` or the ``error.html`` page.

    ``command`` is a shell command that does what the request could not (shown under the detail).
    """
    if wants_json(request):
        body: dict[str, Any] = {"status_code": status, "detail": detail}
        if command is not None:
            body["command"] = command
        return Response(body, status_code=status, headers=headers)
    title = f"{status} {HTTPStatus(status).phrase}" if status in HTTPStatus._value2member_map_ else str(status)
    page = ErrorPage(status_code=status, title=title, detail=detail, path=request.url.path, command=command)
    return Template("error.html", context={"page": page}, status_code=status, headers=headers)


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    detail = exc.detail if exc.detail and exc.detail != HTTPStatus(exc.status_code).phrase else ""
    return error_response(request, exc.status_code, detail or _DETAILS.get(exc.status_code, ""))


def _core_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if isinstance(exc, UnknownNameError):
        return error_response(request, 404, str(exc))
    if isinstance(exc, InputError | MisuseError):
        return error_response(request, 400, str(exc))
    if isinstance(exc, ProviderError):
        return error_response(request, 502, str(exc))
    if isinstance(exc, BudgetExceeded):
        return error_response(request, 503, str(exc), command=exc.command)
    if isinstance(exc, HeavyBusy):
        return error_response(request, 503, str(exc), headers={"Retry-After": str(BUSY_RETRY_SECONDS)})
    if isinstance(exc, ClientGone):
        return error_response(request, 400, "The client left before the answer was ready.")
    if isinstance(exc, DATABASE_LOST):
        log.warning("database unavailable on %s: %s", log_safe(request.url.path), log_safe(exc))
        reason = str(exc) if isinstance(exc, StoreError) else "it cannot be reached or is busy"
        return error_response(request, 503, f"The database cannot answer now: {reason}")
    log.exception("unhandled error on %s", log_safe(request.url.path), exc_info=exc)
    return error_response(request, 500, _DETAILS[500])


EXCEPTION_HANDLERS: ExceptionHandlersMap = {
    HTTPException: _http_error,
    Exception: _core_error,
}
