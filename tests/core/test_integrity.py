"""Integrity: every damaged record found with its path; repair infers the class and invents nothing."""

from __future__ import annotations

from typing import Any

import pytest

from core import MESSAGE_ADAPTER, MESSAGE_TAGS
from core.integrity import find_damage, infer_class, repair, repair_json


def _damaged(role: str, content: Any, msg_id: str = "d") -> dict[str, Any]:
    return {"role": role, "content": content, "msg_id": msg_id}


@pytest.mark.parametrize(
    ("content", "tag", "confidence"),
    [
        ("hello there", "user:text", "certain"),
        ("https://example.com/cat.PNG?size=2", "user:image", "guessed"),
        ("uploads/voice.ogg", "user:audio", "guessed"),
        ("https://cdn.example.com/clip.mp4", "user:video", "guessed"),
        ("C:\\docs\\report.pdf", "user:attachment", "guessed"),
        ("data:image/png;base64,AAAA", "user:image", "guessed"),
        ("https://example.com/article", "user:url", "guessed"),
        ("see https://example.com/a.png please", "user:text", "certain"),
        ({"uid": "u1", "name": "Ada"}, "user:contact", "certain"),
        ([{"role": "user", "msg_type": "text", "content": "q"}], "user:history", "certain"),
        ([{"type": "text", "text": "a"}], "user:multipart", "certain"),
    ],
)
def test_repair_infers_the_user_class_from_content_shape(content: Any, tag: str, confidence: str) -> None:
    message = MESSAGE_ADAPTER.validate_python(_damaged("user", content))
    cls, conf, reason = infer_class(message.role, message.content)
    assert cls is MESSAGE_TAGS[tag]
    assert conf == confidence
    assert reason
    healed = repair(message).message
    assert type(healed) is MESSAGE_TAGS[tag]


def test_damage_is_found_at_every_depth_with_its_json_path() -> None:
    raw = {
        "role": "user",
        "msg_type": "history",
        "msg_id": "top",
        "content": [
            _damaged("assistant", "a", "h0"),
            {
                "role": "user",
                "msg_type": "text",
                "msg_id": "h1",
                "intermediate_trace": {"records": [{"role": "tool", "tool_reses": []}, _damaged("user", "x", "h1r1")]},
            },
        ],
        "intermediate_trace": {"records": [_damaged("assistant", "b", "r0")]},
    }
    message = MESSAGE_ADAPTER.validate_python(raw)
    found = {(d.msg_id, d.path) for d in find_damage(message)}
    assert found == {
        ("r0", "$.intermediate_trace.records[0]"),
        ("h0", "$.content[0]"),
        ("h1r1", "$.content[1].intermediate_trace.records[1]"),
    }
    healed = repair(message)
    assert len(healed.healed) == 3
    assert find_damage(healed.message) == []


def test_system_tool_console_function_records_are_never_damaged() -> None:
    for role in ("system", "tool", "console", "function"):
        assert find_damage(MESSAGE_ADAPTER.validate_python({"role": role})) == []


def test_surviving_subclass_fields_are_kept_and_not_reported_lost() -> None:
    raw = _damaged("assistant", "x")
    raw["reasoning_content"] = "kept by the writer"
    message = MESSAGE_ADAPTER.validate_python(raw)
    (damage,) = find_damage(message)
    assert damage.lost == ("msg_type",)
    healed = repair(message).message
    assert healed.reasoning_content == "kept by the writer"  # type: ignore[union-attr]


def test_repair_json_changes_only_msg_type() -> None:
    raw = {"zz_unknown": [1, {"a": None}], **_damaged("assistant", "x"), "create_ts": 5}
    message = MESSAGE_ADAPTER.validate_python(raw)
    fixed = repair_json(raw, find_damage(message))
    assert fixed == {**raw, "msg_type": "text"}
    assert "msg_type" not in raw, "the input must not be modified"
