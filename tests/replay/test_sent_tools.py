"""Which tools a replay sends: the given ones over the stored ones, else those inferred from the recorded calls."""

from __future__ import annotations

from core.messages.union import MESSAGE_ADAPTER, Message
from core.providers import GenerationParams, NamedToolChoice, ToolChoice, ToolSpec
from core.replay.sent_tools import GivenTools, sent_tools
from core.request_context import StoredRequest
from tests.replay.steps_data import steps_conversation

LOOKUP = ToolSpec("lookup", "Find an order.", {"type": "object", "properties": {"id": {"type": "string"}}})
REFUND = ToolSpec("refund", "Refund an order.", {"type": "object", "properties": {"amount": {"type": "number"}}})


def _stored(
    tools: tuple[ToolSpec, ...] = (), tool_choice: ToolChoice | None = None, params: GenerationParams | None = None
) -> StoredRequest:
    return StoredRequest("c", tools=tools, tool_choice=tool_choice, params=params or GenerationParams())


def _recorded() -> list[Message]:
    return [MESSAGE_ADAPTER.validate_python(m) for m in steps_conversation()]


def test_stored_tools_and_params_are_sent_as_stored() -> None:
    stored = _stored((LOOKUP,), "required", GenerationParams(max_tokens=512, temperature=0.2, stop=("END",)))
    sent = sent_tools(stored, None, _recorded())
    assert (sent.tools, sent.tool_choice, sent.source, sent.note) == ((LOOKUP,), "required", "stored", None)
    options = sent.options("m")
    assert (options.max_tokens, options.temperature, options.stop, options.tools_source) == (
        512,
        0.2,
        ("END",),
        "stored",
    )


def test_given_tools_replace_the_stored_and_a_given_choice_overrides_the_stored_one() -> None:
    stored = _stored((LOOKUP,), "auto")
    sent = sent_tools(stored, GivenTools((REFUND,), NamedToolChoice("refund")), _recorded())
    assert (sent.tools, sent.tool_choice, sent.source) == ((REFUND,), NamedToolChoice("refund"), "given")
    assert sent.tool_choice_json() == {"name": "refund"}
    only_choice = sent_tools(stored, GivenTools(tool_choice="none"), _recorded())
    assert (only_choice.tools, only_choice.tool_choice, only_choice.source) == ((LOOKUP,), "none", "stored")


def test_without_stored_tools_every_recorded_call_names_a_tool_and_the_note_says_they_were_inferred() -> None:
    sent = sent_tools(None, None, _recorded())
    assert sent.source == "inferred"
    assert [t.name for t in sent.tools] == ["search_flights", "book", "weather", "hotel"]
    assert sent.inferred_from == 4
    book = sent.tools[1].parameters
    assert book == {"type": "object", "properties": {"flight": {"type": "string"}, "seats": {"type": "integer"},
                                                      "extras": {"type": "object"}}}  # fmt: skip
    assert sent.note is not None and sent.note.startswith("tools inferred from 4 recorded calls")


def test_a_re_run_leaves_inference_to_the_body_builder() -> None:
    sent = sent_tools(None, None, None)
    assert (sent.tools, sent.source, sent.note) == ((), "none", None)


def test_infer_leaves_the_stored_tools_and_choice_aside_and_keeps_the_given_params() -> None:
    stored = _stored((LOOKUP,), "required", GenerationParams(max_tokens=512, temperature=0.2))
    sent = sent_tools(stored, GivenTools(params=GenerationParams(max_tokens=64), infer=True), _recorded())
    assert sent.source == "inferred" and sent.tool_choice is None
    assert [t.name for t in sent.tools] == ["search_flights", "book", "weather", "hotel"]
    assert (sent.params.max_tokens, sent.params.temperature) == (64, 0.2)
