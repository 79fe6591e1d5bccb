"""core/FORMAT.md, the format's documentation in the repository: every example in it is what the code does."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from core import MESSAGE_ADAPTER, MESSAGE_TAGS
from core.messages.refs import looks_like_url
from tests.core.typecheck import assert_classes, assert_keeps, expected_class

DOC = Path(__file__).resolve().parents[2] / "core" / "FORMAT.md"
TEXT = DOC.read_text(encoding="utf-8")
_FENCE = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)
BLOCKS = [(m[1], m[2]) for m in _FENCE.finditer(TEXT)]
EXAMPLES = [text for kind, text in BLOCKS if kind == "json"]
BASE_ROLES = ("system", "tool", "console", "function")


def block(kind: str) -> str:
    """The one fenced block of this kind (``jsonl``, ``console``, ...) in FORMAT.md."""
    (text,) = [t for k, t in BLOCKS if k == kind]
    return text


def _kind(raw: dict[str, Any]) -> str:
    return f"{raw['role']}:{raw['msg_type']}" if "msg_type" in raw else raw["role"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[_kind(json.loads(e)) for e in EXAMPLES])
def test_every_example_parses_as_its_class_and_round_trips(example: str) -> None:
    raw = json.loads(example)
    message = MESSAGE_ADAPTER.validate_json(example)
    assert_classes(raw, message)
    dumped = orjson.loads(MESSAGE_ADAPTER.dump_json(message))
    assert_keeps(raw, dumped)  # every key written, unknown ones included, with its value
    assert MESSAGE_ADAPTER.validate_json(MESSAGE_ADAPTER.dump_json(message)) == message


def test_there_is_an_example_of_every_message_kind() -> None:
    shown = {_kind(json.loads(e)) for e in EXAMPLES}
    assert shown >= set(MESSAGE_TAGS) | set(BASE_ROLES)
    assert {expected_class(json.loads(e)).__name__ for e in EXAMPLES} >= {c.__name__ for c in MESSAGE_TAGS.values()}
    assert {part["type"] for part in json.loads(next(e for e in EXAMPLES if '"multipart"' in e))["content"]} == {
        "text",
        "image",
        "audio",
        "video",
        "file",
    }


def test_the_path_or_url_table_is_the_rule_the_reader_applies() -> None:
    rows = re.findall(r"^\| `([^`]+)` \| (URL|path) \|$", TEXT, re.M)
    assert len(rows) >= 6
    for text, kind in rows:
        assert looks_like_url(text) is (kind == "URL"), text


def test_the_readme_sends_a_newcomer_only_to_files_a_clone_has() -> None:
    root = DOC.parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "../" not in readme
    links = re.findall(r"\]\(([^)#]+)\)", readme)
    assert "core/FORMAT.md" in links
    assert [link for link in links if "://" not in link and not (root / link).exists()] == []
