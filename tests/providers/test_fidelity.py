"""Request-time rules the SDK types cannot express, several of them by model: each test names its authority."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from core import ImagePart, Message, RedactedThinkingBlock, ThinkingBlock, ToolCall, ToolReturn
from core.providers import ChatLLM, RequestResult, ToolSpec, dialect_names
from tests.providers.cases import BASE_OPTIONS, PNG_B64, call, reply, tool, user


def run(dialect: str, msgs: list[Message], **options: Any) -> RequestResult:
    return ChatLLM(dialect, replace(BASE_OPTIONS, **options)).construct_request_params(msgs)


def blocks_of(turn: dict[str, Any]) -> list[str]:
    return [b["type"] for b in turn["content"]]


def signed(text: str, signature: str) -> list[ThinkingBlock | RedactedThinkingBlock]:
    return [ThinkingBlock(thinking=text, signature=signature)]


def image_result() -> list[Message]:
    chart = ToolReturn(
        call_id="call_1",
        name="plot",
        result="Chart rendered.",
        attachments=[ImagePart(data=PNG_B64, media_type="image/png")],
    )
    return [
        user("Plot the sales.", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="plot", arguments="{}")]),
        tool(1, chart),
    ]


# -- bug 1: Gemini tool results with media ------------------------------------------------------------------


def test_gemini_2_5_gets_tool_result_media_as_parts_after_the_function_response() -> None:
    """gemini-cli#19436: 400 "function_response.parts is not supported for this model" on Gemini 2.5; Vercel ai
    (convert-to-google-generative-ai-messages, supportsFunctionResponseParts: false) sends the media as parts
    after it; here in the user content after the responses, which hold only responses (langchain#27799)."""
    contents = run("gemini", image_result(), model="gemini-2.5-flash").body["contents"]
    (response_part,) = contents[2]["parts"]
    response = response_part["functionResponse"]
    assert "parts" not in response and response["response"] == {"output": "Chart rendered."}
    assert contents[3]["role"] == "user"
    assert [next(iter(p)) for p in contents[3]["parts"]] == ["text", "inlineData"]
    assert contents[3]["parts"][1]["inlineData"]["mimeType"] == "image/png"


def test_gemini_3_keeps_tool_result_media_inside_the_function_response() -> None:
    """Vercel ai supportsFunctionResponseParts (Gemini 3 and later take functionResponse.parts)."""
    contents = run("gemini", image_result(), model="gemini-3-pro-preview").body["contents"]
    parts = contents[2]["parts"]
    assert len(parts) == 1 and parts[0]["functionResponse"]["parts"][0]["inlineData"]["mimeType"] == "image/png"


# -- bug 2: functionResponse.name is the call's, tool names follow the provider's rule ---------------------------


def test_gemini_function_response_takes_the_name_of_the_call_it_answers() -> None:
    """providers.md section 4: functionResponse.name must equal the functionCall's name (found by call id)."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="weather_tool_v2", result="18C")),
    ]
    result = run("gemini", msgs)
    response = result.body["contents"][2]["parts"][0]["functionResponse"]
    assert response["name"] == "get_weather"
    assert any(w.msg_id == "t1" and "weather_tool_v2" in w.reason for w in result.warnings)


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_tool_name_the_provider_rejects_is_rewritten_alike_in_definition_call_and_result(dialect: str) -> None:
    """openai SDK FunctionDefinition.name (a-zA-Z0-9_-, 64); Anthropic 400 '^[a-zA-Z0-9_-]{1,128}$'
    (claude-code#96152); google-genai FunctionDeclaration.name (letter or _ first, then a-zA-Z0-9_.:-, 128)."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("c1", name="weather lookup")]),
        tool(1, ToolReturn(call_id="c1", result="18C")),
    ]
    spec = ToolSpec(name="weather lookup")
    result = run(dialect, msgs, tools=(spec,))
    text = str(result.body)
    assert "weather lookup" not in text
    sent = result.profile.tool_names.rewrite("weather lookup")
    assert result.profile.tool_names.accepts(sent) and text.count(sent) >= 2
    assert any(w.element == "tool_name" and "weather lookup" in w.reason for w in result.warnings)


# -- bug 3: Anthropic, thinking on, final tool-use turn without leading thinking --------------------------------


def unsigned_tool_turn() -> list[Message]:
    return [
        user("Weather?", 1),
        reply("Let me check.", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    ]


@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-opus-4-7"])
def test_thinking_is_switched_off_when_the_last_tool_use_turn_has_no_thinking(model: str) -> None:
    """Anthropic 400 "Expected `thinking` or `redacted_thinking`, but found `tool_use`" (litellm#15601); LiteLLM
    drops thinking for such a history rather than send it into the 400."""
    result = run("anthropic", unsigned_tool_turn(), thinking=True, model=model)
    assert result.body["thinking"] == {"type": "disabled"}
    assert any(w.element == "thinking" and "tool_use" in w.reason for w in result.warnings)


def test_merged_records_put_their_thinking_first() -> None:
    """Anthropic: with thinking on, the final assistant turn must start with a thinking block, so a record's
    thinking is not left behind the text of the record merged before it."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("Let me check.", 1),
        reply("", 2, reasoning_content=signed("call it", "sig"), tool_calls=[call("c1")]),
        tool(2, ToolReturn(call_id="c1", name="get_weather", result="18C")),
    ]
    result = run("anthropic", msgs, thinking=True)
    assert blocks_of(result.body["messages"][1]) == ["thinking", "text", "tool_use"]
    assert result.body["thinking"] == {"type": "adaptive"}


# -- bug 4: Anthropic, thinking unset, final assistant turn holding thinking ------------------------------------


@pytest.mark.parametrize("thinking", [None, False])
def test_final_assistant_thinking_is_stripped_unless_thinking_is_on(thinking: bool | None) -> None:
    """litellm#18926: "When thinking is disabled, an assistant message in the final position cannot contain
    thinking"; without a thinking parameter, thinking is disabled."""
    msgs: list[Message] = [user("a", 1), reply("answer", 1, reasoning_content=signed("hmm", "s"))]
    result = run("anthropic", msgs, thinking=thinking)
    assert blocks_of(result.body["messages"][-1]) == ["text"]


# -- bug 5: Anthropic, final assistant content with trailing whitespace ----------------------------------------


def test_final_assistant_text_is_trimmed_of_trailing_whitespace() -> None:
    """Anthropic 400 "final assistant content cannot end with trailing whitespace"."""
    result = run("anthropic", [user("Write a haiku", 1), reply("Here it is:\n  ", 1)])
    assert result.body["messages"][-1]["content"][-1] == {"type": "text", "text": "Here it is:"}
    assert any(w.msg_id == "a1" and "whitespace" in w.reason for w in result.warnings)


# -- bug 6: thinking parameters by model -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("claude-sonnet-4-5", {"type": "enabled", "budget_tokens": 2048}),
        ("claude-opus-4-7", {"type": "adaptive"}),
    ],
)
def test_anthropic_thinking_takes_the_form_the_model_accepts(model: str, expected: dict[str, Any]) -> None:
    """pydantic-ai profiles/anthropic.py: Opus 4.7+ "returns a 400 for {'type': 'enabled', 'budget_tokens'}"."""
    assert run("anthropic", [user("hi", 1)], thinking=True, model=model).body["thinking"] == expected


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        ("gemini-2.5-flash", {"thinkingBudget": 0}),
        ("gemini-2.5-pro", {"thinkingBudget": 128}),
        ("gemini-3-pro-preview", {"thinkingLevel": "LOW"}),
    ],
)
def test_gemini_thinking_off_takes_the_form_the_model_accepts(model: str, expected: dict[str, Any]) -> None:
    """Gemini docs, thinking: 2.5 Flash switches off with budget 0, 2.5 Pro and Gemini 3 cannot switch off."""
    result = run("gemini", [user("hi", 1)], thinking=False, model=model)
    assert result.body["generationConfig"]["thinkingConfig"] == expected


@pytest.mark.parametrize(
    ("dialect", "model", "on", "off"),
    [
        ("openai", "o3-mini", {"reasoning_effort": "medium"}, {"reasoning_effort": "low"}),
        ("openai", "gpt-5", {"reasoning_effort": "medium"}, {"reasoning_effort": "minimal"}),
        ("openai", "gpt-4.1", {}, {}),
        ("openai-responses", "gpt-5.1", {"reasoning": {"effort": "medium"}}, {"reasoning": {"effort": "none"}}),
        ("openai-responses", "gpt-4o", {}, {}),
    ],
)
def test_openai_reasoning_parameters_go_to_reasoning_models_only(
    dialect: str, model: str, on: dict[str, Any], off: dict[str, Any]
) -> None:
    """pydantic-ai profiles/openai.py: reasoning models take reasoning_effort and no sampling settings; others
    reject reasoning_effort."""
    for thinking, expected in ((True, on), (False, off)):
        body = run(dialect, [user("hi", 1)], thinking=thinking, model=model, max_tokens=100).body
        assert {k: body[k] for k in ("reasoning_effort", "reasoning") if k in body} == expected
        assert "temperature" not in body and "max_tokens" not in body


# -- bug 7: two assistant records before their results ---------------------------------------------------------


def two_records() -> list[Message]:
    return [
        user("Weather in Paris and Rome?", 1),
        reply("", 1, reasoning_content=signed("Paris first", "sig1"), tool_calls=[call("call_x", "Paris")]),
        reply("", 2, reasoning_content=signed("then Rome", "sig2"), tool_calls=[call("call_y", "Rome")]),
        tool(2, ToolReturn(call_id="call_x", name="get_weather", result="18C")),
        tool(3, ToolReturn(call_id="call_y", name="get_weather", result="25C")),
    ]


@pytest.mark.parametrize("dialect", dialect_names())
def test_records_written_one_per_call_deliver_every_real_result(dialect: str) -> None:
    """A streamed or parallel agent writes one assistant record per call before the results; no result is
    replaced by a made-up failure (the tool succeeded) and none is dropped."""
    result = run(dialect, two_records(), thinking=True)
    text = str(result.body)
    assert "18C" in text and "25C" in text and "not answered" not in text
    assert not any(
        "never answered" in w.reason or ("dropped" in w.reason and "result" in w.element) for w in result.warnings
    )


def test_anthropic_merges_the_records_keeping_thinking_interleaved() -> None:
    """Anthropic forbids reordering a thinking sequence: [thinking1, tool_use1, thinking2, tool_use2]."""
    turns = run("anthropic", two_records(), thinking=True).body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert blocks_of(turns[1]) == ["thinking", "tool_use", "thinking", "tool_use"]
    assert [b.get("signature") or b["id"] for b in turns[1]["content"]] == ["sig1", "call_x", "sig2", "call_y"]
    assert [(b["tool_use_id"], b["content"]) for b in turns[2]["content"]] == [("call_x", "18C"), ("call_y", "25C")]


@pytest.mark.parametrize("dialect", ["openai", "zhipu", "doubao"])
def test_chat_completions_sends_the_records_as_one_assistant_message(dialect: str) -> None:
    """OpenAI: "An assistant message with 'tool_calls' must be followed by tool messages responding to each
    'tool_call_id'" (providers.md section 1): the two records become one message with both calls."""
    msgs = run(dialect, two_records()).body["messages"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "tool"]
    assert [c["id"] for c in msgs[1]["tool_calls"]] == ["call_x", "call_y"]
    assert [(m["tool_call_id"], m["content"]) for m in msgs[2:]] == [("call_x", "18C"), ("call_y", "25C")]


def test_gemini_sends_the_records_as_one_call_turn_and_one_response_turn() -> None:
    """Gemini: "the number of function response parts is equal to the number of function call parts of the
    function call turn" (gemini-cli#5443)."""
    contents = run("gemini", two_records()).body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p["functionCall"]["id"] for p in contents[1]["parts"]]
    assert calls == ["call_x", "call_y"]
    assert [p["functionResponse"]["id"] for p in contents[2]["parts"]] == calls
