"""The Gemini dialect's rules: thought signatures, function responses, tool-result media, thinking by model."""

from __future__ import annotations

from typing import Any

import pytest

from core import (
    MESSAGE_ADAPTER,
    BaseMessage,
    ImagePart,
    Message,
    ToolCall,
    ToolReturn,
)
from core.providers.dialects.gemini import DUMMY_THOUGHT_SIGNATURE
from tests.providers.builders import body, call, reply, run, tool, two_records, user, with_image


def test_thought_signature_survives_storage_and_foreign_calls_get_the_dummy() -> None:
    """BerriAI/litellm#16893 (PR #16895): signature lost between response, history and request.

    docs/providers.md section 9, conversion bug 4.
    """
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


def test_function_responses_directly_follow_their_call_turn() -> None:
    """langchain-ai/langchain#27799: "function response turn comes immediately after a function call turn".

    docs/providers.md section 9, conversion bug 5.
    """
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


def image_result() -> list[Message]:
    return [
        user("Plot the sales.", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="plot", arguments="{}")]),
        tool(1, with_image("call_1", "Chart rendered.", name="plot")),
    ]


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


def test_gemini_function_response_takes_the_name_of_the_call_it_answers() -> None:
    """docs/providers.md section 4: functionResponse.name must equal the functionCall's name (found by call id)."""
    msgs: list[Message] = [
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("c1")]),
        tool(1, ToolReturn(call_id="c1", name="weather_tool_v2", result="18C")),
    ]
    result = run("gemini", msgs)
    response = result.body["contents"][2]["parts"][0]["functionResponse"]
    assert response["name"] == "get_weather"
    assert any(w.msg_id == "t1" and "weather_tool_v2" in w.reason for w in result.warnings)


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


def test_gemini_sends_the_records_as_one_call_turn_and_one_response_turn() -> None:
    """Gemini: "the number of function response parts is equal to the number of function call parts of the
    function call turn" (gemini-cli#5443)."""
    contents = run("gemini", two_records()).body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    calls = [p["functionCall"]["id"] for p in contents[1]["parts"]]
    assert calls == ["call_x", "call_y"]
    assert [p["functionResponse"]["id"] for p in contents[2]["parts"]] == calls
