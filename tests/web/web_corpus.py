"""Conversations for the dashboard tests: every message kind, with one string placed in every field.

``every_kind(text)`` is the XSS corpus's carrier: the payload goes into each
text field, name, id, path, URL, metadata key and value of every card kind, so a
single unescaped sink anywhere shows up in the parsed page.
"""

from __future__ import annotations

import atexit
import base64
import json
import shutil
import struct
import tempfile
import zlib
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from litestar import Litestar

from core import MESSAGE_ADAPTER, Message
from core.messages.refs import looks_like_url
from core.reader import Record
from core.store import Store
from web.app import create_app
from web.settings import CSRF_COOKIE_PREFIX, Settings

BASE_URL = "http://127.0.0.1:8000"


def csrf_cookie(cookies: Any) -> str:
    """The value of the dashboard's CSRF cookie, whose name is one per signing key (``Settings.csrf_cookie_name``)."""
    (value,) = [v for name, v in dict(cookies).items() if name.startswith(CSRF_COOKIE_PREFIX)]
    return str(value)


def import_messages(store: Store, messages: Iterable[Message], source: str = "corpus.jsonl") -> None:
    """Store messages as ``traceloupe import`` would store a file holding them (one file, all-or-nothing)."""
    records = [Record(source, i + 1, i, MESSAGE_ADAPTER.dump_python(m, mode="json"), m) for i, m in enumerate(messages)]
    if records:
        store.import_records(records, source=source)


def temp_store(messages: Iterable[Message] = ()) -> Store:
    """A fresh SQLite store in a temporary folder (removed at exit), holding ``messages``."""
    folder = Path(tempfile.mkdtemp(prefix="traceloupe-web-"))
    store = Store.open(str(folder / "traces.db"))
    atexit.register(shutil.rmtree, folder, True)
    atexit.register(store.close)
    import_messages(store, messages)
    return store


def make_app(messages: list[Message] | None = None, **settings: Any) -> Litestar:
    """An app over a fresh store of ``messages`` (default: every kind in plain text, plus a 250-record trace)."""
    if messages is None:
        messages = every_kind("plain text") + long_trace(250)
    return create_app(Settings(**settings), temp_store(messages))


XSS_PAYLOADS: tuple[str, ...] = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)>",
    '"><script>alert(1)</script>',
    "'><img src=x onerror=alert(1)>",
    "<iframe src=javascript:alert(1)></iframe>",
    '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "javascript:alert(1)",
    "JaVaScRiPt:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    '<a href="javascript:alert(1)">x</a>',
    '<div hx-get="/check" hx-trigger="load">x</div>',
    '<div hx-post="/check" hx-trigger="load" hx-vals=\'js:{a:alert(1)}\'>x</div>',
    '<div hx-on:click="alert(1)" data-hx-get="/">x</div>',
    "<body onload=alert(1)>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<details open ontoggle=alert(1)>",
    "{{ 7*7 }}{{ ''.__class__ }}{% raw %}",
    "<style>*{background:url(https://canary.invalid/x)}</style>",
    '<img srcset="https://canary.invalid/a.png 1x">',
    "<object data=javascript:alert(1)>",
    "<base href=https://canary.invalid/>",
    "</textarea></pre><script>alert(1)</script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
)


async def drive(
    app: Litestar,
    method: str,
    path: str,
    receive: Callable[[], Awaitable[dict[str, Any]]],
    headers: Iterable[tuple[bytes, bytes]] = (),
) -> int | None:
    """The response status of one raw ASGI request whose body ``receive`` plays: a client the test client cannot
    be, one that stalls mid-body or leaves before the answer."""
    status: int | None = None

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"127.0.0.1:8000"), *headers],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }
    await app(scope, receive, send)  # type: ignore[arg-type]
    return status


def every_kind(text: str, *, conversation_id: str = "c-every", start: int = 1_700_000_000_000) -> list[Message]:
    """Top-level messages covering all fifteen card kinds (and a damaged record), ``text`` in every field."""
    url = text if looks_like_url(text) else f"https://example.com/{text}"
    part_fields: dict[str, Any] = {"detail": text, "media_type": "image/png"}
    parts = [
        {"type": "text", "text": text},
        {"type": "image", "url": url, **part_fields},
        {"type": "image", "path": text, **part_fields},
        {"type": "audio", "url": "javascript:alert(1)", "detail": text},
        {"type": "video", "data": "AAAA", "media_type": text, "detail": text},
        {"type": "file", "path": text, "filename": text, "detail": text},
    ]
    meta = {text: text, "nested": {"k": text}}
    creator = {"uid": text, "name": text, text: text}

    def msg(i: int, **fields: Any) -> dict[str, Any]:
        return {
            "msg_id": f"m{i}-{text[:400]}",  # ids are capped (core.store.MAX_ID_CHARS); the text goes everywhere else
            "conversation_id": conversation_id,
            "create_ts": start + i * 1000,
            "creator": creator,
            "additional_kwargs": meta,
            text: text,
            **fields,
        }

    records = [
        msg(1, role="system", content=text),  # before the user message
        msg(3, role="assistant", msg_type="text", content=text, reasoning_content=text),
        msg(
            4,
            role="assistant",
            msg_type="text",
            content=text,
            reasoning_content=[
                {"type": "thinking", "thinking": text, "signature": text},
                {"type": "thinking", "thinking": text, "signature": ""},
                {"type": "redacted_thinking", "data": text},
            ],
            tool_calls=[
                {"id": f"call-{text}", "name": text, "arguments": '{"q": ' + _json_str(text) + "}"},
                {"id": "call-bad", "name": text, "arguments": text + "{not json"},
            ],
            function_call={"name": text, "arguments": text},
        ),
        msg(
            5,
            role="tool",
            content=text,
            tool_reses=[
                {"call_id": f"call-{text}", "name": text, "result": text, "attachments": parts, "is_error": True},
                {"call_id": "call-bad", "name": text, "result": text, "is_error": False},
                text,
            ],
        ),
        msg(
            6,
            role="console",
            content=text,
            console_reses=[
                {"result": text, "summary_result": text, "attachments": parts, "meta": meta},
                text,
            ],
        ),
        msg(7, role="assistant", msg_type="text", content="", tfl_scripts=[text, text]),
        msg(8, role="function", content=text, function_res={"name": text, "result": text}),
        msg(9, role="assistant", content=text, tool_calls=[{"id": text, "name": text, "arguments": text}]),  # damaged
        msg(10, role="user", content=text),  # damaged user record
    ]
    history = [
        msg(40, role="user", msg_type="text", content=text),
        msg(41, role="assistant", msg_type="text", content=text, reasoning_content=text),
        msg(42, role="user", msg_type="image", content=url),
        msg(43, role="user", content=[{"type": "text", "text": text}]),  # damaged, repaired as multipart
        msg(
            44,
            role="user",
            msg_type="text",
            content=text,
            intermediate_trace={"records": [msg(45, role="assistant", msg_type="text", content=text)]},
        ),
    ]
    top = [
        msg(2, role="user", msg_type="text", content=text, intermediate_trace={"records": records}),
        msg(20, role="user", msg_type="image", content=url),
        msg(21, role="user", msg_type="image", content=text),
        msg(22, role="user", msg_type="audio", content=url),
        msg(23, role="user", msg_type="video", content=text),
        msg(24, role="user", msg_type="attachment", content=url),
        msg(25, role="user", msg_type="url", content=url),
        msg(26, role="user", msg_type="contact", content={"uid": text, "name": text, text: text}),
        msg(27, role="user", msg_type="history", content=history),
        msg(28, role="user", msg_type="multipart", content=parts),
        msg(29, role="user", msg_type="image", content=f"data:image/png;base64,{tiny_png()}"),
    ]
    return [MESSAGE_ADAPTER.validate_python(m) for m in top]


def tiny_png(size: int = 24) -> str:
    """A real PNG (a blue square with a red diagonal), base64: something a browser actually decodes."""
    rows = b"".join(
        b"\x00" + b"".join(b"\xd0\x30\x30" if x == y else b"\x2f\x6f\xd6" for x in range(size)) for y in range(size)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def _json_str(text: str) -> str:
    return json.dumps(text)


def long_trace(records: int, *, conversation_id: str = "c-long", start: int = 1_700_000_000_000) -> list[Message]:
    """One user message whose trace holds ``records`` assistant/tool records after it."""
    trace: list[dict[str, Any]] = []
    for i in range(records):
        ts = start + 1000 + i
        if i % 2 == 0:
            trace.append(
                {
                    "role": "assistant",
                    "msg_type": "text",
                    "msg_id": f"r{i}",
                    "create_ts": ts,
                    "content": f"step {i}: looking things up",
                    "tool_calls": [{"id": f"call{i}", "name": "search", "arguments": json.dumps({"q": f"step {i}"})}],
                    "conversation_id": conversation_id,
                }
            )
        else:
            trace.append(
                {
                    "role": "tool",
                    "msg_id": f"r{i}",
                    "create_ts": ts,
                    "tool_reses": [{"call_id": f"call{i - 1}", "name": "search", "result": f"result {i}"}],
                    "conversation_id": conversation_id,
                }
            )
    user = {
        "role": "user",
        "msg_type": "text",
        "msg_id": "u0",
        "create_ts": start,
        "content": "a long task",
        "conversation_id": conversation_id,
        "intermediate_trace": {"records": trace},
    }
    return [MESSAGE_ADAPTER.validate_python(user)]
