"""The frozen list of payload cases: every neutral element of the issue, once each, times every dialect.

Each case is a stored conversation (typed messages with fixed ids and timestamps) plus request
options. Golden payloads live in ``tests/golden/<dialect>/<case>.json``; change a case only together
with a reviewed ``python -m tests.providers.regen_golden``. The cases of the request-time rules by
model are in ``tests.providers.rule_cases``, registered when this module loads.
"""

from __future__ import annotations

import base64
from dataclasses import replace

from core import (
    AssistantTextMessage,
    AttachmentMessage,
    AudioMessage,
    AudioPart,
    BaseMessage,
    BaseUser,
    ConsoleResult,
    ContactMessage,
    FilePart,
    FunctionCall,
    FunctionResult,
    HistoryMessage,
    ImageMessage,
    ImagePart,
    IntermediateTrace,
    Message,
    MsgPart,
    MultiPartMessage,
    RedactedThinkingBlock,
    TextMessage,
    TextPart,
    ThinkingBlock,
    ToolCall,
    ToolReturn,
    UrlMessage,
    VideoMessage,
    VideoPart,
)
from core.providers import NamedToolChoice, ToolSpec
from tests.providers.builders import (
    BASE_OPTIONS,
    JPEG_B64,
    PNG_B64,
    WEATHER,
    call,
    reply,
    tool,
    user,
)  # fmt: skip
from tests.providers.case_registry import CASES, Case, build, case, golden_view

__all__ = ["CASES", "build", "golden_view"]


@case
def system_fragments() -> list[Message]:
    return [
        BaseMessage(role="system", content="You are a careful assistant.", msg_id="s1", create_ts=1),
        BaseMessage(role="system", content="Answer briefly.", msg_id="s2", create_ts=2),
        user("Hello", 1),
        reply("Hi! How can I help?", 1),
        BaseMessage(role="system", content="The user is on a mobile phone.", msg_id="s3", create_ts=1700),
        user("What's 2+2?", 2),
    ]


@case
def user_text() -> list[Message]:
    return [user("Hello there", 1), reply("Hello! What can I do for you?", 1), user("Tell me a joke.", 2)]


@case
def image_url() -> list[Message]:
    return [ImageMessage(content="https://example.com/cat.png", msg_id="u1", create_ts=1000), user("What is it?", 2)]


@case
def image_path() -> list[Message]:
    return [ImageMessage(content="cat.png", msg_id="u1", create_ts=1000), user("Describe the image.", 2)]


@case
def image_base64() -> list[Message]:
    parts = [TextPart(text="Look:"), ImagePart(data=PNG_B64, media_type="image/png", detail="a green pixel")]
    return [MultiPartMessage(content=parts, msg_id="u1", create_ts=1000)]


@case
def image_data_url() -> list[Message]:
    # image/jpg is not a media type: providers reject it verbatim (bug 13).
    return [ImageMessage(content=f"data:image/jpg;base64,{JPEG_B64}", msg_id="u1", create_ts=1000)]


@case
def image_unsupported() -> list[Message]:
    parts = [
        ImagePart(path="old.bmp", detail="an old bitmap logo"),
        ImagePart(path="logo.svg"),
        ImagePart(path="mislabeled.png", media_type="image/png"),
    ]
    return [MultiPartMessage(content=parts, msg_id="u1", create_ts=1000)]


def _then_parts(first: Message, *parts: MsgPart) -> list[Message]:
    """A legacy single-medium message (u1), then a multipart message (u2) of ``parts``: the media cases' shape."""
    return [first, MultiPartMessage(content=list(parts), msg_id="u2", create_ts=2000)]


@case
def audio() -> list[Message]:
    return _then_parts(
        AudioMessage(content="voice.wav", msg_id="u1", create_ts=1000),
        AudioPart(url="https://example.com/note.mp3", detail="a voice note: call me back"),
    )


@case
def video() -> list[Message]:
    return _then_parts(
        VideoMessage(content="https://example.com/clip.mp4", msg_id="u1", create_ts=1000),
        VideoPart(path="clip.mp4", detail="a cat jumps off a table"),
        TextPart(text="And this one?"),
    )


@case
def file_pdf() -> list[Message]:
    return _then_parts(
        AttachmentMessage(content="doc.pdf", msg_id="u1", create_ts=1000),
        FilePart(url="https://example.com/report.pdf", filename="report.pdf"),
        TextPart(text="Summarise"),
    )


@case
def file_other() -> list[Message]:
    sheet = base64.b64encode(b"PK\x03\x04 not really a spreadsheet").decode()
    return _then_parts(
        AttachmentMessage(content="notes.txt", msg_id="u1", create_ts=1000),
        FilePart(
            data=sheet,
            media_type="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            filename="q3.xlsx",
            detail="Q3 revenue by region",
        ),
    )


@case
def url() -> list[Message]:
    return [UrlMessage(content="https://example.com/article?id=7", msg_id="u1", create_ts=1000)]


@case
def contact() -> list[Message]:
    return [ContactMessage(content=BaseUser(uid="u-42", name="Ada Lovelace"), msg_id="u1", create_ts=1000)]


@case
def history() -> list[Message]:
    inner = HistoryMessage(
        content=[TextMessage(content="deep", msg_id="h3", creator=BaseUser(uid="x", name="Bob"))], msg_id="h2"
    )
    forwarded = [
        TextMessage(content="Can you send the photo?", msg_id="h1", creator=BaseUser(uid="x", name="Bob")),
        ImageMessage(content="https://example.com/p.jpg", msg_id="h4", creator=BaseUser(uid="y", name="Eve")),
        AssistantTextMessage(content="Sure.", msg_id="h5"),
        inner,
    ]
    return [HistoryMessage(content=forwarded, msg_id="u1", create_ts=1000), user("What did they agree on?", 2)]


@case
def multipart() -> list[Message]:
    parts = [
        TextPart(text="Compare"),
        ImagePart(url="https://example.com/a.png"),
        TextPart(text=""),
        TextPart(text="with"),
        ImagePart(path="cat.png"),
    ]
    return [MultiPartMessage(content=parts, msg_id="u1", create_ts=1000)]


@case
def reasoning_string() -> Case:
    msgs: list[Message] = [
        user("Weather in Paris?", 1),
        reply("", 1, reasoning_content="I should call the weather tool.", tool_calls=[call("call_1")]),
        tool(1, ToolReturn(call_id="call_1", name="get_weather", result="18C, cloudy")),
        reply("It is 18C and cloudy.", 2),
        user("And Rome?", 3),
        reply("", 3, tool_calls=[call("call_2", "Rome")]),
        tool(3, ToolReturn(call_id="call_2", name="get_weather", result="25C")),
    ]
    return msgs, replace(BASE_OPTIONS, thinking=True, tools=(WEATHER,))


@case
def reasoning_blocks() -> list[Message]:
    thinking = [
        ThinkingBlock(thinking="The user wants the weather.", signature="EqQBsig1"),
        RedactedThinkingBlock(data="EmwKAhgBEgy3redacted"),
        ThinkingBlock(thinking="", signature="EqQBsig2"),  # display omitted: empty text, signed
    ]
    return [
        user("Weather in Paris?", 1),
        reply("Let me check.", 1, reasoning_content=thinking, tool_calls=[call("toolu_01")]),
        tool(1, ToolReturn(call_id="toolu_01", name="get_weather", result="18C")),
    ]


@case
def tool_calls_parallel() -> list[Message]:
    return [
        user("Weather in Paris and Rome?", 1),
        reply("", 1, tool_calls=[call("call_a", "Paris"), call("call_b", "Rome")]),
        # Results stored out of call order, one failed.
        tool(1, ToolReturn(call_id="call_b", result="timeout", is_error=True)),
        tool(2, ToolReturn(call_id="call_a", name="get_weather", result="18C")),
        reply("Paris is 18C; Rome timed out.", 2),
    ]


@case
def invalid_arguments() -> list[Message]:
    calls = [
        ToolCall(id="call_x", name="search", arguments='{"q": "cats"'),
        ToolCall(id="call_y", name="search", arguments="[1, 2]"),
        ToolCall(id="call_z", name="now", arguments=""),
    ]
    return [
        user("Search.", 1),
        reply("", 1, tool_calls=calls),
        tool(1, ToolReturn(call_id="call_x", result="bad args"), ToolReturn(call_id="call_y", result="bad args")),
        tool(2, ToolReturn(call_id="call_z", result="12:00")),
    ]


@case
def tool_result_image() -> list[Message]:
    chart = ToolReturn(
        call_id="call_1",
        name="plot",
        result="Chart rendered.",
        attachments=[ImagePart(data=PNG_B64, media_type="image/png", detail="a bar chart")],
    )
    return [
        user("Plot the sales.", 1),
        reply("", 1, tool_calls=[ToolCall(id="call_1", name="plot", arguments='{"series":"sales"}')]),
        tool(1, chart),
        user("Thanks, what does it show?", 2),
    ]


@case
def console() -> list[Message]:
    result = ConsoleResult(
        result="rows=3\nA 1\nB 2\nC 3",
        summary_result="3 rows",
        attachments=[ImagePart(url="https://example.com/plot.png")],
        meta={"step": 2},
    )
    return [
        user("Run the query.", 1),
        reply("Running it.", 1, tfl_scripts=["query sales | top 3"]),
        BaseMessage(role="console", console_reses=[result, "done"], msg_id="k1", create_ts=1700),
        reply("Here are the top 3.", 2),
    ]


@case
def tfl_scripts() -> list[Message]:
    return [user("Plan it.", 1), reply("", 1, tfl_scripts=["step a", "step b"])]


@case
def legacy_function() -> list[Message]:
    return [
        user("Weather?", 1),
        reply("", 1, function_call=FunctionCall(name="get_weather", arguments='{"city":"Oslo"}')),
        BaseMessage(
            role="function", function_res=FunctionResult(name="get_weather", result="-3C"), msg_id="f1", create_ts=1700
        ),
        reply("It is -3C in Oslo.", 2),
    ]


@case
def orphans() -> list[Message]:
    return [
        user("Weather?", 1),
        reply("", 1, tool_calls=[call("call_lost")]),  # interrupted: never answered
        user("Hello?", 2),
        tool(2, ToolReturn(call_id="call_ghost", name="get_weather", result="20C")),  # its call is gone
        reply("Sorry, where were we?", 3),
    ]


@case
def repeated_call_ids() -> list[Message]:
    """An agent that numbers its calls per reply sends call_0 in both turns; providers reject a repeated id."""
    return [
        user("Weather in Paris, then in Rome?", 1),
        reply("", 1, tool_calls=[call("call_0")]),
        tool(1, ToolReturn(call_id="call_0", name="get_weather", result="Paris: 18C")),
        reply("", 2, tool_calls=[call("call_0", "Rome")]),
        tool(2, ToolReturn(call_id="call_0", name="get_weather", result="Rome: 22C")),
        reply("Paris 18C, Rome 22C.", 3),
    ]


@case
def assistant_first() -> list[Message]:
    return [reply("Welcome back! Last time we talked about Paris.", 0), user("Right, continue.", 1)]


@case
def missing_paths() -> list[Message]:
    parts = [
        ImagePart(path="missing.png", detail="a screenshot"),
        ImagePart(path="../cases.py"),
        ImagePart(path="/etc/passwd"),
        ImagePart(url="file:///etc/passwd"),
        FilePart(url="javascript:alert(1)", filename="x.pdf"),
        TextPart(text="What do you see?"),
    ]
    return [MultiPartMessage(content=parts, msg_id="u1", create_ts=1000)]


@case
def tools_defined() -> Case:
    return [user("Weather in Paris?", 1)], replace(BASE_OPTIONS, tools=(WEATHER,), max_tokens=512)


# A schema with what Gemini refuses (title, const, a string format): its golden file shows the conversion.
FORECAST = ToolSpec(
    name="get_forecast",
    description="Forecast for a city and day",
    parameters={
        "title": "Forecast",
        "type": "object",
        "properties": {"city": {"type": "string"}, "day": {"type": "string", "format": "date"}, "unit": {"const": "C"}},
        "required": ["city", "day"],
    },
)


@case
def tools_choice_params() -> Case:
    """A tool turn sent with its tools, a forced tool and every sampling parameter (temperature above 1 is
    clamped where the range ends at 1)."""
    msgs: list[Message] = [
        user("Weather in Paris?", 1),
        reply("", 1, tool_calls=[call("call_1")]),
        tool(1, ToolReturn(call_id="call_1", name="get_weather", result="18C, sunny")),
        user("And tomorrow?", 2),
    ]
    options = replace(
        BASE_OPTIONS,
        tools=(WEATHER, FORECAST),
        tool_choice=NamedToolChoice("get_forecast"),
        tools_source="stored",
        max_tokens=512,
        temperature=1.5,
        top_p=0.9,
        stop=("END",),
    )
    return msgs, options


@case
def empty_turns() -> list[Message]:
    return [
        user("Hi", 1),
        reply("", 1),
        user("", 2),
        reply("", 2, tool_calls=[call("call_1")]),
        tool(2, ToolReturn(call_id="call_1", name="get_weather", result="")),
    ]


@case
def trace_expansion() -> list[Message]:
    records: list[Message] = [
        AssistantTextMessage(content="", msg_id="a1", create_ts=1600, tool_calls=[call("call_1")]),
        BaseMessage(role="console", content="warming up", msg_id="k0", create_ts=900),  # stamped before the turn
        BaseMessage(role="tool", tool_reses=["14C"], msg_id="t1", create_ts=1700),  # names no call
        AssistantTextMessage(content="It is 14C.", msg_id="a2", create_ts=1800),
    ]
    first = user("Weather?", 1, intermediate_trace=IntermediateTrace(records=records))
    return [first, user("Thanks", 2)]


@case
def gemini_signature() -> list[Message]:
    signed = ToolCall(id="fc_1", name="get_weather", arguments='{"city":"Paris"}', thought_signature="c2lnbmF0dXJl")
    return [
        user("Weather in Paris and Rome?", 1),
        reply("", 1, tool_calls=[signed, call("fc_2", "Rome")]),
        tool(1, ToolReturn(call_id="fc_1", result="18C"), ToolReturn(call_id="fc_2", result="25C")),
        reply("", 2, tool_calls=[call("call_foreign", "Oslo")]),  # from another provider: no signature
        tool(2, ToolReturn(call_id="call_foreign", result="-3C")),
    ]


from tests.providers import rule_cases  # noqa: E402,F401  (registers the rules' cases after the elements')
