"""Bad input to ``traceloupe import``: one clear line, a non-zero exit, nothing stored from that file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from core.store import Store
from web.cli import main

GOOD_LINE = b'{"role":"system","content":"fine","create_ts":1,"msg_id":"first-line","conversation_id":"bad"}\n'

# name -> (file bytes after one good line, what the one error line must contain)
CASES: dict[str, tuple[bytes, list[str]]] = {
    "not-json": (b'{"role": "user", oops}\n', [":2:", "not valid JSON"]),
    "truncated": (b'{"role":"user","msg_type":"text","content":"abc', [":2:", "not valid JSON"]),
    "invalid-utf8": (b'{"role":"system","content":"\xff\xfe"}\n', [":2:", "not valid UTF-8"]),
    "wrong-type": (b'{"role":"system","content":"x","create_ts":"yesterday"}\n', [":2 at $.create_ts:"]),
    "wrong-content-type": (b'{"role":"user","msg_type":"text","content":5}\n', [":2 at $.content:"]),
    "unknown-role": (b'{"role":"robot","content":"x"}\n', [":2 at $.role:"]),
    "unknown-msg-type": (b'{"role":"user","msg_type":"hologram","content":"x"}\n', [":2 at $.msg_type:", "hologram"]),
    "unknown-part-type": (
        b'{"role":"user","msg_type":"multipart","content":[{"type":"smell"}]}\n',
        [":2 at $.content[0].type:", "smell"],
    ),
    "nested-unknown-msg-type": (
        b'{"role":"user","msg_type":"text","intermediate_trace":{"records":[{"role":"assistant","msg_type":"x"}]}}\n',
        [":2 at $.intermediate_trace.records[0].msg_type:"],
    ),
    "not-an-object": (b"[1, 2, 3]\n", [":2 at $:", "expected a message object"]),
    "100000-deep": (b"[" * 100_000 + b"]" * 100_000 + b"\n", [":2:", "depth"]),
}


def _run_import(path: Path, db: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["import", str(path), "--db", db, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _assert_one_clear_line(err: str, path: Path, expected: list[str]) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert str(path) in lines[0]
    for fragment in expected:
        assert fragment in lines[0], lines[0]
    assert "nothing from this file was stored" in lines[0]


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_is_refused_whole(case: str, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_bytes(b'{"role":"system","content":"kept","create_ts":1,"msg_id":"kept","conversation_id":"ok"}\n')
    assert _run_import(earlier, db_url, capsys)[0] == 0
    body, expected = CASES[case]
    bad = tmp_path / f"{case}.jsonl"
    bad.write_bytes(GOOD_LINE + body)
    code, _, err = _run_import(bad, db_url, capsys)
    assert code == 1
    _assert_one_clear_line(err, bad, expected)
    with Store.open(db_url) as store:
        assert [m.msg_id for m in store.get_conversation("ok").messages] == ["kept"]
        assert store.counts()["messages"] == 1


def test_50_mb_line_is_refused_by_the_default_limit(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "huge.jsonl"
    with bad.open("wb") as f:
        f.write(GOOD_LINE)
        f.write(b'{"role":"system","content":"' + b"x" * (50 * 1024 * 1024) + b'"}\n')
    code, _, err = _run_import(bad, db_url, capsys)
    assert code == 1
    _assert_one_clear_line(err, bad, [":2:", "32 MiB", "max_record_bytes"])
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 0


def test_limits_are_configurable(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = orjson.dumps({"role": "system", "content": "y" * (2 * 1024 * 1024), "msg_id": "two-mib"}) + b"\n"
    path = tmp_path / "two.jsonl"
    path.write_bytes(line)
    code, _, err = _run_import(path, db_url, capsys, "--max-line-mib", "1")
    assert code == 1
    _assert_one_clear_line(err, path, [":1:", "1 MiB"])
    code, out, _ = _run_import(path, db_url, capsys, "--max-line-mib", "4")
    assert code == 0 and "imported 1 message" in out
    json_path = tmp_path / "two.json"
    json_path.write_bytes(line)
    code, _, err = _run_import(json_path, db_url, capsys, "--max-file-mib", "1")
    assert code == 1
    _assert_one_clear_line(err, json_path, ["1 MiB", "max_file_bytes"])


def _history(depth: int) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "user", "msg_type": "history", "content": [], "msg_id": "deep", "create_ts": 1}
    current = msg
    for _ in range(depth):
        inner: dict[str, Any] = {"role": "user", "msg_type": "history", "content": [], "create_ts": 1}
        current["content"] = [inner]
        current = inner
    return msg


def _import_one(
    msg: dict[str, Any], db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, int, str]:
    """Import a file of this one message: the file, the exit code and stderr."""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(json.dumps(msg).encode() + b"\n")
    code, _, err = _run_import(path, db_url, capsys)
    return path, code, err


def test_history_nested_past_the_validator_depth_is_refused_cleanly(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """300 nested forwarded histories exceed pydantic's depth: one line, no crash."""
    msg = _history(300)
    path, code, err = _import_one(msg, db_url, tmp_path, capsys)
    assert code == 1
    _assert_one_clear_line(err, path, [":1 at $.content[0]", "depth"])


def test_nesting_within_the_serialiser_is_stored_and_exported(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    msg = _history(100)
    _, code, err = _import_one(msg, db_url, tmp_path, capsys)
    assert code == 0, err
    assert main(["export", "--db", db_url]) == 0
    assert json.loads(capsys.readouterr().out) == msg
    with Store.open(db_url) as store:
        (c,) = store.iter_conversations()
        assert c.records == 100


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(lambda: _history(200), id="200-nested-histories"),
        pytest.param(
            lambda: {"role": "system", "msg_id": "k", "additional_kwargs": {"deep": _lists(300)}}, id="300-deep-kwargs"
        ),
    ],
)
def test_readable_but_too_deep_to_serialise_is_refused_cleanly(
    message: Any, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Valid JSON that pydantic cannot write back: the reader's one nesting limit refuses it on one line."""
    path = tmp_path / "deep.jsonl"
    path.write_bytes(GOOD_LINE + json.dumps(message()).encode() + b"\n")
    code, _, err = _run_import(path, db_url, capsys)
    assert code == 1
    _assert_one_clear_line(err, path, [":2 at $:", "nested too deeply to store"])
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 0


def _lists(depth: int) -> list[Any]:
    outer: list[Any] = []
    current = outer
    for _ in range(depth):
        inner: list[Any] = []
        current.append(inner)
        current = inner
    return outer


def test_nul_characters_are_kept_on_sqlite_and_refused_clearly_on_postgresql(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "nul.jsonl"
    path.write_bytes(b'{"role":"system","content":"a\\u0000b","msg_id":"nul","conversation_id":"n","create_ts":1}\n')
    code, _, err = _run_import(path, db_url, capsys)
    with Store.open(db_url) as store:
        if store.backend == "sqlite":
            assert code == 0
            assert store.get_conversation("n").messages[0].body["content"] == "a\x00b"
        else:
            assert code == 1
            _assert_one_clear_line(err, path, [":1 at $.content:", "U+0000"])
            assert store.counts()["messages"] == 0


def test_missing_file_is_one_line(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "nope.jsonl"
    code, _, err = _run_import(missing, db_url, capsys)
    assert code == 1
    assert len(err.strip().splitlines()) == 1 and str(missing) in err and "cannot open" in err


def test_one_bad_file_does_not_stop_the_others(db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"{nope\n")
    good = tmp_path / "good.jsonl"
    good.write_bytes(GOOD_LINE)
    code = main(["import", str(bad), str(good), "--db", db_url])
    out, err = capsys.readouterr()
    assert code == 1
    assert "bad.jsonl:1" in err and "good.jsonl: imported 1 message" in out
    assert "1 of 2 files" in out


@pytest.mark.parametrize("key", ["msg_id", "conversation_id"])
def test_an_id_past_the_length_cap_is_refused_on_one_line(
    key: str, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Index-size exhaustion by an oversized id (PostgreSQL B-tree entries end at 2,704 bytes): refused on one line."""
    from core.store import MAX_ID_CHARS

    message = {"role": "system", "content": "x", "create_ts": 1, "msg_id": "m", "conversation_id": "c"}
    path = tmp_path / "long-id.jsonl"
    path.write_bytes(GOOD_LINE + orjson.dumps({**message, key: "é" * 3000}) + b"\n")
    code, _, err = _run_import(path, db_url, capsys)
    assert code == 1
    _assert_one_clear_line(err, path, [f":2 at $.{key}:", f"{MAX_ID_CHARS} characters"])
    # At the cap, in four-byte characters, an id is stored and found again.
    longest = "😀" * MAX_ID_CHARS
    path.write_bytes(orjson.dumps({**message, key: longest}) + b"\n")
    code, _, err = _run_import(path, db_url, capsys)
    assert code == 0, err
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 1
        (c,) = store.iter_conversations()
        assert store.get_conversation(c.conversation_id).messages[0].body[key] == longest


@pytest.mark.parametrize("depth", [985, 1000, 1023])
def test_nesting_that_overflowed_the_stack_is_refused_alone_everywhere(
    depth: int, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Stack exhaustion by deep nesting (a RecursionError crashed import): one limit, one line, other files go on."""
    from core.errors import InputError
    from core.reader import read_bytes
    from web.check.controllers import check_bytes

    deep = tmp_path / "deep.jsonl"
    nested = b"[" * (depth - 2) + b"]" * (depth - 2)  # JSON depth in all; past what the stdlib json can write
    deep.write_bytes(GOOD_LINE + b'{"role": "system", "msg_id": "d", "additional_kwargs": {"x": ' + nested + b"}}\n")
    good = tmp_path / "good.jsonl"
    good.write_bytes(b'{"role":"system","content":"kept","create_ts":1,"msg_id":"kept","conversation_id":"ok"}\n')
    code = main(["import", str(deep), str(good), "--db", db_url])
    out, err = capsys.readouterr()
    assert code == 1
    _assert_one_clear_line(err, deep, [":2 at $:", "nested too deeply"])
    assert "good.jsonl: imported 1 message" in out
    with Store.open(db_url) as store:
        assert [c.conversation_id for c in store.iter_conversations()] == ["ok"]
    with pytest.raises(InputError, match="nested too deeply"):
        list(read_bytes(deep.read_bytes(), source="deep.jsonl"))
    page = check_bytes(deep.read_bytes(), "deep.jsonl", 10**9)  # /check says what import says
    assert page.error is not None and "deep.jsonl:2 at $: " in page.error and "nested too deeply" in page.error


def test_every_bad_line_of_a_file_is_reported_and_nothing_is_stored(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    long_id = "x" * 600
    bad = tmp_path / "several.jsonl"
    bad.write_bytes(
        GOOD_LINE
        + b'{"role":"bot","msg_type":"text","content":"x"}\n'
        + b'{"role":"system","content":"fine","msg_id":"fine","conversation_id":"bad"}\n'
        + b"not json\n"
        + b'{"role":"system","content":"x","msg_id":"'
        + long_id.encode()
        + b'","conversation_id":"bad"}\n'
        + b'{"role":"user","msg_type":"hologram","content":"x"}\n'
    )
    code, _, err = _run_import(bad, db_url, capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert [line.split(" ", 2)[1].rstrip(":") for line in lines[:-1]] == [f"{bad}:{n}" for n in (2, 4, 5, 6)], err
    assert "$.role: unknown role 'bot'" in lines[0]
    assert "not valid JSON" in lines[1]
    assert "$.msg_id: msg_id is 600 characters long" in lines[2]
    assert "$.msg_type: unknown message kind 'user:hologram'" in lines[3]
    assert lines[-1] == f"traceloupe: {bad}: 4 bad lines (nothing from this file was stored)"
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 0


def test_every_bad_message_of_a_json_array_is_reported(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "several.json"
    bad.write_text(
        json.dumps(
            [
                {"role": "system", "content": "fine", "msg_id": "a", "conversation_id": "c"},
                {"role": "robot", "content": "x"},
                7,
            ]
        )
    )
    code, _, err = _run_import(bad, db_url, capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"traceloupe: {bad} at $[1].role: unknown role 'robot'"), err
    assert lines[1].startswith(f"traceloupe: {bad} at $[2]: expected a message object"), err
    assert lines[2] == f"traceloupe: {bad}: 2 bad messages (nothing from this file was stored)"
    with Store.open(db_url) as store:
        assert store.counts()["messages"] == 0


def test_a_file_of_nothing_but_bad_lines_stops_being_read_after_a_hundred(
    db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "garbage.jsonl"
    bad.write_bytes(b"garbage\n" * 5000)
    code, _, err = _run_import(bad, db_url, capsys)
    assert code == 1
    lines = err.strip().splitlines()
    assert len(lines) == 101
    assert lines[99].startswith(f"traceloupe: {bad}:100: not valid JSON")
    assert lines[-1] == f"traceloupe: {bad}: 100 bad lines, reading stopped there (nothing from this file was stored)"
