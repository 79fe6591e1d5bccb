"""Provider rules hold for any history: random conversations (orphan calls and results, duplicate and bare
result ids, empty turns, mid-conversation system text, attachments) give bodies that the SDK types accept
and that obey each provider's ordering rules. Nothing here is left for the provider's 400."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import (
    AssistantTextMessage,
    BaseMessage,
    ConsoleResult,
    FunctionCall,
    FunctionResult,
    ImagePart,
    Message,
    MultiPartMessage,
    RedactedThinkingBlock,
    TextMessage,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
)
from core.providers import ChatLLM, RequestOptions, dialect_names
from tests.providers.cases import BASE_OPTIONS, PNG_B64, call, reply, tool, user
from tests.providers.strict import validate_body

# "c.1" and "c 1" differ only in characters Anthropic rejects in a tool id; "c_1" is what both would become.
IDS = st.sampled_from(["c0", "c1", "c2", "c3", "", "c.1", "c 1", "c_1"])
TEXT = st.sampled_from(["", "hi", "Weather?", "ok"])
ARGS = st.sampled_from(['{"city":"Paris"}', "", "{bad", "[1]"])
IMAGE = ImagePart(data=PNG_B64, media_type="image/png")


def _user(n: int, draw: Any) -> Message:
    if draw(st.booleans()):
        return TextMessage(content=draw(TEXT), msg_id=f"m{n}")
    parts = [TextPart(text=draw(TEXT)), *([IMAGE] if draw(st.booleans()) else [])]
    return MultiPartMessage(content=parts, msg_id=f"m{n}")


def _assistant(n: int, draw: Any) -> Message:
    reasoning = draw(
        st.sampled_from(
            [None, "thinking text", [ThinkingBlock(thinking="t", signature="s"), RedactedThinkingBlock(data="r")]]
        )
    )
    calls = [ToolCall(id=draw(IDS), name="get_weather", arguments=draw(ARGS)) for _ in range(draw(st.integers(0, 3)))]
    legacy = FunctionCall(name="lookup", arguments="{}") if draw(st.integers(0, 5)) == 0 else None
    return AssistantTextMessage(
        content=draw(TEXT),
        reasoning_content=reasoning,
        tool_calls=calls or None,
        function_call=legacy,
        tfl_scripts=["x = 1"] if draw(st.integers(0, 5)) == 0 else None,
        msg_id=f"m{n}",
    )


def _tool(n: int, draw: Any) -> Message:
    results: list[str | ToolReturn] = []
    for _ in range(draw(st.integers(1, 2))):
        call_id = draw(IDS)
        if not call_id:
            results.append(draw(TEXT))  # a bare string names no call
        else:
            attachments = [IMAGE] if draw(st.integers(0, 3)) == 0 else []
            results.append(
                ToolReturn(call_id=call_id, result=draw(TEXT), is_error=draw(st.booleans()), attachments=attachments)
            )
    return BaseMessage(role="tool", tool_reses=results, msg_id=f"m{n}")


def _other(n: int, draw: Any) -> Message:
    kind = draw(st.sampled_from(["system", "console", "function"]))
    if kind == "system":
        return BaseMessage(role="system", content=draw(TEXT), msg_id=f"m{n}")
    if kind == "console":
        res = ConsoleResult(result="out", attachments=[IMAGE] if draw(st.booleans()) else [])
        return BaseMessage(role="console", console_reses=[res], msg_id=f"m{n}")
    return BaseMessage(role="function", function_res=FunctionResult(name="lookup", result="r"), msg_id=f"m{n}")


@st.composite
def histories(draw: Any) -> list[Message]:
    makers = [_user, _assistant, _tool, _other]
    weights = st.sampled_from([0, 1, 1, 2, 2, 3])
    return [makers[draw(weights)](n, draw) for n in range(draw(st.integers(0, 12)))]


def check_anthropic(body: dict[str, Any]) -> None:
    turns = body["messages"]
    assert not turns or turns[0]["role"] == "user"
    use_ids = [b["id"] for turn in turns for b in turn["content"] if b["type"] == "tool_use"]
    assert len(use_ids) == len(set(use_ids)), "tool_use ids are unique in the whole request"
    for a, b in itertools.pairwise(turns):
        assert a["role"] != b["role"], "roles must alternate"
    for i, turn in enumerate(turns):
        assert turn["content"], "no empty turn"
        for block in turn["content"]:
            assert block["type"] != "text" or block["text"], "no empty text block"
        uses = [b["id"] for b in turn["content"] if b["type"] == "tool_use"]
        results_here = [b["tool_use_id"] for b in turn["content"] if b["type"] == "tool_result"]
        if results_here:
            prev = turns[i - 1]["content"]
            assert [b["type"] for b in turn["content"][: len(results_here)]] == ["tool_result"] * len(results_here)
            assert results_here == [b["id"] for b in prev if b["type"] == "tool_use"]
        if uses:
            nxt = turns[i + 1]["content"]
            assert [b.get("tool_use_id") for b in nxt[: len(uses)]] == uses


def check_gemini(body: dict[str, Any]) -> None:
    contents = body["contents"]
    assert not contents or contents[0]["role"] == "user"
    for i, content in enumerate(contents):
        assert content["role"] in ("user", "model") and content["parts"]
        for part in content["parts"]:
            assert "text" not in part or part["text"]
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if calls:
            nxt = contents[i + 1]
            responses = [p["functionResponse"] for p in nxt["parts"]]
            assert len(responses) == len(nxt["parts"]) == len(calls)
            assert [(r["id"], r["name"]) for r in responses] == [(c["id"], c["name"]) for c in calls]
        if any("functionResponse" in p for p in content["parts"]):
            assert all("functionResponse" in p for p in content["parts"])
            assert any("functionCall" in p for p in contents[i - 1]["parts"])


def check_chat(body: dict[str, Any], dialect: str) -> None:
    msgs = body["messages"]
    for i, msg in enumerate(msgs):
        if msg["role"] == "assistant" and msg.get("tool_calls"):
            ids = [c["id"] for c in msg["tool_calls"]]
            following = msgs[i + 1 : i + 1 + len(ids)]
            assert [(m["role"], m["tool_call_id"]) for m in following] == [("tool", x) for x in ids]
        if msg["role"] == "tool":
            assert msgs[i - 1]["role"] in ("assistant", "tool")
            assert isinstance(msg["content"], str)
        if dialect == "zhipu" and msg["role"] == "assistant":
            assert isinstance(msg["content"], str)


def check_responses(body: dict[str, Any]) -> None:
    items = body["input"]
    open_calls: list[str] = []
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            open_calls.append(item["call_id"])
        elif kind == "function_call_output":
            assert open_calls and open_calls[0] == item["call_id"], "outputs answer the calls in order"
            open_calls.pop(0)
        else:
            assert not open_calls, "every call is answered before the next item"
        assert kind != "reasoning"
    assert not open_calls


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_history_gives_valid_rule_abiding_bodies(msgs: list[Message]) -> None:
    for dialect in dialect_names():
        for thinking in (None, True, False):
            body = ChatLLM(dialect, RequestOptions(thinking=thinking)).construct_request_params(msgs).body
            validate_body(dialect, body)
            if dialect == "anthropic":
                check_anthropic(body)
            elif dialect == "gemini":
                check_gemini(body)
            elif dialect == "openai-responses":
                check_responses(body)
            else:
                check_chat(body, dialect)


BIG_ARGUMENTS = '{"order_id": 123456789012345678901234567890, "ratio": 0.5}'


def _sent_arguments(dialect: str, body: dict[str, Any]) -> Any:
    """The arguments of the one tool call in ``body``, as the dialect sends them."""
    if dialect == "anthropic":
        return next(b["input"] for m in body["messages"] for b in m["content"] if b["type"] == "tool_use")
    if dialect == "gemini":
        return next(p["functionCall"]["args"] for c in body["contents"] for p in c["parts"] if "functionCall" in p)
    if dialect == "openai-responses":
        return next(i["arguments"] for i in body["input"] if i.get("type") == "function_call")
    return next(m["tool_calls"][0]["function"]["arguments"] for m in body["messages"] if m.get("tool_calls"))


@pytest.mark.parametrize("dialect", dialect_names())
def test_integers_past_64_bits_in_tool_arguments_are_sent_exactly(dialect: str) -> None:
    msgs: list[Message] = [
        user("Where is my order?", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="lookup", arguments=BIG_ARGUMENTS)]),
        tool(1, ToolReturn(call_id="call_1", name="lookup", result="shipped")),
    ]
    sent = _sent_arguments(dialect, ChatLLM(dialect, BASE_OPTIONS).construct_request_params(msgs).body)
    if isinstance(sent, str):  # the model's text, verbatim
        assert sent == BIG_ARGUMENTS
    else:  # an object: the integer exact, not the float orjson alone would make of it
        assert sent == {"order_id": 123456789012345678901234567890, "ratio": 0.5}
        assert type(sent["order_id"]) is int


def test_anthropic_gets_each_repeated_call_id_once_and_each_result_its_own_call() -> None:
    """Agents that number their calls per reply send call_0 in every turn; Anthropic answers 400 "tool_use ids
    must be unique" (anthropics/claude-code#20901). The repeat is renamed, its result follows, and it is said."""
    msgs: list[Message] = [
        user("Weather in Paris, then Rome and Oslo?", 1),
        reply("", 1, tool_calls=[call("call_0")]),
        tool(1, ToolReturn(call_id="call_0", result="Paris: sun")),
        reply("", 2, tool_calls=[call("call_0", "Rome"), call("call_1", "Oslo")]),
        tool(2, ToolReturn(call_id="call_0", result="Rome: rain"), ToolReturn(call_id="call_1", result="Oslo: snow")),
        reply("", 3, tool_calls=[call("call_0_2", "Nice")]),
        tool(3, ToolReturn(call_id="call_0_2", result="Nice: wind")),
    ]
    result = ChatLLM("anthropic", BASE_OPTIONS).construct_request_params(msgs)
    turns = result.body["messages"]
    pairs = [
        (use["id"], use["input"]["city"], res["tool_use_id"], res["content"])
        for ask, answer in itertools.pairwise(turns)
        if ask["role"] == "assistant"
        for use, res in zip(ask["content"], answer["content"], strict=False)
    ]
    assert pairs == [
        ("call_0", "Paris", "call_0", "Paris: sun"),
        ("call_0_2", "Rome", "call_0_2", "Rome: rain"),
        ("call_1", "Oslo", "call_1", "Oslo: snow"),
        ("call_0_2_2", "Nice", "call_0_2_2", "Nice: wind"),
    ]
    renamed = [w for w in result.warnings if w.element == "tool_call"]
    assert [(w.msg_id, w.reason.rsplit(" ", 1)[-1]) for w in renamed] == [("a2", "call_0_2"), ("a3", "call_0_2_2")]
    validate_body("anthropic", result.body)
