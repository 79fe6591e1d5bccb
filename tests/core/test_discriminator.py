"""The Message union: role:msg_type dispatch, the DEFAULT_TAG fallback, and loud errors for unknown tags."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter, ValidationError

from core import (
    DEFAULT_TAG,
    MESSAGE_ADAPTER,
    MESSAGE_TAGS,
    AssistantTextMessage,
    BaseMessage,
    TextMessage,
    UserAndAssMsg,
    get_discriminator_value,
)
from core.errors import InputError
from core.messages.base import ROLES
from core.reader import read_bytes

SAMPLE_CONTENT: dict[str, Any] = {
    "user:text": "hello",
    "user:image": "https://example.com/cat.png",
    "user:audio": "voice/note.ogg",
    "user:video": "https://example.com/v.mp4",
    "user:attachment": "docs/report.pdf",
    "user:url": "https://example.com/article",
    "user:contact": {"uid": "u-9", "name": "Ada"},
    "user:history": [{"role": "user", "msg_type": "text", "content": "earlier"}],
    "user:multipart": [{"type": "text", "text": "look"}, {"type": "image", "url": "https://example.com/a.png"}],
    "assistant:text": "hi there",
}


@pytest.mark.parametrize("tag", list(MESSAGE_TAGS))
def test_each_tag_dispatches_to_its_class_from_json_and_from_instances(tag: str) -> None:
    role, msg_type = tag.split(":")
    raw = {"role": role, "msg_type": msg_type, "content": SAMPLE_CONTENT[tag]}
    message = MESSAGE_ADAPTER.validate_python(raw)
    assert type(message) is MESSAGE_TAGS[tag]
    assert get_discriminator_value(raw) == tag
    assert get_discriminator_value(message) == tag
    assert type(TypeAdapter(UserAndAssMsg).validate_python(raw)) is MESSAGE_TAGS[tag]


@pytest.mark.parametrize("role", ["system", "user", "assistant", "function", "tool", "console"])
def test_a_record_without_msg_type_reads_as_base_message(role: str) -> None:
    message = MESSAGE_ADAPTER.validate_python({"role": role, "content": "x"})
    assert type(message) is BaseMessage
    assert get_discriminator_value({"role": role}) == DEFAULT_TAG


@pytest.mark.parametrize("role", ["system", "tool", "console", "function"])
def test_msg_type_on_a_role_without_subclasses_is_kept_not_dispatched(role: str) -> None:
    message = MESSAGE_ADAPTER.validate_python({"role": role, "msg_type": "text", "content": "x"})
    assert type(message) is BaseMessage
    assert MESSAGE_ADAPTER.dump_python(message)["msg_type"] == "text"


@pytest.mark.parametrize(
    "raw",
    [
        {"role": "user", "msg_type": "sticker", "content": "x"},
        {"role": "assistant", "msg_type": "image", "content": "x"},
        {"role": "user", "msg_type": None, "content": "x"},
    ],
)
def test_unknown_msg_type_for_its_role_is_an_error_naming_the_tag(raw: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as caught:
        MESSAGE_ADAPTER.validate_python(raw)
    (error,) = caught.value.errors()
    assert error["type"] == "union_tag_invalid"
    assert error["loc"][0] == raw["role"]
    assert str(error["ctx"]["tag"]) == str(raw["msg_type"])
    assert f"'{raw['msg_type']}'" in str(caught.value)


def test_the_reader_names_the_full_role_msg_type_tag() -> None:
    with pytest.raises(InputError, match=r"unknown message kind 'user:sticker'"):
        list(read_bytes(b'{"role":"user","msg_type":"sticker"}', source="x.jsonl"))


def test_a_wrong_role_beside_a_msg_type_is_named_with_the_roles_there_are() -> None:
    with pytest.raises(InputError) as caught:
        list(read_bytes(b'{"role":"bot","msg_type":"text","content":"hi"}', source="x.jsonl"))
    message = str(caught.value)
    assert "at $.role: unknown role 'bot'" in message
    assert "'system', 'user', 'assistant', 'function', 'tool', 'console'" in message
    assert "msg_type" not in message


def test_unknown_tag_nested_in_a_trace_is_an_error_too() -> None:
    raw = {
        "role": "user",
        "msg_type": "text",
        "intermediate_trace": {"records": [{"role": "assistant", "msg_type": "x"}]},
    }
    with pytest.raises(ValidationError, match="'x'"):
        MESSAGE_ADAPTER.validate_python(raw)


def test_user_and_ass_union_rejects_a_bare_record() -> None:
    with pytest.raises(ValidationError, match="union_tag_invalid"):
        TypeAdapter(UserAndAssMsg).validate_python({"role": "assistant", "content": "x"})
    with pytest.raises(ValidationError, match="union_tag_invalid"):
        TypeAdapter(UserAndAssMsg).validate_python({"role": "tool", "content": "x"})


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {"role": st.sampled_from([*ROLES, "robot"])},
        optional={"msg_type": st.sampled_from([*{t.split(":")[1] for t in MESSAGE_TAGS}, "user", "sticker"])},
    )
)
def test_compiled_dispatch_agrees_with_the_seed_function(raw: dict[str, Any]) -> None:
    """The union picks exactly the member get_discriminator_value names, or refuses exactly when it names none."""
    tag = get_discriminator_value(raw)
    expected = BaseMessage if tag == DEFAULT_TAG else MESSAGE_TAGS.get(str(tag))
    data = {**raw, "content": SAMPLE_CONTENT.get(str(tag), "x")}
    if raw["role"] not in ROLES or expected is None:
        with pytest.raises(ValidationError):
            MESSAGE_ADAPTER.validate_python(data)
        return
    assert type(MESSAGE_ADAPTER.validate_python(data)) is expected


def test_instances_keep_their_class_through_the_union() -> None:
    assistant = AssistantTextMessage(content="x")
    assert MESSAGE_ADAPTER.validate_python(assistant) is assistant
    text = TextMessage(content="y")
    assert type(MESSAGE_ADAPTER.validate_python(text)) is TextMessage
