"""Assertions shared by the round-trip tests: the class at every depth, and every original key kept."""

from __future__ import annotations

from typing import Any

from core import MESSAGE_TAGS, BaseMessage, HistoryMessage, UserMessage


def expected_class(raw: dict[str, Any]) -> type[BaseMessage]:
    """The class FORMAT.md says a stored object reads as."""
    role = raw["role"]
    if "msg_type" not in raw or role not in ("user", "assistant"):
        return BaseMessage
    return MESSAGE_TAGS[f"{role}:{raw['msg_type']}"]


def assert_classes(raw: dict[str, Any], message: BaseMessage, path: str = "$") -> None:
    """The parsed message, its trace records and nested histories are each of the class their JSON names."""
    assert type(message) is expected_class(raw), f"{path}: {type(message).__name__} != {expected_class(raw).__name__}"
    if isinstance(message, UserMessage):
        records = raw.get("intermediate_trace", {}).get("records", [])
        assert len(records) == len(message.intermediate_trace.records)
        for i, (r, m) in enumerate(zip(records, message.intermediate_trace.records, strict=True)):
            assert_classes(r, m, f"{path}.intermediate_trace.records[{i}]")
    if isinstance(message, HistoryMessage):
        for i, (r, m) in enumerate(zip(raw["content"], message.content, strict=True)):
            assert_classes(r, m, f"{path}.content[{i}]")


def assert_keeps(original: Any, dumped: Any, path: str = "$") -> None:
    """Every key of ``original`` is in ``dumped`` with an equal value, at every depth (defaults may be added)."""
    if isinstance(original, dict):
        assert isinstance(dumped, dict), f"{path}: expected an object, got {dumped!r}"
        for key, value in original.items():
            assert key in dumped, f"{path}: key {key!r} was dropped"
            assert_keeps(value, dumped[key], f"{path}.{key}")
    elif isinstance(original, list):
        assert isinstance(dumped, list) and len(dumped) == len(original), f"{path}: list changed"
        for i, (a, b) in enumerate(zip(original, dumped, strict=True)):
            assert_keeps(a, b, f"{path}[{i}]")
    else:
        assert type(original) is type(dumped) and original == dumped, f"{path}: {original!r} became {dumped!r}"
