"""The import page: the CLI's rules and lines, all-or-nothing per file, idempotent, CSRF, its own body limit."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.web.web_corpus import BASE_URL, csrf_cookie, make_app
from tests.web.web_html import live_content, parse
from web.cli import main

GOOD = b"".join(
    json.dumps(
        {
            "role": "user",
            "msg_type": "text",
            "content": f"imported {i}",
            "msg_id": f"i{i}",
            "conversation_id": f"imp{i % 2}",
        }
    ).encode()
    + b"\n"
    for i in range(4)
)
BAD = GOOD + b'{"role": "user", "msg_type": "nope", "content": "x", "conversation_id": "imp9"}\n'

upstream_upload_leak = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <function SpooledTemporaryFile.__del__:pytest.PytestUnraisableExceptionWarning"
)


def _post(client: TestClient[Litestar], files: list[tuple[str, bytes]], **kwargs: object) -> tuple[int, str]:
    client.get("/import")
    token = csrf_cookie(client.cookies)
    data = kwargs.pop("data", {"_csrf_token": token})
    response = client.post("/import", files=[("files", f) for f in files], data=data, **kwargs)  # type: ignore[arg-type]
    gc.collect()
    return response.status_code, response.text


def _cli_lines(tmp_path: Path, name: str, body: bytes, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    path = tmp_path / name
    path.write_bytes(body)
    main(["import", str(path), "--db", str(tmp_path / "cli.db")])
    out = capsys.readouterr()
    errors = [line for line in out.err.splitlines() if line.startswith("traceloupe: ")]
    return out.out.strip().replace(str(path), name), "\n".join(errors).replace(str(path), name)


def _lines(html: str) -> list[str]:
    """The result lines of the report (one per file), as text."""
    report = parse(html[html.index('id="import-result"') :])
    return [
        " ".join(t.split()) for t in report.text_parts if ".jsonl" in t and ("imported" in t or "nothing from" in t)
    ]


def test_import_stores_with_the_cli_line_and_is_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cli_out, _ = _cli_lines(tmp_path, "good.jsonl", GOOD, capsys)
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        status, html = _post(client, [("good.jsonl", GOOD)])
        assert status == 200
        assert cli_out in _lines(html)  # the very line `traceloupe import` prints
        assert cli_out == "good.jsonl: imported 4 messages into 2 conversations (2 new); 0 already stored"
        links = [el.get("href") for el in parse(html).elements if el.has("data-imported-conversation")]
        assert links == ["/conversations/imp0", "/conversations/imp1"]
        assert "imported 3" in client.get("/?q=imported+3").text
        status, html = _post(client, [("good.jsonl", GOOD)])  # again: nothing changes
        assert status == 200
        assert "good.jsonl: imported 0 messages into 0 conversations (0 new); 4 already stored" in _lines(html)


def test_a_bad_file_stores_nothing_and_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, cli_err = _cli_lines(tmp_path, "bad.jsonl", BAD, capsys)
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        status, html = _post(client, [("bad.jsonl", BAD), ("good.jsonl", GOOD)])
        assert status == 400
        lines = _lines(html)
        assert cli_err == "traceloupe: " + lines[0]  # the CLI's error line, word for word
        assert lines[0].startswith("bad.jsonl:5 at $.msg_type: ") and lines[0].endswith(
            "(nothing from this file was stored)"
        )
        assert lines[1].startswith("good.jsonl: imported 4 messages")  # each file on its own
        assert "imp9" not in client.get("/").text
        assert [el.get("data-import-ok") for el in parse(html).elements if el.has("data-import-ok")] == [
            "false",
            "true",
        ]


def test_the_page_lists_every_bad_line_of_a_file_as_the_cli_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = BAD + b"not json\n" + GOOD.replace(b'"i0"', b'"i9"').splitlines(keepends=True)[0] + BAD.splitlines()[-1]
    _, cli_err = _cli_lines(tmp_path, "bad.jsonl", body, capsys)
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        status, html = _post(client, [("bad.jsonl", body)])
        assert status == 400
        report = parse(html[html.index('id="import-result"') :])
        shown = next(t for t in report.text_parts if "bad lines" in t)
        assert ["traceloupe: " + line for line in shown.splitlines()] == cli_err.splitlines()
        assert [line.split(" ")[0].rstrip(":") for line in shown.splitlines()] == [
            "bad.jsonl:5",
            "bad.jsonl:6",
            "bad.jsonl:8",
            "bad.jsonl",
        ]
        assert shown.endswith("bad.jsonl: 3 bad lines (nothing from this file was stored)")
        assert "imp0" not in client.get("/").text  # the good lines were not stored either


@upstream_upload_leak
def test_import_needs_the_csrf_token_and_the_same_origin() -> None:
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        assert _post(client, [("good.jsonl", GOOD)], data={})[0] == 403
        assert _post(client, [("good.jsonl", GOOD)], headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
        assert _post(client, [("good.jsonl", GOOD)], headers={"Origin": "https://evil.example"})[0] == 403
        assert "imp0" not in client.get("/").text


@upstream_upload_leak
def test_import_has_its_own_larger_body_limit() -> None:
    big = GOOD + b" " * 5000 + b"\n"
    with TestClient(make_app([], max_body_bytes=2000, import_max_bytes=20_000), base_url=BASE_URL) as client:
        client.get("/check")
        token = csrf_cookie(client.cookies)
        assert client.post("/check", files={"data": ("t.jsonl", big)}, data={"_csrf_token": token}).status_code == 413
        assert _post(client, [("big.jsonl", big)])[0] == 200  # over the general limit, under the import limit
        assert _post(client, [("huge.jsonl", GOOD + b" " * 30_000 + b"\n")])[0] == 413


def test_hostile_file_name_and_content_render_as_text() -> None:
    name = "<img src=x onerror=alert(1)>.jsonl"
    body = json.dumps(
        {"role": "user", "msg_type": "text", "content": "<script>alert(1)</script>", "conversation_id": "<b>x</b>"}
    )
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        status, html = _post(client, [(name, body.encode() + b"\n")])
    assert status == 200
    assert live_content(html) == []
    assert name in parse(html).text and "<b>x</b>" in parse(html).text


def test_a_different_message_under_a_stored_id_is_refused_with_the_cli_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Silent loss by id squatting: the page refuses the file with the CLI's line; the same id elsewhere is stored."""
    other = json.dumps(
        {"role": "user", "msg_type": "text", "content": "changed", "msg_id": "i0", "conversation_id": "imp0"}
    )
    moved = json.dumps(
        {"role": "user", "msg_type": "text", "content": "moved", "msg_id": "i0", "conversation_id": "new"}
    )
    rewrite = (other + "\n").encode()
    _cli_lines(tmp_path, "good.jsonl", GOOD, capsys)
    _, cli_err = _cli_lines(tmp_path, "rewrite.jsonl", rewrite, capsys)
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        assert _post(client, [("good.jsonl", GOOD)])[0] == 200
        status, html = _post(client, [("rewrite.jsonl", rewrite), ("moved.jsonl", (moved + "\n").encode())])
        assert status == 400
        lines = _lines(html)
        assert cli_err.replace(f"{tmp_path}/", "") == "traceloupe: " + lines[0]
        assert lines[0].startswith("rewrite.jsonl:1 at $.msg_id: message 'i0' of conversation 'imp0' differs")
        assert "imported from good.jsonl:1" in lines[0]
        assert lines[1].startswith("moved.jsonl: imported 1 message")
        assert "changed" not in client.get("/conversations/imp0").text


def test_a_file_nested_past_the_limit_gets_its_own_verdict() -> None:
    """Stack exhaustion by deep nesting: the upload answers per file (no 500), the good file is stored."""
    deep = b'{"role": "system", "msg_id": "d", "additional_kwargs": {"x": ' + b"[" * 998 + b"]" * 998 + b"}}\n"
    with TestClient(make_app([]), base_url=BASE_URL) as client:
        status, html = _post(client, [("deep.jsonl", deep), ("good.jsonl", GOOD)])
        assert status == 400
        lines = _lines(html)
        assert lines[0].startswith("deep.jsonl:1 at $: messages are nested too deeply")
        assert lines[1].startswith("good.jsonl: imported 4 messages")
