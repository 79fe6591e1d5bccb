"""TFROB-299 as a test: the pre-fix schema loses types, the real one does not, check finds it, repair heals it."""

from __future__ import annotations

import orjson
import pytest
from pydantic import BaseModel, Field

from core import (
    MESSAGE_ADAPTER,
    AssistantTextMessage,
    BaseMessage,
    ContractError,
    IntermediateTrace,
    TextMessage,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
)
from core.errors import ASSISTANT_CONTRACT_MESSAGE
from core.integrity import find_damage, repair


class PreFixTrace(BaseModel):
    """IntermediateTrace as it was before the fix."""

    records: list[BaseMessage] = Field(default_factory=list)  # pre-fix TFROB-299 schema, on purpose


class PreFixTextMessage(TextMessage):
    intermediate_trace: PreFixTrace = Field(default_factory=PreFixTrace)  # type: ignore[assignment]


def _turn() -> tuple[AssistantTextMessage, BaseMessage]:
    assistant = AssistantTextMessage(
        msg_id="a-1",
        create_ts=2,
        content="",
        reasoning_content=[ThinkingBlock(thinking="check the weather", signature="sig-1")],
        tool_calls=[ToolCall(id="call-1", name="weather", arguments='{"city": "Paris"}')],
    )
    tool = BaseMessage(
        role="tool", msg_id="t-1", create_ts=3, tool_reses=[ToolReturn(call_id="call-1", result="sunny")]
    )
    return assistant, tool


def pre_fix_json() -> bytes:
    """The incident's message as the pre-fix schema dumped it: the trace's assistant record without its type."""
    assistant, tool = _turn()
    msg = PreFixTextMessage(
        msg_id="u-1", create_ts=1, content="weather?", intermediate_trace=PreFixTrace(records=[assistant, tool])
    )
    return msg.model_dump_json(warnings=False).encode()


def test_pre_fix_schema_drops_msg_type_and_reasoning_on_dump() -> None:
    record = orjson.loads(pre_fix_json())["intermediate_trace"]["records"][0]
    assert record["role"] == "assistant"
    assert "msg_type" not in record
    assert "reasoning_content" not in record


def test_pre_fix_json_reloads_as_bare_base_message_and_raises_the_contract_error() -> None:
    reloaded = MESSAGE_ADAPTER.validate_json(pre_fix_json())
    assert isinstance(reloaded, TextMessage)
    damaged = reloaded.intermediate_trace.records[0]
    assert type(damaged) is BaseMessage and damaged.role == "assistant"
    with pytest.raises(ContractError) as caught:
        damaged.to_llm_request()
    assert isinstance(caught.value, ValueError)
    assert str(caught.value).startswith(ASSISTANT_CONTRACT_MESSAGE)
    assert "a-1" in str(caught.value)


def test_real_schema_keeps_msg_type_and_reasoning_and_converts() -> None:
    assistant, tool = _turn()
    msg = TextMessage(msg_id="u-1", content="weather?", intermediate_trace=IntermediateTrace(records=[assistant, tool]))
    dumped = orjson.loads(msg.model_dump_json())["intermediate_trace"]["records"][0]
    assert dumped["msg_type"] == "text"
    assert dumped["reasoning_content"][0]["signature"] == "sig-1"
    reloaded = TextMessage.model_validate_json(msg.model_dump_json())
    record = reloaded.intermediate_trace.records[0]
    assert isinstance(record, AssistantTextMessage)
    llm = record.to_llm_request()
    assert llm.tool_calls[0].id == "call-1"
    assert llm.reasoning_content is not None


def test_integrity_reports_the_damaged_record_with_path_and_repair_heals_it() -> None:
    reloaded = MESSAGE_ADAPTER.validate_json(pre_fix_json())
    (damage,) = find_damage(reloaded)
    assert damage.msg_id == "a-1"
    assert damage.path == "$.intermediate_trace.records[0]"
    assert "msg_type" in damage.lost and any("reasoning_content" in lost for lost in damage.lost)
    assert damage.error.startswith(ASSISTANT_CONTRACT_MESSAGE)
    assert damage.inferred == "AssistantTextMessage"
    healed = repair(reloaded).message
    record = healed.intermediate_trace.records[0]  # type: ignore[union-attr]
    assert isinstance(record, AssistantTextMessage)
    assert record.reasoning_content is None, "repair must not invent the dropped reasoning"
    assert record.tool_calls == [ToolCall(id="call-1", name="weather", arguments='{"city": "Paris"}')]
    assert find_damage(healed) == []
    record.to_llm_request()
