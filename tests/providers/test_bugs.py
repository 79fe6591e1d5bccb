"""The 15 conversion bugs of providers.md section 9, one named test each (issue and thread in each docstring)."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from typing import Any

import pytest
from pydantic import ValidationError

from core import (
    MESSAGE_ADAPTER,
    BaseMessage,
    ImageMessage,
    ImagePart,
    InputError,
    Message,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
)
from core.providers import ChatLLM, RequestResult
from core.providers.base import EMPTY_TURN_PLACEHOLDER, FIRST_USER_PLACEHOLDER, UNANSWERED_CALL_TEXT
from core.providers.dialects.gemini import DUMMY_THOUGHT_SIGNATURE
from core.reader import read_bytes
from tests.providers.cases import BASE_OPTIONS, PNG_B64, call, reply, tool, user


def run(dialect: str, msgs: list[Message], **options: Any) -> RequestResult:
    return ChatLLM(dialect, replace(BASE_OPTIONS, **options)).construct_request_params(msgs)


def body(dialect: str, msgs: list[Message], **options: Any) -> dict[str, Any]:
    return run(dialect, msgs, **options).body


def blocks_of(turn: dict[str, Any]) -> list[str]:
    return [b["type"] for b in turn["content"]]


def parallel_history() -> list[Message]:
    return [
        user("Weather in Paris and Rome?", 1),
        reply("", 1, tool_calls=[call("call_a", "Paris"), call("call_b", "Rome")]),
        tool(1, ToolReturn(call_id="call_b", name="get_weather", result="25C")),
        tool(2, ToolReturn(call_id="call_a", name="get_weather", result="18C")),
        user("Which is warmer?", 3),
    ]


def test_bug01_parallel_tool_results_become_one_user_message() -> None:
    """pydantic/pydantic-ai#741 (fix #653): N tool messages -> one user message, results in call order, first."""
    msgs = body("anthropic", parallel_history())["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "user"]
    results = msgs[2]["content"]
    assert blocks_of(msgs[2]) == ["tool_result", "tool_result", "text"]
    assert [b["tool_use_id"] for b in results[:2]] == ["call_a", "call_b"]
    assert [b["content"] for b in results[:2]] == ["18C", "25C"]
    gemini = body("gemini", parallel_history())["contents"]
    responses = [p["functionResponse"]["id"] for p in gemini[2]["parts"]]
    assert responses == ["call_a", "call_b"]
    openai = body("openai", parallel_history())["messages"]
    assert [(m["role"], m.get("tool_call_id")) for m in openai[2:4]] == [("tool", "call_a"), ("tool", "call_b")]


def test_bug02_thinking_blocks_kept_on_the_tool_call_turn() -> None:
    """BerriAI/litellm#15601 (#8961), pydantic/pydantic-ai#2075: "Expected thinking ... but found tool_use"."""
    reasoning = [
        ThinkingBlock(thinking="Plan: call the tool.", signature="sig-1"),
        RedactedThinkingBlock(data="opaque=="),
        ThinkingBlock(thinking="", signature="sig-2"),
    ]
    msgs = [user("Weather?", 1), reply("", 1, reasoning_content=reasoning, tool_calls=[call("toolu_1")])]
    assistant = body("anthropic", msgs, thinking=True)["messages"][1]
    assert assistant["content"][:3] == [
        {"type": "thinking", "thinking": "Plan: call the tool.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": "opaque=="},
        {"type": "thinking", "thinking": "", "signature": "sig-2"},
    ]
    assert blocks_of(assistant) == ["thinking", "redacted_thinking", "thinking", "tool_use"]


def test_bug03_thinking_disabled_strips_only_the_final_assistant_message() -> None:
    """BerriAI/litellm#18926: "When thinking is disabled, an assistant message in the final position cannot
    contain thinking"."""
    think = [ThinkingBlock(thinking="hmm", signature="s")]
    msgs: list[Message] = [
        user("a", 1),
        reply("first", 1, reasoning_content=think),
        user("b", 2),
        reply("second", 2, reasoning_content=think),
    ]
    off = run("anthropic", msgs, thinking=False)
    turns = off.body["messages"]
    assert blocks_of(turns[1]) == ["thinking", "text"]  # not final: kept verbatim
    assert blocks_of(turns[3]) == ["text"]
    assert any(w.msg_id == "a2" and "stripped" in w.reason for w in off.warnings)
    on = body("anthropic", msgs, thinking=True)["messages"]
    assert blocks_of(on[3]) == ["thinking", "text"]


def test_bug04_gemini_thought_signature_survives_and_foreign_calls_get_the_dummy() -> None:
    """BerriAI/litellm#16893 (PR #16895): signature lost between response, history and request."""
    signed = ToolCall(id="fc_1", name="get_weather", arguments='{"city":"Paris"}', thought_signature="c2ln")
    stored = reply("", 1, tool_calls=[signed, call("fc_2", "Rome")])
    # The stored history goes through JSON (memory layer) before the next request.
    restored = MESSAGE_ADAPTER.validate_json(MESSAGE_ADAPTER.dump_json(stored))
    msgs = [
        user("Weather?", 1),
        restored,
        tool(1, ToolReturn(call_id="fc_1", result="18C"), ToolReturn(call_id="fc_2", result="25C")),
        reply("", 2, tool_calls=[call("call_x", "Oslo"), call("call_y", "Bergen")]),
        tool(2, ToolReturn(call_id="call_x", result="-3C"), ToolReturn(call_id="call_y", result="-1C")),
    ]
    contents = body("gemini", msgs)["contents"]
    own, foreign = contents[1]["parts"], contents[3]["parts"]
    assert own[0]["thoughtSignature"] == "c2ln" and own[0]["functionCall"]["id"] == "fc_1"
    assert "thoughtSignature" not in own[1]  # parallel: only the first part is signed
    assert foreign[0]["thoughtSignature"] == DUMMY_THOUGHT_SIGNATURE
    assert "thoughtSignature" not in foreign[1]


def test_bug05_gemini_function_response_directly_follows_its_call() -> None:
    """langchain-ai/langchain#27799: "function response turn comes immediately after a function call turn"."""
    msgs: list[Message] = [
        user("Two cities", 1),
        reply("", 1, tool_calls=[call("c1", "Paris"), call("c2", "Rome")]),
        BaseMessage(role="console", content="interpreter note", msg_id="k1", create_ts=1550),
        tool(
            1,
            ToolReturn(
                call_id="c2",
                name="get_weather",
                result="25C",
                attachments=[ImagePart(url="https://example.com/map.png")],
            ),
        ),
        tool(2, ToolReturn(call_id="c1", name="get_weather", result="18C")),
        user("Thanks", 2),
    ]
    contents = body("gemini", msgs)["contents"]
    call_turn = next(i for i, c in enumerate(contents) if any("functionCall" in p for p in c["parts"]))
    calls = [p["functionCall"] for p in contents[call_turn]["parts"] if "functionCall" in p]
    response_turn = contents[call_turn + 1]
    assert response_turn["role"] == "user"
    responses = [p["functionResponse"] for p in response_turn["parts"]]
    assert len(responses) == len(response_turn["parts"]) == len(calls)
    assert [r["name"] for r in responses] == [c["name"] for c in calls]
    assert [r["id"] for r in responses] == [c["id"] for c in calls]
    # The console note and the next user text come after, never merged into the response content.
    assert "interpreter note" in contents[call_turn + 2]["parts"][0]["text"]


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_bug06_no_empty_text_and_empty_turns_keep_a_placeholder(dialect: str) -> None:
    """langchainjs PR #9987 (#9922), langchain PR #20535/#20566, BerriAI/litellm#19061: empty text/parts."""
    msgs: list[Message] = [
        user("Hi", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="ok")),
        reply("", 2),
        user("", 3),
    ]
    result = run(dialect, msgs)
    text = json.dumps(result.body)
    assert '"text": ""' not in text
    turns = result.body["messages" if dialect == "anthropic" else "contents"]
    roles = [t["role"] for t in turns]
    assert len(roles) == 5 and all(a != b for a, b in itertools.pairwise(roles))  # alternation kept
    key = "content" if dialect == "anthropic" else "parts"
    assert turns[1][key] and all("text" not in b or b["text"] for b in turns[1][key])
    assert EMPTY_TURN_PLACEHOLDER in json.dumps(turns[3]) and EMPTY_TURN_PLACEHOLDER in json.dumps(turns[4])
    assert {w.msg_id for w in result.warnings} >= {"a2", "u3"}


@pytest.mark.parametrize("dialect", ["openai", "openai-responses", "anthropic", "gemini", "zhipu", "doubao"])
def test_bug07_orphan_calls_get_an_error_result_and_orphan_results_are_dropped(dialect: str) -> None:
    """BerriAI/litellm#19061 ("unexpected tool_use_id"): interrupted runs leave calls and results unpaired."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("call_lost")]),
        user("Hello?", 2),
        tool(2, ToolReturn(call_id="call_ghost", name="get_weather", result="20C")),
    ]
    result = run(dialect, msgs)
    text = json.dumps(result.body)
    assert "call_ghost" not in text and "20C" not in text
    assert UNANSWERED_CALL_TEXT in text
    if dialect == "anthropic":
        assert result.body["messages"][2]["content"][0]["is_error"] is True
    if dialect == "gemini":
        assert result.body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"error": UNANSWERED_CALL_TEXT}
    assert any(w.msg_id == "a1" and "never answered" in w.reason for w in result.warnings)
    assert any(w.msg_id == "t2" and "dropped" in w.reason for w in result.warnings)


def test_bug08_provider_blocks_are_recognised_never_silently_dropped() -> None:
    """BerriAI/litellm#25669: Anthropic tool_use/tool_result blocks inside an OpenAI-format history ignored."""
    record = {
        "role": "user",
        "msg_type": "multipart",
        "msg_id": "u1",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}],
    }
    with pytest.raises(ValidationError) as err:
        MESSAGE_ADAPTER.validate_python(record)
    assert "tool_use" in str(err.value)
    with pytest.raises(InputError, match="tool_use"):
        list(read_bytes(json.dumps(record).encode(), source="t.json"))
    # The neutral model carries calls as calls: every dialect keeps both calls of a turn.
    for dialect in ("openai", "openai-responses", "anthropic", "gemini", "zhipu", "doubao"):
        text = json.dumps(body(dialect, parallel_history()))
        assert text.count('"call_a"') >= 2 and text.count('"call_b"') >= 2, dialect


def test_bug09_glm_tool_and_assistant_content_are_strings() -> None:
    """BerriAI/litellm#25868: list-form tool content silently dropped by GLM's chat template."""
    msgs: list[Message] = [
        user("Plot", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(
            1,
            ToolReturn(
                call_id="c1",
                name="get_weather",
                result="done",
                attachments=[ImagePart(data=PNG_B64, media_type="image/png")],
            ),
        ),
        reply("Here.", 2),
    ]
    for msg in body("zhipu", msgs)["messages"]:
        if msg["role"] in ("tool", "assistant"):
            assert isinstance(msg["content"], str), msg


def test_bug10_reasoning_content_passed_back_only_where_taken() -> None:
    """BerriAI/litellm#37636 (#28045, PR #28057), openai/openai-agents-python#2155."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("", 1, reasoning_content="Need the tool.", tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
        reply("18C.", 2),  # the model returned no reasoning here
        user("More?", 3),
        reply("Sure.", 3, reasoning_content=[ThinkingBlock(thinking="t", signature="s")]),  # another provider's
    ]
    zhipu = [m for m in body("zhipu", msgs, thinking=True)["messages"] if m["role"] == "assistant"]
    assert [m.get("reasoning_content") for m in zhipu] == ["Need the tool.", "", ""]
    for dialect in ("openai", "doubao"):
        result = run(dialect, msgs, thinking=True)
        assert "reasoning_content" not in json.dumps(result.body)
        assert any(w.msg_id == "a1" and w.element == "reasoning" for w in result.warnings)


def test_bug11_responses_never_emits_unpaired_reasoning_items() -> None:
    """pydantic/pydantic-ai#2861, #3230 (PR #2869, #2881): reasoning item without its following item."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("Checking.", 1, reasoning_content="think", tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
        reply("", 2, reasoning_content=[ThinkingBlock(thinking="t", signature="s")], tool_calls=[call("c2")]),
        tool(2, ToolReturn(call_id="c2", name="get_weather", result="19C")),
    ]
    result = run("openai-responses", msgs)
    items = result.body["input"]
    assert all(item.get("type") != "reasoning" for item in items)
    calls = [i for i, item in enumerate(items) if item.get("type") == "function_call"]
    assert all("id" not in items[i] for i in calls)  # an fc_ item id would demand its reasoning item
    assert items[calls[0] - 1] == {"role": "assistant", "content": "Checking."}
    assert [w.msg_id for w in result.warnings if w.element == "reasoning"] == ["a1", "a2"]


def test_bug12_images_inside_tool_results() -> None:
    """BerriAI/litellm#2898, langchain-ai/langchain-google#1591, pydantic/pydantic-ai#1267."""
    msgs: list[Message] = [
        user("Plot", 1),
        reply("", 1, tool_calls=[call("c1"), call("c2")]),
        tool(
            1,
            ToolReturn(
                call_id="c1",
                name="get_weather",
                result="chart",
                attachments=[ImagePart(data=PNG_B64, media_type="image/png")],
            ),
        ),
        tool(2, ToolReturn(call_id="c2", name="get_weather", result="no chart")),
    ]
    anthropic = body("anthropic", msgs)["messages"][2]["content"][0]
    assert anthropic["content"] == [
        {"type": "text", "text": "chart"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_B64}},
    ]
    openai = body("openai", msgs)["messages"]
    assert [m["role"] for m in openai[2:]] == ["tool", "tool", "user"]  # after the whole tool block
    assert openai[2]["content"] == "chart"
    assert openai[4]["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_B64}"}}
    responses = body("openai-responses", msgs)["input"][3]
    assert responses["output"][1] == {
        "type": "input_image",
        "image_url": f"data:image/png;base64,{PNG_B64}",
        "detail": "auto",
    }
    # functionResponse.parts is Gemini 3's (2.5 takes the media after the responses: test_fidelity, bug 1).
    gemini = body("gemini", msgs, model="gemini-3-pro-preview")["contents"][2]["parts"][0]["functionResponse"]
    assert gemini["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]


def test_bug13_image_media_types_are_normalised_sniffed_or_degraded() -> None:
    """anthropics/claude-code#8184 and #12015, NousResearch/hermes-agent#55432: image/jpg, SVG, mismatch."""
    msgs: list[Message] = [
        ImageMessage(content="data:image/jpg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2Q==", msg_id="u1", create_ts=1),
        ImageMessage(content="mislabeled.png", msg_id="u2", create_ts=2),
        ImageMessage(content="logo.svg", msg_id="u3", create_ts=3),
    ]
    result = run("anthropic", msgs)
    blocks = result.body["messages"][0]["content"]
    assert blocks[0]["source"]["media_type"] == "image/jpeg"
    assert blocks[1]["source"]["media_type"] == "image/jpeg"  # the bytes say JPEG, whatever the name says
    assert blocks[2] == {"type": "text", "text": "[image not included: logo.svg]"}
    assert any(w.msg_id == "u2" and "bytes are image/jpeg" in w.reason for w in result.warnings)
    assert any(w.msg_id == "u3" and "image/svg+xml" in w.reason for w in result.warnings)


@pytest.mark.parametrize(("dialect", "key"), [("anthropic", "messages"), ("gemini", "contents")])
def test_bug14_history_starting_with_the_assistant_gets_a_user_turn(dialect: str, key: str) -> None:
    """anthropics/anthropic-sdk-typescript#622, lobehub/lobehub#1601: first message not user."""
    result = run(dialect, [reply("Welcome back.", 0), user("Continue", 1)])
    turns = result.body[key]
    assert turns[0]["role"] == "user" and FIRST_USER_PLACEHOLDER in json.dumps(turns[0])
    assert [t["role"] for t in turns][1] in ("assistant", "model")
    assert [w.msg_id for w in result.warnings] == ["a0"]
    assert body("openai", [reply("Welcome back.", 0)])["messages"][0]["role"] == "assistant"


def test_bug15_system_messages_are_never_dropped() -> None:
    """autogenhub/autogen PR #5 (only the last system message kept), biocypher/biochatter PR #292."""
    msgs: list[Message] = [
        BaseMessage(role="system", content="one", msg_id="s1", create_ts=1),
        BaseMessage(role="system", content="two", msg_id="s2", create_ts=2),
        user("hi", 1),
        reply("hello", 1),
        BaseMessage(role="system", content="three", msg_id="s3", create_ts=1800),
        user("bye", 2),
    ]
    anthropic = run("anthropic", msgs)
    assert anthropic.body["system"] == [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    assert "[system] three" in json.dumps(anthropic.body["messages"])
    gemini = body("gemini", msgs)
    assert gemini["systemInstruction"] == {"parts": [{"text": "one"}, {"text": "two"}]}
    assert "[system] three" in json.dumps(gemini["contents"])
    for dialect in ("openai", "zhipu", "doubao", "openai-responses"):
        key = "input" if dialect == "openai-responses" else "messages"
        systems = [m["content"] for m in body(dialect, msgs)[key] if m.get("role") == "system"]
        assert systems == ["one", "two", "three"], dialect
