"""``POST /v1/traces``: an OTLP/HTTP trace export, stored before it is answered (https://opentelemetry.io/docs/specs/otlp/).

Statuses, in the order they are decided: 401 without an active ingest key (``Authorization: Bearer``),
415 for a media type or ``Content-Encoding`` OTLP/HTTP does not have, 413 for a body (or its
decompressed form) over ``Settings.ingest_max_bytes``, 400 for a body that is not an OTLP export,
503 with ``Retry-After`` when the assembly queue is full or the store is busy, else 200 with an
``ExportTraceServiceResponse`` whose ``partial_success`` names the spans refused. The body of a
failure is a ``google.rpc.Status`` in the request's encoding.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio.to_thread
from litestar import Request, Response, post

from core.errors import InputError
from core.ingest import (
    BodyTooLarge,
    MediaType,
    QueueFull,
    StoreBusy,
    UnsupportedEncoding,
    decompressed,
    export_response,
    media_type,
    status_body,
    store_batch,
)
from core.ingest.receive import INVALID_ARGUMENT
from web.auth.access import OWN_KEY, needs
from web.deps import RunsDep, SettingsDep, SourceDep
from web.ingest.service import assemble_later, ingest_key
from web.security import log_safe
from web.settings import INGEST_PATH

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
UNAUTHENTICATED, RESOURCE_EXHAUSTED, UNAVAILABLE = 16, 8, 14
"""``google.rpc.Code`` values of the failures that are not the body's fault."""


def _failure(status: int, code: int, message: str, media: MediaType | None, **headers: str) -> Response[bytes]:
    return Response(
        status_body(code, message, media),
        status_code=status,
        media_type=media or "application/json",
        headers=headers,
    )


@post(
    INGEST_PATH,
    name="otlp-traces",
    status_code=200,
    include_in_schema=False,
    exclude_from_csrf=True,
    opt=needs(OWN_KEY),
)
async def export_traces(
    request: Request[Any, Any, Any], source: SourceDep, settings: SettingsDep, run_service: RunsDep
) -> Response[bytes]:
    """Store an OTLP trace export (JSON or protobuf, gzipped or not) and queue its assembly."""
    store = source.store
    media = media_type(request.headers.get("content-type"))
    key = await anyio.to_thread.run_sync(ingest_key, store, request.headers.get("authorization"))
    if key is None:
        message = "an active ingest key is required: Authorization: Bearer tlk_... (traceloupe keys create)"
        return _failure(401, UNAUTHENTICATED, message, media, **{"WWW-Authenticate": "Bearer"})
    if media is None:
        return _failure(415, INVALID_ARGUMENT, "OTLP/HTTP takes application/x-protobuf or application/json", None)
    raw = await request.body()
    try:
        body = decompressed(raw, request.headers.get("content-encoding"), settings.ingest_max_bytes)
        del raw
        batch = await anyio.to_thread.run_sync(
            lambda: store_batch(store, body, media, key_pk=key.id, max_pending=settings.ingest_max_pending)
        )
    except UnsupportedEncoding as error:
        return _failure(415, INVALID_ARGUMENT, f"unsupported Content-Encoding {str(error)[:40]!r}: gzip", media)
    except BodyTooLarge:
        limit = f"{settings.ingest_max_bytes:,}"
        return _failure(413, RESOURCE_EXHAUSTED, f"the body is larger than {limit} bytes, decompressed", media)
    except InputError as error:
        return _failure(400, INVALID_ARGUMENT, error.reason[:500], media)
    except QueueFull:
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        return _failure(503, UNAVAILABLE, "the assembly queue is full: retry later", media, **retry)
    except StoreBusy as error:  # locked by a long write, or unreachable: the exporter keeps the spans and retries
        log.warning("an OTLP export could not be stored: %s", log_safe(error))
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        return _failure(503, UNAVAILABLE, "the store is busy: retry later", media, **retry)
    await anyio.to_thread.run_sync(assemble_later, run_service.queue)
    return Response(export_response(batch, media), status_code=200, media_type=media)
