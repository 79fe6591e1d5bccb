"""Each dialect's stream fold is the inverse of streaming: a whole answer streamed the way its API streams it,
split at arbitrary points, folds back into an answer that reads as the same messages."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import InputError
from core.providers.base import JSON
from core.providers.registry import provider_named

TEXT = st.text(alphabet="abcxyz é,.!\n{}\"'", max_size=30)
NAMES = st.sampled_from(["lookup", "get_weather", "search"])
ARGUMENTS = st.dictionaries(st.sampled_from(["city", "n", "q"]), st.integers(-5, 5) | TEXT, max_size=3)


class Answer:
    """What an answer says, drawn: text, thinking, tool calls (name, arguments)."""

    def __init__(self, text: str, thinking: str, calls: list[tuple[str, dict[str, Any]]]) -> None:
        self.text = text
        self.thinking = thinking
        self.calls = calls


ANSWERS = st.builds(Answer, TEXT, TEXT, st.lists(st.tuples(NAMES, ARGUMENTS), max_size=3))
Split = Callable[[str], list[str]]


@st.composite
def splitters(draw: st.DrawFn) -> Split:
    """A way to cut each text into pieces at drawn points (the same draw serves every text of an answer)."""
    seeds = draw(st.lists(st.integers(1, 7), min_size=1, max_size=6))

    def split(text: str) -> list[str]:
        out, i, k = [], 0, 0
        while i < len(text):
            step = seeds[k % len(seeds)]
            out.append(text[i : i + step])
            i, k = i + step, k + 1
        return out or [""]

    return split


def _args(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, ensure_ascii=False)


# --- Chat Completions ---------------------------------------------------------------------------------------


def chat_whole(a: Answer) -> JSON:
    message: JSON = {"role": "assistant", "content": a.text or None}
    if a.thinking:
        message["reasoning_content"] = a.thinking
    if a.calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": _args(x)}}
            for i, (n, x) in enumerate(a.calls)
        ]
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls" if a.calls else "stop"}
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1", "choices": [choice]}


def chat_events(a: Answer, split: Split) -> list[JSON | str]:
    def chunk(delta: JSON, finish: str | None = None) -> JSON:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [choice]}

    out: list[JSON | str] = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"reasoning_content": p}) for p in split(a.thinking)] if a.thinking else []
    out += [chunk({"content": p}) for p in split(a.text)] if a.text else []
    for i, (name, arguments) in enumerate(a.calls):
        first, *rest = split(_args(arguments))
        call = {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": first}}
        out.append(chunk({"tool_calls": [call]}))
        out += [chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]}) for p in rest]
    out.append(chunk({}, "tool_calls" if a.calls else "stop"))
    out.append({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [], "usage": {"total_tokens": 9}})
    return [*out, "[DONE]"]


# --- Anthropic Messages -------------------------------------------------------------------------------------


def anthropic_blocks(a: Answer) -> list[JSON]:
    blocks: list[JSON] = []
    if a.thinking:
        blocks.append({"type": "thinking", "thinking": a.thinking, "signature": "sig=="})
    if a.text:
        blocks.append({"type": "text", "text": a.text})
    blocks += [{"type": "tool_use", "id": f"toolu_{i}", "name": n, "input": x} for i, (n, x) in enumerate(a.calls)]
    return blocks


def anthropic_whole(a: Answer) -> JSON:
    content = anthropic_blocks(a)
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content}


def anthropic_events(a: Answer, split: Split) -> list[JSON | str]:
    start = dict(anthropic_whole(a), content=[], stop_reason=None, usage={"input_tokens": 3, "output_tokens": 1})
    out: list[JSON | str] = [{"type": "message_start", "message": start}, {"type": "ping"}]
    for i, block in enumerate(anthropic_blocks(a)):
        if block["type"] == "thinking":
            opened: JSON = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": p} for p in split(block["thinking"])]
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        elif block["type"] == "text":
            opened = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": p} for p in split(block["text"])]
        else:
            opened = dict(block, input={})
            deltas = [{"type": "input_json_delta", "partial_json": p} for p in split(_args(block["input"]))]
        out.append({"type": "content_block_start", "index": i, "content_block": opened})
        out += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        out.append({"type": "content_block_stop", "index": i})
    out.append({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}})
    return [*out, {"type": "message_stop"}]


# --- OpenAI Responses ---------------------------------------------------------------------------------------


def responses_items(a: Answer) -> list[JSON]:
    items: list[JSON] = []
    if a.thinking:
        items.append({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": a.thinking}]})
    if a.text:
        part = {"type": "output_text", "text": a.text, "annotations": []}
        items.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [part]})
    items += [
        {"type": "function_call", "id": f"fc_{i}", "call_id": f"call_{i}", "name": n, "arguments": _args(x)}
        for i, (n, x) in enumerate(a.calls)
    ]
    return items


def responses_whole(a: Answer) -> JSON:
    output = responses_items(a)
    return {"id": "resp_1", "object": "response", "model": "gpt-4.1", "status": "completed", "output": output}


def responses_events(a: Answer, split: Split, whole_items: bool, bare_final: bool) -> list[JSON | str]:
    """``whole_items``: each item finishes with output_item.done; ``bare_final``: response.completed carries no
    output (the fold rebuilds it from the events)."""
    empty = dict(responses_whole(a), status="in_progress", output=[])
    out: list[JSON | str] = [{"type": "response.created", "response": empty}]
    for i, item in enumerate(responses_items(a)):
        if item["type"] == "reasoning":
            opened: JSON = dict(item, summary=[])
            deltas = [("response.reasoning_summary_text.delta", {"summary_index": 0}, p) for p in split(a.thinking)]
        elif item["type"] == "message":
            opened = dict(item, content=[], status="in_progress")
            deltas = [("response.output_text.delta", {"content_index": 0}, p) for p in split(a.text)]
        else:
            opened = dict(item, arguments="")
            deltas = [("response.function_call_arguments.delta", {}, p) for p in split(item["arguments"])]
        out.append({"type": "response.output_item.added", "output_index": i, "item": opened})
        out += [{"type": kind, "output_index": i, **where, "delta": p} for kind, where, p in deltas]
        if whole_items:
            out.append({"type": "response.output_item.done", "output_index": i, "item": item})
    final = dict(responses_whole(a), output=[]) if bare_final else responses_whole(a)
    return [*out, {"type": "response.completed", "response": final}]


# --- Gemini -------------------------------------------------------------------------------------------------


def gemini_whole(a: Answer) -> JSON:
    parts: list[JSON] = []
    if a.thinking:
        parts.append({"text": a.thinking, "thought": True})
    if a.text:
        parts.append({"text": a.text})
    parts += [{"functionCall": {"name": n, "args": x}} for n, x in a.calls]
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "usageMetadata": {"totalTokenCount": 9}}


def gemini_events(a: Answer, split: Split) -> list[JSON | str]:
    def chunk(part: JSON | None, finish: str | None = None) -> JSON:
        candidate: JSON = {"content": {"role": "model", "parts": [part] if part else []}, "index": 0}
        if finish:
            candidate["finishReason"] = finish
        return {"candidates": [candidate], "modelVersion": "gemini-2.5-flash", "usageMetadata": {"totalTokenCount": 9}}

    out: list[JSON | str] = [chunk({"text": p, "thought": True}) for p in split(a.thinking)] if a.thinking else []
    out += [chunk({"text": p}) for p in split(a.text)] if a.text else []
    out += [chunk({"functionCall": {"name": n, "args": x}}) for n, x in a.calls]
    return [*out, chunk(None, "STOP")]


def _same_messages(provider: str, whole: JSON, events: list[JSON | str]) -> None:
    dialect = provider_named(provider)
    assert dialect.read_response(dialect.fold_stream(events)).messages == dialect.read_response(whole).messages


@settings(max_examples=40, deadline=None)
@given(ANSWERS, splitters())
def test_chat_chunks_fold_into_the_answer_they_split(answer: Answer, split: Split) -> None:
    _same_messages("openai", chat_whole(answer), chat_events(answer, split))


@settings(max_examples=40, deadline=None)
@given(ANSWERS, splitters())
def test_anthropic_events_fold_into_the_message_they_split(answer: Answer, split: Split) -> None:
    _same_messages("anthropic", anthropic_whole(answer), anthropic_events(answer, split))


@settings(max_examples=40, deadline=None)
@given(ANSWERS, splitters(), st.booleans(), st.booleans())
def test_responses_events_fold_into_the_response_they_split(
    answer: Answer, split: Split, whole_items: bool, bare_final: bool
) -> None:
    events = responses_events(answer, split, whole_items, bare_final)
    _same_messages("openai-responses", responses_whole(answer), events)


@settings(max_examples=40, deadline=None)
@given(ANSWERS, splitters())
def test_gemini_chunks_fold_into_the_response_they_split(answer: Answer, split: Split) -> None:
    _same_messages("gemini", gemini_whole(answer), gemini_events(answer, split))


EXAMPLE = Answer("Paris.", "think", [("lookup", {"city": "Paris"})])
STREAMS: dict[str, list[JSON | str]] = {
    "openai": chat_events(EXAMPLE, lambda t: [t]),
    "anthropic": anthropic_events(EXAMPLE, lambda t: [t]),
    "openai-responses": responses_events(EXAMPLE, lambda t: [t], True, False),
    "gemini": gemini_events(EXAMPLE, lambda t: [t]),
}


@pytest.mark.parametrize("provider", sorted(STREAMS))
def test_a_stream_cut_short_is_refused_naming_its_last_event(provider: str) -> None:
    events = STREAMS[provider][:-1]
    with pytest.raises(InputError) as caught:
        provider_named(provider).fold_stream(events)
    assert caught.value.path == f"events[{len(events) - 1}]"
    assert "truncated" in caught.value.reason


@pytest.mark.parametrize("provider", sorted(STREAMS))
def test_an_event_that_is_not_json_is_refused_naming_it(provider: str) -> None:
    events = list(STREAMS[provider])
    events[1] = '{"choices": [{"delta": '
    with pytest.raises(InputError) as caught:
        provider_named(provider).fold_stream(events)
    assert caught.value.path == "events[1]" and "not JSON" in caught.value.reason


def test_a_chat_event_after_done_is_refused() -> None:
    events = [*STREAMS["openai"], STREAMS["openai"][0]]
    with pytest.raises(InputError) as caught:
        provider_named("openai").fold_stream(events)
    assert caught.value.path == f"events[{len(events) - 1}]"


def test_an_anthropic_tool_input_whose_streamed_json_does_not_parse_is_refused() -> None:
    def cut(event: JSON | str) -> JSON | str:
        if isinstance(event, dict) and "partial_json" in event.get("delta", {}):
            return dict(event, delta={"type": "input_json_delta", "partial_json": '{"city": "Par'})
        return event

    with pytest.raises(InputError, match="does not parse"):
        provider_named("anthropic").fold_stream([cut(e) for e in STREAMS["anthropic"]])


def test_an_error_event_is_refused_not_read_as_an_answer() -> None:
    events = [STREAMS["anthropic"][0], {"type": "error", "error": {"type": "overloaded_error"}}]
    with pytest.raises(InputError, match="overloaded_error"):
        provider_named("anthropic").fold_stream(events)
