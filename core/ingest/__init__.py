"""Live ingest: OTLP/HTTP trace exports stored as received (``intake``), then assembled by a job (``assembly``).

``receive`` reads a request (media type, encoding, spans) and writes its answer, after the OTLP
specification; ``intake`` appends a batch before the request is answered; ``assembly`` makes conversations
of the stored spans with the file importers' reader and assembler, whatever the order and repeats.
"""

from core.ingest.assembly import ASSEMBLE_TASK, AssemblyReport, assemble_pending, queue_assembly
from core.ingest.intake import DEFAULT_MAX_PENDING, QueueFull, StoreBusy, store_batch
from core.ingest.live import LIVE_WINDOW_MS, live_among
from core.ingest.receive import (
    MEDIA_TYPES,
    BodyTooLarge,
    MediaType,
    ReceivedBatch,
    UnsupportedEncoding,
    decompressed,
    export_response,
    media_type,
    status_body,
)

__all__ = [
    "ASSEMBLE_TASK",
    "DEFAULT_MAX_PENDING",
    "LIVE_WINDOW_MS",
    "MEDIA_TYPES",
    "AssemblyReport",
    "BodyTooLarge",
    "MediaType",
    "QueueFull",
    "ReceivedBatch",
    "StoreBusy",
    "UnsupportedEncoding",
    "assemble_pending",
    "decompressed",
    "export_response",
    "live_among",
    "media_type",
    "queue_assembly",
    "status_body",
    "store_batch",
]
