"""Round trips through JSON keep every class at every depth and every key of the stored JSON."""

from __future__ import annotations

import json
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import (
    MESSAGE_ADAPTER,
    MESSAGES_ADAPTER,
    AssistantTextMessage,
    AttachmentMessage,
    AudioMessage,
    BaseMessage,
    ChainContext,
    Conversation,
    HistoryMessage,
    ImageMessage,
    IntermediateTrace,
    IntermediateTraceSnapshot,
    PathRef,
    PromptContext,
    TextMessage,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
    UrlRef,
    VideoMessage,
)
from core.messages.refs import looks_like_url
from core.reader import read_bytes
from tests import strategies
from tests.core.typecheck import assert_classes, assert_keeps

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(strategies.messages())
def test_union_adapter_round_trip_keeps_classes_and_keys(raw: dict[str, Any]) -> None:
    message = MESSAGE_ADAPTER.validate_json(orjson.dumps(raw))
    assert_classes(raw, message)
    dumped = orjson.loads(MESSAGE_ADAPTER.dump_json(message))
    assert_keeps(raw, dumped)
    again = MESSAGE_ADAPTER.validate_json(MESSAGE_ADAPTER.dump_json(message))
    assert_classes(raw, again)
    assert again == message


@SETTINGS
@given(strategies.messages())
def test_model_dump_json_model_validate_json_restores_the_same_object(raw: dict[str, Any]) -> None:
    message = MESSAGE_ADAPTER.validate_python(raw)
    restored = type(message).model_validate_json(message.model_dump_json())
    assert type(restored) is type(message)
    assert restored == message
    assert_keeps(raw, orjson.loads(restored.model_dump_json()))


@SETTINGS
@given(st.lists(strategies.messages(max_depth=2), max_size=4))
def test_every_container_of_the_risk_table_keeps_subclasses(raws: list[dict[str, Any]]) -> None:
    msgs = MESSAGES_ADAPTER.validate_python(raws)
    containers = [
        (Conversation(msgs=msgs), "msgs"),
        (IntermediateTrace(records=msgs), "records"),
        (IntermediateTraceSnapshot(records=tuple(msgs)), "records"),
        (PromptContext(intermediate_msgs=msgs), "intermediate_msgs"),
        (ChainContext(intermediate_msgs=msgs), "intermediate_msgs"),
    ]
    for container, field in containers:
        restored = type(container).model_validate_json(container.model_dump_json())
        for raw, msg in zip(raws, getattr(restored, field), strict=True):
            assert_classes(raw, msg)
        assert restored == container


@pytest.mark.parametrize("cls", [ImageMessage, AudioMessage, VideoMessage, AttachmentMessage])
@pytest.mark.parametrize(
    "location",
    ["https://example.com", "data:image/png;base64,AAAA", "javascript:alert(1)", "uploads//cat.png", "./x", "C:\\x"],
)
def test_path_and_url_content_come_back_verbatim_and_as_the_same_kind(cls: type[BaseMessage], location: str) -> None:
    message = MESSAGE_ADAPTER.validate_json(
        orjson.dumps({"role": "user", "msg_type": cls.model_fields["msg_type"].default, "content": location})
    )
    assert type(message) is cls
    expected = UrlRef if looks_like_url(location) else PathRef
    assert type(message.content) is expected
    restored = MESSAGE_ADAPTER.validate_json(MESSAGE_ADAPTER.dump_json(message))
    assert type(restored.content) is expected
    assert restored.content == location
    assert orjson.loads(message.model_dump_json())["content"] == location


def test_seed_example_text_message_with_trace_restores_assistant_subclass() -> None:
    """The seed's own test rule: TextMessage.model_validate_json(msg.model_dump_json()) restores types."""
    msg = TextMessage(
        content="天气如何?",
        intermediate_trace=IntermediateTrace(
            records=[
                AssistantTextMessage(
                    content="",
                    reasoning_content=[ThinkingBlock(thinking="need a tool", signature="sig")],
                    tool_calls=[ToolCall(id="c1", name="weather", arguments='{"city": "北京"}')],
                ),
                BaseMessage(role="tool", tool_reses=[ToolReturn(call_id="c1", result="晴")]),
            ]
        ),
    )
    restored = TextMessage.model_validate_json(msg.model_dump_json())
    first, second = restored.intermediate_trace.records
    assert isinstance(first, AssistantTextMessage)
    assert first.reasoning_content == [ThinkingBlock(thinking="need a tool", signature="sig")]
    assert type(second) is BaseMessage and second.role == "tool"
    assert restored == msg


def test_history_inside_history_keeps_every_level() -> None:
    inner = HistoryMessage(
        content=[
            TextMessage(
                content="deep", intermediate_trace=IntermediateTrace(records=[AssistantTextMessage(content="a")])
            )
        ]
    )
    outer = HistoryMessage(content=[inner, AssistantTextMessage(content="b")])
    restored = MESSAGE_ADAPTER.validate_json(MESSAGE_ADAPTER.dump_json(outer))
    assert isinstance(restored, HistoryMessage)
    nested = restored.content[0]
    assert isinstance(nested, HistoryMessage)
    deep = nested.content[0]
    assert isinstance(deep, TextMessage)
    assert isinstance(deep.intermediate_trace.records[0], AssistantTextMessage)
    assert isinstance(restored.content[1], AssistantTextMessage)


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 123456789012345678901234567890, 2**64 - 1, -(2**63)])
def test_integers_of_any_size_read_from_a_file_come_back_exactly(value: int) -> None:
    # orjson alone reads an integer past 64 bits as a float; the reader must not.
    line = json.dumps(
        {"role": "system", "content": "x", "msg_id": "s", "meta_id": value, "additional_kwargs": {"n": value}}
    )
    (record,) = read_bytes(line.encode() + b"\n", source="big.jsonl")
    assert record.raw["meta_id"] == value and type(record.raw["meta_id"]) is int
    assert json.loads(MESSAGE_ADAPTER.dump_json(record.message))["additional_kwargs"] == {"n": value}
