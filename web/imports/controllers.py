"""``/import``: upload JSON/JSONL files into the store, each all-or-nothing, with the CLI's rules and lines.

A state-changing form in the dashboard's rules: CSRF token, same origin. Its body
limit is its own (``Settings.import_max_bytes``, ``--import-max-mib``), larger than
the general one, and explicit on this route alone (the guard refuses a larger
declared body before reading it; Litestar enforces the same bound on a streamed one).
"""

from __future__ import annotations

import threading
from typing import IO, Annotated, Any, cast

from litestar import Controller, Request, get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException
from litestar.params import Body
from litestar.response import Template

from core.accounts.roles import Role
from web.auth.access import needs
from web.bodies import digest_task
from web.deps import HeavyDep, RunsDep, SettingsDep, SourceDep
from web.heavy import WorkStopped, release_memory, shell_command
from web.imports.pages import ImportPage, ImportResult
from web.imports.service import import_stream, limits_for, upload_name
from web.settings import IMPORT_PATH

MAX_FILES = 20


class StoppableUpload:
    """An uploaded file, read from its temporary file on disk, that ends the import once it is stopped.

    The reader pulls records through it; raising there is the path a bad record takes, so the
    store rolls the file back and nothing is half-stored.
    """

    def __init__(self, file: IO[bytes], stopped: threading.Event) -> None:
        self._file = file
        self._stopped = stopped

    def _check(self) -> None:
        if self._stopped.is_set():
            raise WorkStopped

    def read(self, size: int = -1) -> bytes:
        self._check()
        return self._file.read(size)

    def readline(self, size: int = -1) -> bytes:
        self._check()
        return self._file.readline(size)

    def tell(self) -> int:
        return self._file.tell()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._file.seek(offset, whence)

    def seekable(self) -> bool:
        return self._file.seekable()

    def readable(self) -> bool:
        return True


class ImportController(Controller):
    """The import form and its upload."""

    opt = needs(Role.REVIEWER)

    path = IMPORT_PATH
    include_in_schema = False

    @get("/", name="import")
    async def form(self, settings: SettingsDep) -> Template:
        """The upload form, with its limit."""
        return Template("imports/import.html", context={"page": ImportPage(max_bytes=settings.import_max_bytes)})

    # The body limit (settings.import_max_bytes) is set on the Router that create_app wraps this controller in.
    # Litestar's multipart parser writes each file part to a temporary file as it arrives (in memory only
    # up to 1 MiB), and the reader parses from there.
    @post("/", name="import-upload", status_code=200, opt=needs(Role.REVIEWER, audited_as="import"))
    async def upload(
        self,
        request: Request[Any, Any, Any],
        data: Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)],
        source: SourceDep,
        settings: SettingsDep,
        heavy: HeavyDep,
        run_service: RunsDep,
    ) -> Template:
        """Import every uploaded file; one result line per file, as ``traceloupe import`` prints them."""
        values = [v for value in data.values() for v in (value if isinstance(value, list) else [value])]
        files = [f for f in values if isinstance(f, UploadFile)]
        if not files:
            raise ClientException("Choose at least one .json or .jsonl file to import.")
        if len(files) > MAX_FILES:
            raise ClientException(f"At most {MAX_FILES} files per upload.")
        limits = limits_for(settings.import_max_bytes)

        def store_all(stopped: threading.Event) -> list[ImportResult]:
            results = []
            try:
                for upload in files:
                    stream = cast("IO[bytes]", StoppableUpload(upload.file, stopped))
                    large = digest_task.DIGEST_MIN_RECORDS
                    results.append(import_stream(source, stream, upload.filename, limits, large))
            finally:
                for upload in files:
                    upload.file.close()
                release_memory()  # the parsed records are garbage now; hand their pages back
            return results

        names = [upload_name(f.filename) for f in files]
        command = shell_command("traceloupe", "import", *names)
        results = await heavy.run(
            request.receive,
            store_all,
            what="the import (each file is stored whole or not at all)",
            command=command,
            interrupt=False,
            budget=settings.import_budget_seconds,
        )
        # The large conversations' pages, made ahead.
        due = [cid for result in results for cid in result.digest_due]
        digest_task.queue_digests(run_service.queue, source, due, settings.attachments_root)
        page = ImportPage(max_bytes=settings.import_max_bytes, results=results)
        return Template("imports/import.html", context={"page": page}, status_code=200 if not page.failed else 400)
