"""Errors to responses, in one place: an HTML page in the app's layout, or JSON for API clients.

``core``'s error tree maps here (misuse is the client's 4xx, a provider failure is
502); anything unexpected is a 500 that says so without leaking a traceback.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from litestar import Litestar, Request, Response
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec
from litestar.response import Redirect, Template
from litestar.types import ExceptionHandlersMap

from core import InputError, MisuseError, ProviderError, UnknownNameError
from core.store import StoreError
from core.store.errors import DATABASE_LOST
from web import urls
from web.auth.guard import LoginRequired
from web.heavy import BudgetExceeded, ClientGone, HeavyBusy
from web.replays.service import KeyConflict, ReplayBusy
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
    503: "The database or the build limits cannot serve this request now.",
    500: "Something went wrong inside the dashboard; the server log has the details.",
}

API_ERRORS = (400, 403, 503)
"""Errors any JSON API request can meet: a bad parameter, another site's request, a database or build limit."""


@dataclass(frozen=True, slots=True)
class ErrorPage:
    """Any error, in the app's layout: what happened, in words."""

    status_code: int
    title: str
    detail: str
    path: str
    command: str | None = None


@dataclass(frozen=True, slots=True)
class ErrorBody:
    """An error as a JSON client receives it; ``command`` (when present) does the same work on the command line."""

    status_code: int
    detail: str
    command: str | None = None


def error_responses(*codes: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for these error statuses, all with the one error body."""
    return {
        code: ResponseSpec(
            data_container=ErrorBody, description=_DETAILS.get(code, HTTPStatus(code).phrase), generate_examples=False
        )
        for code in codes
    }


def document_api_errors(app: Litestar) -> None:
    """Put the errors every API operation can answer into the schema (404 where the path names something).

    Errors are mapped here, in one place, so they are documented here too; a handler adds its own
    (``responses=error_responses(422)``) where only it can answer them.
    """
    for route in app.routes:
        if not route.path.startswith("/api/"):
            continue
        codes = (*API_ERRORS, 404) if route.path_parameters else API_ERRORS
        for handler in getattr(route, "route_handlers", ()):
            handler.responses = {**error_responses(*codes), **(handler.responses or {})}


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
    # A 405 names the methods the address takes (RFC 9110 section 15.5.6): Litestar's router puts them in ``allow``.
    headers = {k: v for k, v in (exc.headers or {}).items() if k.lower() == "allow"} or None
    return error_response(request, exc.status_code, detail or _DETAILS.get(exc.status_code, ""), headers=headers)


def _login_required(request: Request[Any, Any, Any], exc: LoginRequired) -> Response[Any]:
    """A page opened without a login goes to the login form, which comes back to it; anything else gets 401."""
    if request.method == "GET" and not wants_json(request) and not request.headers.get("hx-request"):
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        return Redirect(f"{urls.LOGIN}{urls.query(next=target)}", status_code=303)
    return error_response(request, 401, str(exc.detail))


def _core_error(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    if isinstance(exc, UnknownNameError):
        return error_response(request, 404, str(exc))
    if isinstance(exc, ReplayBusy):
        return error_response(request, 503, str(exc))
    if isinstance(exc, KeyConflict):  # an idempotency key of another conversation's or suite's run
        return error_response(request, 409, str(exc))
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
    LoginRequired: _login_required,
    HTTPException: _http_error,
    Exception: _core_error,
}
