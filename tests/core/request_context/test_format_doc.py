"""core/FORMAT.md's request contexts: the example reads as the import reads it, the table lists every field, and
the error it quotes is the one the code gives."""

from __future__ import annotations

import re

import orjson
import pytest

from core.errors import InputError
from core.providers.base import NamedToolChoice
from core.reader import StoreLine, read_bytes
from core.request_context import REQUEST_FIELDS, StoredRequest
from core.request_context.stored import PARAM_NAMES
from core.store.request_contexts import read_request_lines
from tests.core.test_format_doc import TEXT, block

SECTION = TEXT.split("## Request contexts", 1)[1].split("\n## ", 1)[0]


def _read(data: bytes, source: str = "agent.jsonl") -> list[StoredRequest]:
    lines: list[StoreLine] = []
    roles = {(r.message.conversation_id, r.message.msg_id): r.message.role
             for r in read_bytes(data, source=source, store_lines=lines)}  # fmt: skip
    return read_request_lines(lines, roles)


def test_the_example_reads_into_the_same_tools_whatever_their_shape() -> None:
    whole, turn = _read(block("ndjson").encode())
    assert whole.tools == turn.tools
    assert turn.tool_choice == NamedToolChoice("weather")


def test_the_table_documents_every_field_and_parameter() -> None:
    assert re.findall(r"^\| `(\w+)` \|", SECTION, re.M) == list(REQUEST_FIELDS)
    for name in PARAM_NAMES:
        assert f"`{name}`" in SECTION


def test_the_quoted_error_is_the_one_an_import_gives() -> None:
    lines = block("ndjson").encode().splitlines()
    bad = orjson.loads(lines[3])
    bad["traceloupe_request"]["tool_choice"] = {"name": "hotel"}
    with pytest.raises(InputError) as caught:
        _read(b"\n".join([*lines[:3], orjson.dumps(bad)]))
    quoted = re.search(r"`(agent\.jsonl:4 at [^`]+)`", SECTION)
    assert quoted is not None
    assert str(caught.value) == " ".join(quoted[1].split())
