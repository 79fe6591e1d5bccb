"""Fuzzing the reader and the import: random bytes and mutated valid files, on both backends.

The property, for every input: the file is stored whole or refused with one line naming it;
never a traceback, never a partial store. The class of attack: a hostile trace file that crashes
the importer (denial of service, later files skipped) or leaves half of itself behind.

CI replays a fixed set (``derandomize``, a bounded number of examples per target); a session
can widen the search with ``TRACELOUPE_FUZZ_EXAMPLES``. Inputs that once failed are pinned with
``@example``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.jsonio import dumps
from core.reader import read_bytes
from core.store import Store
from core.store.derive import derived_msg_id
from core.store.versions import same_message
from tests.strategies import messages
from web.cli import main

_WIDER = os.environ.get("TRACELOUPE_FUZZ_EXAMPLES")


def _fuzz(examples: int) -> settings:
    """``examples`` fixed inputs in CI; a session sets TRACELOUPE_FUZZ_EXAMPLES to draw that many fresh ones."""
    return settings(
        max_examples=int(_WIDER) if _WIDER else examples,
        derandomize=_WIDER is None,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


SHARED_IDS = st.sampled_from(["m1", "m2", "c1", "x" * 513])
"""Ids the mutations reuse, so files collide with each other and with themselves (and one is too long)."""


def _jsonl(items: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(item, option=orjson.OPT_PASSTHROUGH_SUBCLASS) + b"\n" for item in items)


@st.composite
def mutated_files(draw: st.DrawFn) -> bytes:
    """A valid JSONL file of a few messages, then a few edits of the kinds hostile files make."""
    items = draw(st.lists(messages(max_depth=2), min_size=1, max_size=4))
    for item in items:
        if draw(st.booleans()):
            item["msg_id"] = draw(SHARED_IDS)
        if draw(st.booleans()):
            item["conversation_id"] = draw(st.sampled_from(["c1", "c2", "x" * 513]))
    data = bytearray(_jsonl(items))
    for _ in range(draw(st.integers(0, 3))):
        edit = draw(st.sampled_from(["flip", "cut", "insert", "repeat", "nest", "number", "nul"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if edit == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif edit == "cut":
            del data[at:]
        elif edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif edit == "repeat":
            line = draw(st.sampled_from(bytes(data).splitlines() or [b""]))
            data += line + b"\n"
        elif edit == "nest":
            depth = draw(st.sampled_from([64, 126, 254, 255, 600, 985, 1030]))
            data[at:at] = b"[" * depth + b"]" * depth
        elif edit == "number":
            data[at:at] = draw(st.sampled_from([b"1e999", b"-0", b"18446744073709551616", b"9" * 40, b"NaN"]))
        else:
            data[at:at] = b"\\u0000"
    return bytes(data)


FILES = st.binary(max_size=300) | mutated_files()
DEEP = b'{"role":"system","additional_kwargs":{"x":' + b"[" * 998 + b"]" * 998 + b"}}\n"


@_fuzz(200)
@given(data=FILES, suffix=st.sampled_from(["jsonl", "json"]))
@example(data=DEEP, suffix="jsonl")
def test_reader_reads_or_refuses_with_input_error(data: bytes, suffix: str) -> None:
    try:
        records = list(read_bytes(data, source=f"fuzz.{suffix}"))
    except InputError as exc:
        assert str(exc).startswith(f"fuzz.{suffix}") and "\n" not in str(exc)
        return
    for record in records:
        assert isinstance(record.raw, dict)


def _stored(db: str) -> dict[tuple[str, str], str]:
    with Store.open(db) as store:
        return {
            (c.conversation_id, m.msg_id): dumps(m.body).decode()
            for c in store.iter_conversations()
            for m in store.get_conversation(c.conversation_id).messages
        }


@_fuzz(40)  # per backend; each example is a whole `traceloupe import`
@given(data=FILES)
@example(data=DEEP)  # a RecursionError traceback; the files after it were skipped
@example(data=b'{"role":"system","msg_id":"m1","conversation_id":"c1","content":"a"}\n' * 2)
@example(data=b'{"role":"system","msg_id":"m1","conversation_id":"c1","content":"a\\u0000"}\n')
def test_import_stores_a_file_whole_or_refuses_it_on_one_line(
    data: bytes, db_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "fuzz.jsonl"
    path.write_bytes(data)
    before = _stored(db_url)
    capsys.readouterr()
    code = main(["import", str(path), "--db", db_url])  # an exception escaping here is the traceback
    out, err = capsys.readouterr()
    after = _stored(db_url)
    if code != 0:
        assert code == 1, err
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"traceloupe: {path}"), err
        assert lines[0].endswith("(nothing from this file was stored)")
        assert after == before  # nothing partial
        return
    assert err == "" and out.startswith(f"{path}: imported ")
    file_messages = {_identity(r.raw, r.message.conversation_id): r.raw for r in read_bytes(data, source="f")}
    assert set(after) >= set(before)
    assert set(after) - set(before) <= set(file_messages)  # nothing stored that the file does not hold
    for identity, raw in file_messages.items():  # and all of it is stored, as it is in the file
        assert same_message(after[identity], dumps(raw).decode())


def _identity(raw: dict[str, Any], conversation_id: str) -> tuple[str, str]:
    msg_id = raw.get("msg_id")
    return conversation_id, msg_id if isinstance(msg_id, str) else derived_msg_id(raw)
