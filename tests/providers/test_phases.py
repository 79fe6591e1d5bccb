"""ChatLLM's phases: named, inspectable, JSON-able; trace expansion; --upto; the contract error; provenance."""

from __future__ import annotations

import json
import re

import pytest

from core import (
    AssistantTextMessage,
    BaseMessage,
    ContractError,
    Conversation,
    HistoryMessage,
    IntermediateTrace,
    Message,
    TextMessage,
    ToolReturn,
    UnknownNameError,
)
from core.providers import PHASES, ChatLLM, Dialect, dialect_names, expand_trace_for_msg, get_dialect
from core.providers.profiles import ModelProfile, ToolNameRule
from tests.providers.builders import BASE_OPTIONS, call, reply, tool, user
from tests.providers.cases import CASES, build


def traced() -> list[Message]:
    records: list[Message] = [
        reply("", 1, tool_calls=[call("c1")]),
        BaseMessage(role="console", content="early", msg_id="k0", create_ts=500),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
        reply("18C", 2),
    ]
    return [user("Weather?", 1, intermediate_trace=IntermediateTrace(records=records)), user("Thanks", 3)]


def test_phases_are_named_in_seed_order_and_json_able() -> None:
    assert PHASES == (
        "construct_prompt_context",
        "_configure_api_params",
        "format_to_request_msgs",
        "to_list",
        "reformat_request_msg_to_api",
        "_assemble_api_request",
    )
    for dialect in dialect_names():
        result = ChatLLM(dialect, BASE_OPTIONS).construct_request_params(traced())
        phases = result.phases
        assert tuple(phases) == PHASES
        json.dumps(phases)  # every phase output is JSON
        assert phases["_assemble_api_request"] == result.body


def test_construct_prompt_context_places_records_by_create_ts() -> None:
    msgs = traced()
    pre, post = expand_trace_for_msg(msgs[0])
    assert [m.msg_id for m in pre] == ["k0"]
    assert [m.msg_id for m in post] == ["a1", "t1", "a2"]
    expanded = ChatLLM("openai").construct_prompt_context(Conversation(msgs=msgs), [reply("now", 9)])
    assert [m.msg_id for m in expanded.messages] == ["k0", "u1", "a1", "t1", "a2", "u3", "a9"]
    ctx = expanded.to_prompt_context()
    assert [m.msg_id for m in ctx.conversation.msgs] == ["k0", "u1", "a1", "t1", "a2", "u3"]
    assert [m.msg_id for m in ctx.intermediate_msgs or []] == ["a9"]
    placed = ChatLLM("openai").construct_request_params(msgs).phases["construct_prompt_context"]
    assert [(p["msg_id"], p["placement"], p["of"]) for p in placed] == [
        ("k0", "pre", "u1"),
        ("u1", "top", None),
        ("a1", "post", "u1"),
        ("t1", "post", "u1"),
        ("a2", "post", "u1"),
        ("u3", "top", None),
    ]


def test_upto_builds_the_request_that_produced_a_message() -> None:
    llm = ChatLLM("openai")
    body = llm.construct_request_params(traced(), upto="a2").body
    assert [m["role"] for m in body["messages"]] == ["user", "user", "assistant", "tool"]
    assert llm.construct_request_params(traced(), upto="k0").body["messages"] == []
    with pytest.raises(UnknownNameError, match="nope"):
        llm.construct_request_params(traced(), upto="nope")


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("role", ["assistant", "user"])
def test_damaged_record_stops_assembly_with_the_seed_contract_error(dialect: str, role: str) -> None:
    damaged = BaseMessage(role=role, content="lost its subclass", msg_id="bad-1")  # type: ignore[arg-type]
    msg = user("hi", 1, intermediate_trace=IntermediateTrace(records=[damaged]))
    with pytest.raises(ContractError, match="bad-1") as err:
        ChatLLM(dialect).construct_request_params([msg])
    assert err.value.msg_id == "bad-1"
    assert str(err.value).startswith(
        "助理消息需要子类实现转换过程" if role == "assistant" else "用户消息需要子类实现转换过程"
    )


def test_damaged_record_inside_a_forwarded_history_also_stops_assembly() -> None:
    nested = HistoryMessage(content=[BaseMessage(role="assistant", content="x", msg_id="bad-2")], msg_id="u1")
    with pytest.raises(ContractError, match="bad-2"):
        ChatLLM("anthropic").construct_request_params([nested])


def test_provenance_maps_every_message_to_json_pointers() -> None:
    result = ChatLLM("anthropic", BASE_OPTIONS).construct_request_params(traced())
    prov = result.provenance
    body = result.body
    for msg_id, pointers in prov.items():
        for pointer in pointers:
            node = body
            for token in pointer.split("/")[1:]:
                node = node[int(token)] if isinstance(node, list) else node[token.replace("~1", "/").replace("~0", "~")]
            assert isinstance(node, dict | list), (msg_id, pointer)
    assert set(prov) == {"k0", "u1", "a1", "t1", "a2", "u3"}
    # k0 (console, before u1) and u1 share the first user turn: each has its own block.
    assert prov["k0"] == ["/messages/0"] and prov["u1"] == ["/messages/0/content/1"]


@pytest.mark.parametrize("case", list(CASES))
def test_every_top_level_message_lands_somewhere_in_every_dialect(case: str) -> None:
    for dialect in dialect_names():
        result = build(case, dialect)
        located = set(result.provenance)
        for entry in result.phases["construct_prompt_context"]:
            msg_id = entry["msg_id"]
            dropped = any(w.msg_id == msg_id and "dropped" in w.reason for w in result.warnings)
            assert msg_id in located or dropped, (dialect, msg_id)


def test_warnings_name_the_message_and_what_was_degraded() -> None:
    result = build("video", "openai")
    assert [w.to_json() for w in result.warnings] == [
        {"msg_id": "u1", "element": "video", "reason": "Chat Completions has no video part; sent as text"},
        {"msg_id": "u2", "element": "video", "reason": "Chat Completions has no video part; sent as text"},
    ]


def test_a_new_dialect_is_one_class_and_no_change_elsewhere() -> None:
    class Echo(Dialect):
        name = "echo"
        default_model = "echo-1"
        conservative = ModelProfile("echo", "echo", "a test", ToolNameRule(re.compile(r"\w+"), 64, "a test"))

        def reformat(self, messages, ctx):  # type: ignore[no-untyped-def]
            return {"roles": [m.role for m in messages]}

        def format_tools(self, tools):  # type: ignore[no-untyped-def]
            return []

    body = ChatLLM(Echo()).construct_request_params(traced()).body
    assert body == {"model": "echo-1", "roles": ["console", "user", "assistant", "tool", "assistant", "user"]}


def test_unknown_dialect_names_the_known_ones() -> None:
    with pytest.raises(UnknownNameError, match="anthropic, doubao, gemini, openai, openai-responses, zhipu"):
        get_dialect("mistral")


def test_assistant_record_types_survive() -> None:
    assert isinstance(reply("x", 1), AssistantTextMessage) and isinstance(user("x", 1), TextMessage)


def test_attachments_follow_their_result_through_pairing() -> None:
    """A dropped result's attachments become a plain user turn after the block; a result paired by position
    takes its attachments along."""
    from core import ImagePart

    image = ImagePart(url="https://example.com/i.png")
    msgs: list[Message] = [
        user("go", 1),
        reply("", 1, tool_calls=[call("c1"), call("c2")]),
        tool(1, ToolReturn(call_id="c1", result="first", attachments=[image])),
        tool(2, ToolReturn(call_id="c1", result="duplicate", attachments=[image])),  # dropped
        tool(3, ToolReturn(call_id="", result="by position", attachments=[image])),  # pairs with c2
    ]
    result = ChatLLM("anthropic").construct_request_params(msgs)
    turns = result.body["messages"]
    results = turns[2]["content"]
    assert [b.get("tool_use_id") for b in results] == ["c1", "c2", None]
    assert [b["type"] for b in results[0]["content"]] == ["text", "image"]
    assert [b["type"] for b in results[1]["content"]] == ["text", "image"]
    assert results[2]["type"] == "image"  # the duplicate's attachment, after the results
    assert [w.msg_id for w in result.warnings if w.element != "inferred_tool"] == ["t2", "t3"]
