"""``/import``: upload JSON/JSONL files into the store, each all-or-nothing, with the CLI's rules and lines.

A state-changing form in the dashboard's rules: CSRF token, same origin. Its body
limit is its own (``Settings.import_max_bytes``, ``--import-max-mib``), larger than
the general one, and explicit on this route alone (the guard refuses a larger
declared body before reading it; Litestar enforces the same bound on a streamed one).
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Controller, get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException
from litestar.params import Body
from litestar.response import Template

from web.deps import SettingsDep, SourceDep
from web.importing import import_stream, limits_for
from web.pages import ImportPage
from web.settings import IMPORT_PATH

MAX_FILES = 20


class ImportController(Controller):
    """The import form and its upload."""

    path = IMPORT_PATH
    include_in_schema = False

    @get("/", name="import")
    async def form(self, settings: SettingsDep) -> Template:
        """The upload form, with its limit."""
        return Template("import.html", context={"page": ImportPage(max_bytes=settings.import_max_bytes)})

    # The body limit (settings.import_max_bytes) is set on the Router that create_app wraps this controller in.
    @post("/", name="import-upload", status_code=200, sync_to_thread=True)
    def upload(
        self,
        data: Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)],
        source: SourceDep,
        settings: SettingsDep,
    ) -> Template:
        """Import every uploaded file; one result line per file, as ``traceloupe import`` prints them."""
        values = [v for value in data.values() for v in (value if isinstance(value, list) else [value])]
        files = [f for f in values if isinstance(f, UploadFile)]
        if not files:
            raise ClientException("Choose at least one .json or .jsonl file to import.")
        if len(files) > MAX_FILES:
            raise ClientException(f"At most {MAX_FILES} files per upload.")
        limits = limits_for(settings.import_max_bytes)
        results = []
        for upload in files:
            try:
                results.append(import_stream(source, upload.file, upload.filename, limits))
            finally:
                upload.file.close()
        page = ImportPage(max_bytes=settings.import_max_bytes, results=results)
        return Template("import.html", context={"page": page}, status_code=200 if not page.failed else 400)
