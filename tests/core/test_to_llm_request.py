"""The seed's to_llm_request contract, role by role."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from pydantic import BaseModel

from core import (
    MESSAGE_ADAPTER,
    AssistantTextMessage,
    AttachmentMessage,
    BaseMessage,
    BaseUser,
    ConsoleResult,
    ContactMessage,
    ContractError,
    FunctionCall,
    FunctionResult,
    HistoryMessage,
    ImageMessage,
    ImagePart,
    LLMAssistantMessage,
    LLMFilePart,
    LLMFunctionMessage,
    LLMImagePart,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMToolMessage,
    LLMUserMessage,
    MultiPartMessage,
    RedactedThinkingBlock,
    TextMessage,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
    UrlMessage,
)
from core.errors import ASSISTANT_CONTRACT_MESSAGE, USER_CONTRACT_MESSAGE
from tests.strategies import assistant_records, base_records


@pytest.mark.parametrize(("role", "seed"), [("assistant", ASSISTANT_CONTRACT_MESSAGE), ("user", USER_CONTRACT_MESSAGE)])
def test_bare_user_or_assistant_raises_the_seed_value_error(role: str, seed: str) -> None:
    with pytest.raises(ValueError, match=seed) as caught:
        BaseMessage(role=role, msg_id="m-7", content="x").to_llm_request()  # type: ignore[arg-type]
    assert isinstance(caught.value, ContractError)
    assert caught.value.msg_id == "m-7"


def test_system_becomes_an_llm_system_message() -> None:
    assert BaseMessage(role="system", content="be brief", msg_id="s").to_llm_request() == LLMSystemMessage(
        content="be brief", msg_id="s"
    )


def test_console_expands_each_result_into_tfl_plus_its_attachments() -> None:
    msg = BaseMessage(
        role="console",
        msg_id="c",
        console_reses=[
            ConsoleResult(result="ok", summary_result="1 row", attachments=[ImagePart(url="https://x/plot.png")]),
            "plain output",
        ],
    )
    out = msg.to_llm_request()
    assert out == [
        LLMTFLMessage(content="ok", summary="1 row", meta={}, msg_id="c"),
        LLMUserMessage(content=(LLMImagePart(url="https://x/plot.png"),), msg_id="c", attachment_of="console"),
        LLMTFLMessage(content="plain output", msg_id="c"),
    ]


def test_tool_expands_each_return_into_a_tool_message_plus_its_attachments() -> None:
    msg = BaseMessage(
        role="tool",
        msg_id="t",
        tool_reses=[
            ToolReturn(call_id="a", name="search", result="r1", is_error=True),
            ToolReturn(call_id="b", result="r2", attachments=[TextPart(text="see")]),
        ],
    )
    assert msg.to_llm_request() == [
        LLMToolMessage(content="r1", tool_call_id="a", name="search", is_error=True, msg_id="t"),
        LLMToolMessage(content="r2", tool_call_id="b", msg_id="t"),
        LLMUserMessage(content=(LLMTextPart(text="see"),), msg_id="t", attachment_of="b"),
    ]


@pytest.mark.parametrize(
    "reses",
    [
        [ToolReturn(call_id="a", name="search", result="r1")],
        [ToolReturn(call_id="a", result="", is_error=True)],
        [ToolReturn(call_id="a", result="r1", attachments=[TextPart(text="see")])],
        ["bare result"],
        [],
        None,
    ],
)
def test_a_one_result_tool_record_converts_as_the_general_loop_does(reses: list[str | ToolReturn] | None) -> None:
    """to_llm_request builds the usual tool record (one result, no attachments) directly; same list either way."""
    msg = BaseMessage(role="tool", msg_id="t", content="c", tool_reses=reses, additional_kwargs={"tool_call_id": "k"})
    assert msg.to_llm_request() == msg._tool_to_llm()


def _models(value: Any) -> list[BaseModel]:
    """Every model in ``value`` (a model, or lists of them), the outer one first."""
    if isinstance(value, list):
        return [m for item in value for m in _models(item)]
    if not isinstance(value, BaseModel):
        return []
    return [value] + [m for name in type(value).model_fields for m in _models(getattr(value, name))]


@settings(max_examples=200, deadline=None)
@given(base_records() | assistant_records())
def test_the_instance_dict_holds_what_attribute_access_reads(record: dict[str, Any]) -> None:
    """to_llm_request reads fields from the instance dict; validated and constructed records give the attributes."""
    validated = MESSAGE_ADAPTER.validate_python(record)
    constructed = type(validated).model_construct(
        **{k: v for k, v in record.items() if k in type(validated).model_fields}
    )
    for model in [*_models(validated), constructed]:
        values = model.__dict__
        assert {name: values[name] for name in type(model).model_fields} == {
            name: getattr(model, name) for name in type(model).model_fields
        }


def test_function_becomes_an_llm_function_message() -> None:
    msg = BaseMessage(role="function", msg_id="f", function_res=FunctionResult(name="lookup", result="42"))
    assert msg.to_llm_request() == LLMFunctionMessage(name="lookup", content="42", msg_id="f")


def test_assistant_keeps_reasoning_tool_calls_function_call_and_tfl_scripts() -> None:
    msg = AssistantTextMessage(
        msg_id="a",
        content="done",
        reasoning_content=[ThinkingBlock(thinking="t", signature="s"), RedactedThinkingBlock(data="enc")],
        tool_calls=[ToolCall(id="c1", name="f", arguments="{bad json")],
        function_call=FunctionCall(name="legacy", arguments="{}"),
        tfl_scripts=["print(1)"],
    )
    out = msg.to_llm_request()
    assert isinstance(out, LLMAssistantMessage)
    assert [b.kind for b in out.reasoning_content or ()] == ["thinking", "redacted_thinking"]  # type: ignore[union-attr]
    assert out.tool_calls[0].arguments == "{bad json"
    assert out.tool_calls[0].parsed_arguments() is None
    assert out.function_call is not None and out.function_call.name == "legacy"
    assert out.tfl_scripts == ("print(1)",)


def test_user_kinds_map_to_parts() -> None:
    assert TextMessage(content="hi").llm_parts() == (LLMTextPart(text="hi"),)
    assert ImageMessage(content="https://x/a.png").llm_parts() == (
        LLMImagePart(url="https://x/a.png", media_type="image/png"),
    )
    (pdf,) = AttachmentMessage(content="docs/r.pdf").llm_parts()
    assert isinstance(pdf, LLMFilePart) and pdf.path == "docs/r.pdf" and pdf.filename == "r.pdf"
    assert pdf.media_type == "application/pdf"
    assert UrlMessage(content="https://x/page").llm_parts() == (LLMTextPart(text="https://x/page"),)
    (contact,) = ContactMessage(content=BaseUser(uid="u1", name="Ada")).llm_parts()
    assert isinstance(contact, LLMTextPart) and "Ada" in contact.text
    multi = MultiPartMessage(content=[TextPart(text="a"), ImagePart(path="p.png", detail="a cat")]).llm_parts()
    assert multi == (LLMTextPart(text="a"), LLMImagePart(path="p.png", detail="a cat"))


def test_history_becomes_a_transcript_and_a_damaged_nested_record_still_raises() -> None:
    history = HistoryMessage(content=[TextMessage(content="q"), AssistantTextMessage(content="a")])
    texts = [p.text for p in history.llm_parts() if isinstance(p, LLMTextPart)]
    assert texts[0].startswith("[forwarded chat history: 2 messages]")
    assert "q" in texts and "assistant: a" in texts
    damaged = HistoryMessage(content=[BaseMessage(role="assistant", msg_id="lost", content="a")])
    with pytest.raises(ContractError, match="lost"):
        damaged.to_llm_request()
