"""The conversion bugs of docs/providers.md section 9 that several dialects could repeat; the single-dialect ones are in
tests/providers/test_<dialect>.py. Each docstring names the issue or thread."""

from __future__ import annotations

import itertools
import json

import pytest
from pydantic import ValidationError

from core import (
    MESSAGE_ADAPTER,
    BaseMessage,
    InputError,
    Message,
    ThinkingBlock,
    ToolReturn,
)
from core.providers.base import EMPTY_TURN_PLACEHOLDER, FIRST_USER_PLACEHOLDER, UNANSWERED_CALL_TEXT
from core.reader import read_bytes
from tests.providers.builders import PNG_B64, blocks_of, body, call, reply, run, tool, user, with_image


def parallel_history() -> list[Message]:
    return [
        user("Weather in Paris and Rome?", 1),
        reply("", 1, tool_calls=[call("call_a", "Paris"), call("call_b", "Rome")]),
        tool(1, ToolReturn(call_id="call_b", name="get_weather", result="25C")),
        tool(2, ToolReturn(call_id="call_a", name="get_weather", result="18C")),
        user("Which is warmer?", 3),
    ]


def test_parallel_tool_results_become_one_user_message() -> None:
    """pydantic/pydantic-ai#741 (fix #653): N tool messages -> one user message, results in call order, first.

    docs/providers.md section 9, conversion bug 1.
    """
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


@pytest.mark.parametrize("dialect", ["anthropic", "gemini"])
def test_no_empty_text_is_sent_and_empty_turns_keep_a_placeholder(dialect: str) -> None:
    """langchainjs PR #9987 (#9922), langchain PR #20535/#20566, BerriAI/litellm#19061: empty text/parts.

    docs/providers.md section 9, conversion bug 6.
    """
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
def test_orphan_calls_get_an_error_result_and_orphan_results_are_dropped(dialect: str) -> None:
    """BerriAI/litellm#19061 ("unexpected tool_use_id"): interrupted runs leave calls and results unpaired.

    docs/providers.md section 9, conversion bug 7.
    """
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


def test_provider_blocks_in_stored_content_are_refused_never_silently_dropped() -> None:
    """BerriAI/litellm#25669: Anthropic tool_use/tool_result blocks inside an OpenAI-format history ignored.

    docs/providers.md section 9, conversion bug 8.
    """
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


def test_reasoning_content_is_passed_back_only_where_the_provider_takes_it() -> None:
    """BerriAI/litellm#37636 (#28045, PR #28057), openai/openai-agents-python#2155.

    docs/providers.md section 9, conversion bug 10.
    """
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


def test_images_inside_tool_results_reach_every_provider() -> None:
    """BerriAI/litellm#2898, langchain-ai/langchain-google#1591, pydantic/pydantic-ai#1267.

    docs/providers.md section 9, conversion bug 12.
    """
    msgs: list[Message] = [
        user("Plot", 1),
        reply("", 1, tool_calls=[call("c1"), call("c2")]),
        tool(1, with_image("c1", "chart")),
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
    # functionResponse.parts is Gemini 3's (2.5 takes the media after the responses: test_gemini).
    gemini = body("gemini", msgs, model="gemini-3-pro-preview")["contents"][2]["parts"][0]["functionResponse"]
    assert gemini["parts"] == [{"inlineData": {"mimeType": "image/png", "data": PNG_B64}}]


@pytest.mark.parametrize(("dialect", "key"), [("anthropic", "messages"), ("gemini", "contents")])
def test_a_history_starting_with_the_assistant_gets_a_user_turn_first(dialect: str, key: str) -> None:
    """anthropics/anthropic-sdk-typescript#622, lobehub/lobehub#1601: first message not user.

    docs/providers.md section 9, conversion bug 14.
    """
    result = run(dialect, [reply("Welcome back.", 0), user("Continue", 1)])
    turns = result.body[key]
    assert turns[0]["role"] == "user" and FIRST_USER_PLACEHOLDER in json.dumps(turns[0])
    assert [t["role"] for t in turns][1] in ("assistant", "model")
    assert [w.msg_id for w in result.warnings] == ["a0"]
    assert body("openai", [reply("Welcome back.", 0)])["messages"][0]["role"] == "assistant"


def test_no_system_message_is_dropped() -> None:
    """autogenhub/autogen PR #5 (only the last system message kept), biocypher/biochatter PR #292.

    docs/providers.md section 9, conversion bug 15.
    """
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
