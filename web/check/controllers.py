"""``/check``: upload a JSON/JSONL file and see what ``traceloupe check`` would say about it.

The file is read with ``core.reader`` (the CLI's rules, limits and messages) and
nothing is stored: importing into the store arrives with the store.
"""

from __future__ import annotations

from typing import Annotated, Any

from litestar import get, post
from litestar.datastructures import UploadFile
from litestar.enums import RequestEncodingType
from litestar.exceptions import ClientException
from litestar.params import Body
from litestar.response import Template

from core import InputError, UserMessage
from core.integrity import walk
from core.reader import StoreLine, read_bytes
from core.request_context.calls import RecordedCalls, TurnTracker, undefined_tool_calls
from core.store.request_contexts import is_request_line, read_request_lines
from web import urls
from web.auth.access import PageController
from web.check.pages import CheckFinding, CheckPage
from web.deps import SettingsDep
from web.timeline.damage import inspect_record


class CheckController(PageController):
    """A state-changing form in the dashboard's rules: CSRF token, same origin, body limit."""

    path = urls.CHECK

    @get("/", name="check")
    async def form(self, settings: SettingsDep) -> Template:
        """The upload form."""
        return Template("check/check.html", context={"page": CheckPage(max_bytes=settings.max_body_bytes)})

    @post("/", name="check-upload", status_code=200)
    async def upload(
        self,
        data: Annotated[dict[str, Any], Body(media_type=RequestEncodingType.MULTI_PART)],
        settings: SettingsDep,
    ) -> Template:
        """Read the uploaded file and list every record that lost its type (one file per check)."""
        values = [v for value in data.values() for v in (value if isinstance(value, list) else [value])]
        files = [f for f in values if isinstance(f, UploadFile)]
        try:
            if len(files) != 1:
                raise ClientException(f"Check one file at a time ({len(files)} were sent).")
            upload = files[0]
            name = upload.filename or "<upload>"
            raw = await upload.read()
        finally:
            for upload in files:
                await upload.close()
        page = check_bytes(raw, name, settings.max_body_bytes)
        return Template("check/check.html", context={"page": page}, status_code=200 if page.error is None else 400)


def check_bytes(raw: bytes, name: str, max_bytes: int) -> CheckPage:
    """What the upload holds: counts, one finding per damaged record, wherever it is nested, and each recorded call
    of a tool that is not among the tools the file's request contexts store for its turn."""
    findings: list[CheckFinding] = []
    messages = records = 0
    conversations: set[str] = set()
    lines: list[StoreLine] = []
    roles: dict[tuple[str, str], str] = {}
    turns = TurnTracker()
    calls: list[RecordedCalls] = []
    try:
        for record in read_bytes(raw, source=name, store_lines=lines):
            messages += 1
            message = record.message
            conversations.add(message.conversation_id)
            roles[(message.conversation_id, message.msg_id)] = message.role
            if isinstance(message, UserMessage):
                records += len(message.intermediate_trace.records)
            where = f"{name}:{record.line}" if record.line is not None else name
            root = "$" if record.line is not None else f"$[{record.index}]"
            found = turns.calls(message, root, where)
            if found.calls:
                calls.append(found)
            for path, item in walk(message, root):
                damage = inspect_record(item, path)
                if damage is not None:
                    findings.append(CheckFinding(f"{where} {path}", damage))
        _refuse_other_records(lines)
        undefined = undefined_tool_calls(calls, read_request_lines(lines, roles))
    except InputError as exc:
        return CheckPage(filename=name, error=str(exc), max_bytes=max_bytes)
    return CheckPage(
        filename=name,
        messages=messages,
        records=records,
        conversations=len(conversations),
        findings=findings,
        undefined_calls=undefined,
        max_bytes=max_bytes,
    )


def _refuse_other_records(lines: list[StoreLine]) -> None:
    """An export's lines of runs or suites are not a trace: the page reads messages and request contexts only."""
    other = next((line for line in lines if not is_request_line(line)), None)
    if other is not None:
        raise InputError(
            f"a {other.key} line of an export, not a message: this page reads messages and request contexts only",
            source=other.source,
            line=other.line,
            path=other.path,
        )
