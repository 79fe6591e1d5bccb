"""Streamed answers in provider logs (recorded ``stream: true`` calls) read as the messages the stream says."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from core.errors import InputError
from core.formats.events import ModelCall
from core.formats.provider_logs import calls_of, read_cassette, read_pairs
from core.formats.roundtrip import verify
from core.formats.streamed import sse_events
from core.llm.messages import LLMAssistantMessage, LLMThinking

CORPUS = Path(__file__).parent / "data" / "provider_logs"


def _answer(folder: str, name: str, index: int = 0) -> tuple[LLMAssistantMessage, ModelCall]:
    calls = list(read_cassette(CORPUS / folder / name))
    call = calls[index]
    assert call.output is not None
    (message,) = call.output
    assert isinstance(message, LLMAssistantMessage)
    return message, call


def _streamed(call: ModelCall) -> bool:
    asked = bool((call.extra.get("request") or {}).get("stream"))
    return asked or "streamGenerateContent" in str(call.extra.get("url"))


def test_every_streamed_answer_of_the_corpus_is_read() -> None:
    streamed = [
        (path, call) for path in sorted(CORPUS.glob("*/*.yaml")) for call in calls_of([path]) if _streamed(call)
    ]
    per_api: dict[str, int] = {}
    for _, call in streamed:
        assert call.request is not None
        per_api[call.request.provider or ""] = per_api.get(call.request.provider or "", 0) + 1
    failed = [c for _, c in streamed if "stream_error" in (c.extra.get("response") or {})]
    assert [f"{p.name} {c.source.source_id}" for p, c in streamed if c.output is None and c not in failed] == []
    assert len(failed) == 2  # Groq's and OpenRouter's calls that failed mid-stream
    assert all(per_api.get(api, 0) >= 2 for api in ("openai", "openai-responses", "anthropic", "gemini"))


def test_chat_tool_call_arguments_streamed_in_fragments_are_whole() -> None:
    message, call = _answer("openai_chat", "ddtrace_chat_completion_tool_call_streamed.yaml")
    (tool_call,) = message.tool_calls
    assert (tool_call.id, tool_call.name) == ("call_FJStsEjxdODw9tBmQRRkm6vY", "extract_student_info")
    assert json.loads(tool_call.arguments) == {
        "name": "David Nguyen",
        "major": "computer science",
        "school": "Stanford University",
        "grades": 3.8,
        "clubs": ["Chess Club", "South Asian Student Association"],
    }
    assert call.extra["response"]["finish_reason"] == "tool_calls"
    assert call.extra["response"]["usage"]["total_tokens"] == 209  # the last chunk's usage


def test_chat_choices_of_a_stream_are_kept_apart_by_index() -> None:
    message, call = _answer("openai_chat", "ddtrace_completion_stream_multiple_choices_with_tools.yaml")
    assert [c.name for c in message.tool_calls] == ["get_current_weather"]
    (second,) = call.extra["response"]["choices"]
    assert second["index"] == 1 and second["message"]["tool_calls"][0]["function"]["arguments"].startswith("{")


def test_chat_reasoning_content_deltas_are_the_thinking() -> None:
    message, _ = _answer("zhipu_chat", "test_zai_thinking_stream.yaml")
    assert message.content == "4"
    assert isinstance(message.reasoning_content, str) and "2 + 2" in message.reasoning_content


def test_a_streamed_chat_run_reads_its_call_then_its_answer() -> None:
    call_message, _ = _answer("openai_chat", "test_run_stream_sync_streams_real_model.yaml")
    (tool_call,) = call_message.tool_calls
    assert (tool_call.name, json.loads(tool_call.arguments)) == ("get_capital", {"country": "UK"})
    answer, _ = _answer("openai_chat", "test_run_stream_sync_streams_real_model.yaml", 1)
    assert answer.content == "The capital of the UK is London." and answer.tool_calls == ()


def test_anthropic_text_and_tool_input_json_deltas_make_the_message() -> None:
    message, call = _answer("anthropic", "ddtrace_anthropic_completion_tools_stream.yaml")
    assert message.content.startswith("<thinking>\nThe get_weather tool") and message.content.endswith("</thinking>")
    (tool_call,) = message.tool_calls
    assert (tool_call.id, tool_call.name) == ("toolu_01DYJo37oETVsCdLTTcCWcdq", "get_weather")
    assert json.loads(tool_call.arguments) == {"location": "San Francisco, CA"}
    assert call.extra["response"]["stop_reason"] == "tool_use"
    assert call.extra["response"]["usage"]["output_tokens"] == 135  # message_delta's usage


def test_anthropic_thinking_and_signature_deltas_make_a_signed_thinking_block() -> None:
    message, _ = _answer("anthropic", "ddtrace_anthropic_completion_stream_thinking.yaml")
    assert message.reasoning_content == (LLMThinking("Let me think about the best selling book.", "sig_abc123"),)
    assert message.content == "The best-selling book of all time is Don Quixote."


def test_anthropic_streamed_thinking_keeps_its_text_and_signature() -> None:
    message, _ = _answer("anthropic", "test_anthropic_model_thinking_part_stream.yaml")
    (thinking,) = message.reasoning_content or ()
    assert isinstance(thinking, LLMThinking) and thinking.thinking.startswith("This is a straightforward question")
    assert thinking.signature and message.content.startswith("Here are the basic steps for safely crossing")


def test_responses_stream_takes_the_completed_response() -> None:
    message, call = _answer("openai_responses", "ddtrace_response_function_call_streamed.yaml")
    (tool_call,) = message.tool_calls
    assert tool_call.name == "get_current_weather"
    assert json.loads(tool_call.arguments) == {"location": "Boston, MA", "unit": "celsius"}
    assert call.extra["response"]["status"] == "completed"


def test_responses_stream_ending_incomplete_keeps_its_text_and_status() -> None:
    message, call = _answer("openai_responses", "ddtrace_response_stream_incomplete.yaml")
    assert message.content.startswith("In the bustling city of Detroit")
    assert call.extra["response"]["status"] == "incomplete"


def test_gemini_sse_chunks_join_into_one_text() -> None:
    message, call = _answer("gemini", "test_google_model_stream.yaml")
    assert message.content == "The capital of France is Paris.\n"
    assert call.extra["response"]["finishReason"] == "STOP"
    assert call.extra["response"]["usageMetadata"]["totalTokenCount"] == 21  # the last chunk's usage


def test_gemini_streamed_thoughts_are_one_reasoning_text_as_the_stream_says() -> None:
    path = CORPUS / "gemini" / "test_google_model_thinking_part_iter.yaml"
    body = yaml.safe_load(path.read_text())["interactions"][0]["response"]["body"]["string"]
    parts = [p for e in sse_events(body) for p in json.loads(e.data)["candidates"][0]["content"]["parts"]]
    message, _ = _answer("gemini", path.name)
    assert message.reasoning_content == "".join(p["text"] for p in parts if p.get("thought"))
    assert message.content == "".join(p["text"] for p in parts if not p.get("thought"))


def test_gemini_streamed_call_keeps_its_thought_signature() -> None:
    message, _ = _answer("gemini", "test_google_streaming_tool_call_thought_signature.yaml")
    (tool_call,) = message.tool_calls
    assert tool_call.name == "get_country" and tool_call.arguments == "{}"
    assert tool_call.extra is not None and tool_call.extra["thought_signature"].startswith("EpwICpkI")
    answer, _ = _answer("gemini", "test_google_streaming_tool_call_thought_signature.yaml", 1)
    assert answer.content == "The capital of Mexico is Mexico City."


def test_a_call_whose_stream_reports_an_error_is_not_captured_and_keeps_the_error() -> None:
    calls = list(read_cassette(CORPUS / "openai_chat" / "test_tool_use_failed_error_streaming.yaml"))
    assert calls[0].output is None
    assert calls[0].extra["response"]["stream_error"]["code"] == "tool_use_failed"
    assert "line 190 of the streamed answer" in calls[0].extra["response"]["stream_error_at"]
    assert calls[0].input is not None  # the request is still a model call: its input is stored
    retried, _ = _answer("openai_chat", "test_tool_use_failed_error_streaming.yaml", 1)
    assert [c.name for c in retried.tool_calls] == ["get_something_by_name"]
    (failed,) = read_cassette(CORPUS / "openai_chat" / "test_openrouter_stream_error.yaml")
    assert failed.output is None and failed.extra["response"]["stream_error"]["message"] == "Token limit reached"


def test_responses_stream_with_a_trailing_done_reads_its_answer() -> None:
    message, call = _answer("openai_responses", "test_openai_responses_raw_cot_stream_openrouter.yaml")
    assert message.content == "4" and call.extra["response"]["status"] == "completed"
    # OpenRouter streams the model's raw reasoning as reasoning_text: it is the answer's reasoning.
    assert (
        message.reasoning_content
        == 'The user asks: "What is 2+2?" They expect a straightforward answer: 4. Just answer 4.'
    )


def test_anthropic_compaction_deltas_are_folded_into_their_block() -> None:
    message, call = _answer("anthropic", "test_anthropic_compaction_usage_with_cache_streaming.yaml")
    assert message.content == "Hello! 👋"
    (block,) = call.extra["response"]["content"].values()
    assert block["type"] == "compaction" and block["content"]


# --- malformed streams ---------------------------------------------------------------------------------------

STREAM = CORPUS / "openai_chat" / "ddtrace_chat_completion_tool_call_streamed.yaml"


def _with_body(tmp_path: Path, edit: object) -> Path:
    """The streamed cassette with its answer's event-stream text changed by ``edit``."""
    data = yaml.safe_load(STREAM.read_text())
    response = data["interactions"][0]["response"]
    response["content"] = edit(response["content"])  # type: ignore[operator]
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def _refusal(path: Path) -> InputError:
    with pytest.raises(InputError) as caught:
        list(read_cassette(path))
    return caught.value


def test_a_stream_without_done_is_refused_naming_the_file_and_line(tmp_path: Path) -> None:
    path = _with_body(tmp_path, lambda text: text.replace("data: [DONE]", ""))
    error = _refusal(path)
    assert error.source == str(path) and error.path is not None and error.path.startswith("interactions[0].response")
    last = list(sse_events(yaml.safe_load(path.read_text())["interactions"][0]["response"]["content"]))[-1]
    assert f"line {last.line} of the streamed answer" in error.reason and "truncated" in error.reason


def test_a_stream_cut_mid_event_is_refused_at_the_bad_line(tmp_path: Path) -> None:
    path = _with_body(tmp_path, lambda text: text[: text.index("data:", 2000) + 40])
    error = _refusal(path)
    assert "truncated" in error.reason and "line " in error.reason


def test_a_bad_json_line_is_refused_with_its_line(tmp_path: Path) -> None:
    def corrupt(text: str) -> str:
        lines = text.split("\n")
        lines[6] = 'data: {"id": oops'
        return "\n".join(lines)

    error = _refusal(_with_body(tmp_path, corrupt))
    assert "line 7 of the streamed answer" in error.reason and "not JSON" in error.reason
    assert error.path is not None and error.path.startswith("interactions[0].response.events[")


def test_a_jsonl_pair_may_hold_a_streamed_answer_as_text_or_as_chunks(tmp_path: Path) -> None:
    request = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    chunk = {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hello"}}]}
    sse = f"data: {json.dumps(chunk)}\r\n\r\ndata: [DONE]\r\n\r\n"
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "hel"}]}}]},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "lo"}]}, "finishReason": "STOP"}]},
    ]
    url = "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent"
    lines = [{"request": request, "response": sse}, {"url": url, "request": gemini, "response": chunks}]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    outputs = [call.output for call in read_pairs(path)]
    assert [[m.content for m in out or ()] for out in outputs] == [["hello"], ["hello"]]
    path.write_text(json.dumps({"request": request, "response": sse.replace("data: [DONE]", "")}) + "\n")
    with pytest.raises(InputError) as caught:
        list(read_pairs(path))
    assert caught.value.line == 1 and "truncated" in caught.value.reason


def test_event_stream_lines_follow_the_sse_rules() -> None:
    text = ': comment\r\nevent: message_start\r\ndata: {"a":\r\ndata: 1}\r\n\r\nid: 3\ndata:[DONE]\n'
    assert [(e.line, e.data) for e in sse_events(text)] == [(3, '{"a":\n1}'), (7, "[DONE]")]


def test_the_round_trip_names_the_streaming_switch_and_its_options() -> None:
    cassette = CORPUS / "openai_chat" / "test_run_stream_sync_streams_real_model.yaml"
    differences = [d for _, trip in verify(calls_of([cassette])) for d in trip.differences]
    named = {d.path: d.normalisation.name if d.normalisation else None for d in differences}
    assert named["/stream"] == named["/stream_options/include_usage"] == "streamed call"
