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
from core.preflight.sdk_types import validate_body
from core.providers import ChatLLM, RequestOptions, dialect_names, get_dialect, provider_named
from tests.long_runs import examples
from tests.providers.builders import BASE_OPTIONS, PNG_B64, call, reply, tool, user

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
    _unique([b["id"] for turn in turns for b in turn["content"] if b["type"] == "tool_use"], "tool_use ids")
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
    thinking_on = body.get("thinking", {}).get("type") in ("enabled", "adaptive")
    tool_turns = [t for t in turns if t["role"] == "assistant" and any(b["type"] == "tool_use" for b in t["content"])]
    if thinking_on and tool_turns:  # "Expected `thinking` or `redacted_thinking`, but found `tool_use`"
        assert tool_turns[-1]["content"][0]["type"] in ("thinking", "redacted_thinking")
    if turns and turns[-1]["role"] == "assistant":
        final = turns[-1]["content"]
        if not thinking_on:  # litellm#18926: no thinking in the final assistant message when thinking is off
            assert all(b["type"] not in ("thinking", "redacted_thinking") for b in final)
        # "final assistant content cannot end with trailing whitespace"
        assert final[-1]["type"] != "text" or final[-1]["text"] == final[-1]["text"].rstrip()


def _unique(ids: list[str], what: str) -> None:
    assert len(ids) == len(set(ids)), f"{what} are unique in the whole request"


def check_gemini(body: dict[str, Any]) -> None:
    contents = body["contents"]
    _unique([p["functionCall"]["id"] for c in contents for p in c["parts"] if "functionCall" in p], "call ids")
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
    _unique([c["id"] for m in msgs for c in m.get("tool_calls") or ()], "tool call ids")
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
    _unique([i["call_id"] for i in items if i.get("type") == "function_call"], "call ids")
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


def check_rules(dialect: str, body: dict[str, Any]) -> None:
    """The ordering and uniqueness rules of ``dialect``'s provider hold for ``body``."""
    if dialect == "anthropic":
        check_anthropic(body)
    elif dialect == "gemini":
        check_gemini(body)
    elif dialect == "openai-responses":
        check_responses(body)
    else:
        check_chat(body, dialect)


@settings(max_examples=examples(40, long=120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_history_gives_valid_rule_abiding_bodies(msgs: list[Message]) -> None:
    for dialect in dialect_names():
        for thinking in (None, True, False):
            body = (
                ChatLLM(provider_named(dialect), RequestOptions(thinking=thinking)).construct_request_params(msgs).body
            )
            validate_body(get_dialect(dialect), body)
            check_rules(dialect, body)


# One model of each profile whose rules differ from the dialect's default (core.providers.profiles).
PROFILE_MODELS = {
    "anthropic": ["claude-opus-4-7", "claude-sonnet-4-5", "claude-3-5-haiku-latest", "mystery-model"],
    "gemini": ["gemini-3-pro-preview", "gemini-2.5-pro", "gemini-2.0-flash", "mystery-model"],
    "openai": ["o3-mini", "gpt-5", "gpt-5.1", "gpt-5-chat-latest", "mystery-model"],
    "openai-responses": ["o3-mini", "gpt-5", "gpt-5.1", "mystery-model"],
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories())
def test_any_history_gives_valid_rule_abiding_bodies_for_every_profile(msgs: list[Message]) -> None:
    for dialect, models in PROFILE_MODELS.items():
        for model in models:
            for thinking in (None, True, False):
                options = RequestOptions(model=model, thinking=thinking)
                body = ChatLLM(provider_named(dialect), options).construct_request_params(msgs).body
                validate_body(get_dialect(dialect), body)
                check_rules(dialect, body)


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
    sent = _sent_arguments(dialect, ChatLLM(provider_named(dialect), BASE_OPTIONS).construct_request_params(msgs).body)
    if isinstance(sent, str):  # the model's text, verbatim
        assert sent == BIG_ARGUMENTS
    else:  # an object: the integer exact, not the float orjson alone would make of it
        assert sent == {"order_id": 123456789012345678901234567890, "ratio": 0.5}
        assert type(sent["order_id"]) is int


# An agent that numbers its calls per reply sends call_0 in every turn; providers answer 400 (OpenAI "Duplicate
# value for 'tool_call_id'", Anthropic "tool_use ids must be unique": agno-agi/agno#5116, claude-code#20901).
REPEATED_IDS: list[Message] = [
    user("Weather in Paris, then Rome and Oslo, then Nice?", 1),
    reply("", 1, tool_calls=[call("call_0")]),
    tool(1, ToolReturn(call_id="call_0", name="get_weather", result="Paris: sun")),
    reply("", 2, tool_calls=[call("call_0", "Rome"), call("call_1", "Oslo")]),
    tool(
        2,
        ToolReturn(call_id="call_0", name="get_weather", result="Rome: rain", attachments=[IMAGE]),
        ToolReturn(call_id="call_1", name="get_weather", result="Oslo: snow"),
    ),
    reply("", 3, tool_calls=[call("call_0_2", "Nice")]),  # the name the repeat above is given: taken too
    tool(3, ToolReturn(call_id="call_0_2", name="get_weather", result="Nice: wind")),
]
RENAMED_CALLS = ["call_0", "call_0_2", "call_1", "call_0_2_2"]


def _sent_ids(dialect: str, body: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The call ids of ``body`` in order, and the call ids its results name, in order."""
    if dialect == "anthropic":
        blocks = [b for m in body["messages"] for b in m["content"]]
        return [b["id"] for b in blocks if b["type"] == "tool_use"], [
            b["tool_use_id"] for b in blocks if b["type"] == "tool_result"
        ]
    if dialect == "gemini":
        parts = [p for c in body["contents"] for p in c["parts"]]
        return [p["functionCall"]["id"] for p in parts if "functionCall" in p], [
            p["functionResponse"]["id"] for p in parts if "functionResponse" in p
        ]
    if dialect == "openai-responses":
        items = body["input"]
        return [i["call_id"] for i in items if i.get("type") == "function_call"], [
            i["call_id"] for i in items if i.get("type") == "function_call_output"
        ]
    msgs = body["messages"]
    return [c["id"] for m in msgs for c in m.get("tool_calls") or ()], [
        m["tool_call_id"] for m in msgs if m["role"] == "tool"
    ]


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_call_id_repeated_in_a_later_turn_is_renamed_and_its_results_follow(dialect: str) -> None:
    result = ChatLLM(provider_named(dialect), BASE_OPTIONS).construct_request_params(REPEATED_IDS)
    validate_body(get_dialect(dialect), result.body)
    check_rules(dialect, result.body)
    assert _sent_ids(dialect, result.body) == (RENAMED_CALLS, RENAMED_CALLS)
    flat = result.phases["to_list"]
    answers = [(m["tool_call_id"], m["content"]) for m in flat if m["role"] == "tool"]
    assert answers == list(zip(RENAMED_CALLS, ["Paris: sun", "Rome: rain", "Oslo: snow", "Nice: wind"], strict=True))
    assert [m["attachment_of"] for m in flat if m["role"] == "user" and m["attachment_of"]] == ["call_0_2"]
    renamed = [(w.msg_id, w.reason.rsplit(" ", 1)[-1]) for w in result.warnings if w.element == "tool_call"]
    assert renamed == [("a2", "call_0_2"), ("a3", "call_0_2_2")]
