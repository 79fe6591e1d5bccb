"""The agent transcript readers' rules on small hand-written transcripts: parts by kind (tool results and retries
never user turns), calls without ids paired by order and name, grader calls passed over, what has no place kept
aside, and each format told by its content."""

from __future__ import annotations

import io
import zipfile
from typing import Any

import orjson
import pytest

from core.formats.importing import read_foreign
from core.formats.registry import format_named, sniff
from tests.core.formats.summary import summary, tool_calls


def _import(format_name: str, document: Any) -> tuple[list[dict[str, Any]], list[str]]:
    data = document if isinstance(document, bytes) else orjson.dumps(document)
    records, foreign = read_foreign(format_named(format_name), io.BytesIO(data), "t.json")
    return [r.raw for r in records], [n.text for n in foreign.notes]


def _trace(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for m in messages for r in [m, *m.get("intermediate_trace", {}).get("records", [])]]


def _kept(messages: list[dict[str, Any]]) -> list[Any]:
    found = (r.get("additional_kwargs", {}).get("traceloupe_import", {}).get("unplaced") for r in _trace(messages))
    return [part for u in found if u for part in u.get("parts", [])]


def request(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"kind": "request", "parts": list(parts), **fields}


def response(*parts: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"kind": "response", "parts": list(parts), **fields}


def test_pydantic_ai_retries_thinking_and_provider_run_tools_each_go_where_they_belong() -> None:
    history = [
        request(
            {"part_kind": "system-prompt", "content": "be brief"},
            {
                "part_kind": "user-prompt",
                "content": [
                    "hi",
                    {"kind": "text-content", "content": "see"},
                    {"kind": "image-url", "url": "https://e.x/a.png"},
                    {"kind": "cache-point"},
                ],
            },
        ),
        response(
            {"part_kind": "thinking", "content": "a tool", "signature": "sig"},
            {"part_kind": "builtin-tool-call", "tool_name": "web_search", "args": {"q": "x"}, "tool_call_id": "b1"},
            {"part_kind": "tool-call", "tool_name": "add", "args": {"a": 1}, "tool_call_id": "c1"},
        ),
        request({"part_kind": "retry-prompt", "tool_name": "add", "tool_call_id": "c1", "content": "a must be b"}),
        response({"part_kind": "tool-call", "tool_name": "add", "args": '{"b": 1}', "tool_call_id": "c2"}),
        request({"part_kind": "tool-return", "tool_name": "add", "tool_call_id": "c2", "content": 2}),
        response({"part_kind": "text", "content": "two"}),
        request({"part_kind": "retry-prompt", "content": "answer in digits"}),
        response({"part_kind": "text", "content": "2"}),
    ]
    messages, _ = _import("pydantic-ai", history)
    assert [p.get("text") or p.get("url") for p in messages[1]["content"]] == ["hi", "see", "https://e.x/a.png"]
    assert summary(messages) == [
        *["system", "user:multipart", "  assistant:text+1calls", "  tool:c1", "  assistant:text+1calls", "  tool:c2"],
        *["  assistant:text", "user:text", "  assistant:text"],
    ]
    records = _trace(messages)
    assert records[3]["tool_reses"][0]["is_error"] and records[3]["tool_reses"][0]["result"] == "a must be b"
    assert records[2]["reasoning_content"] == [{"type": "thinking", "thinking": "a tool", "signature": "sig"}]
    assert tool_calls(messages)[0] == ("c1", "add", '{"a": 1}')  # an object's arguments as JSON text
    assert [p.get("part_kind") or p.get("kind") for p in _kept(messages)] == ["cache-point", "builtin-tool-call"]


def test_pydantic_ai_calls_without_ids_get_derived_ids_their_results_answer_by_name() -> None:
    history = [
        request({"part_kind": "user-prompt", "content": "add and mul"}),
        response(
            {"part_kind": "tool-call", "tool_name": "add", "args": "{}"},
            {"part_kind": "tool-call", "tool_name": "mul", "args": "{}"},
        ),
        request(
            {"part_kind": "tool-return", "tool_name": "mul", "content": "6"},
            {"part_kind": "tool-return", "tool_name": "add", "content": "5"},
        ),
        response({"part_kind": "text", "content": "5 and 6"}),
    ]
    first, _ = _import("pydantic-ai", history)
    again, _ = _import("pydantic-ai", history)
    assert first == again  # ids made from the source, the same on every import
    (add, _, _), (mul, _, _) = tool_calls(first)
    results = [
        (r["tool_reses"][0]["call_id"], r["tool_reses"][0]["result"]) for r in _trace(first) if r["role"] == "tool"
    ]
    assert results == [(mul, "6"), (add, "5")]
    assert add != mul and add and mul


def _eval_zip(samples: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("header.json", orjson.dumps({"version": 2, "eval": {"eval_id": "E", "task": "t"}}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", orjson.dumps(sample))
    return out.getvalue()


def _model_event(sent: list[dict[str, Any]], answer: dict[str, Any], span: str, at: str) -> dict[str, Any]:
    output = {"choices": [{"message": answer, "stop_reason": "stop"}]}
    return {"event": "model", "span_id": span, "timestamp": at, "model": "openai/gpt-4o", "input": sent,
            "tools": [], "config": {"temperature": 0.5}, "output": output}  # fmt: skip


def test_inspect_passes_over_a_graders_model_calls_and_reads_a_failed_tool_as_an_error_result() -> None:
    asked = [{"role": "user", "content": "list files"}]
    call = {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "function": "bash", "arguments": {}}]}
    failed = {"role": "tool", "tool_call_id": "t1", "function": "bash", "content": "", "error": {"message": "denied"}}
    done = {
        "role": "assistant",
        "content": [{"type": "reasoning", "reasoning": "no access"}, {"type": "text", "text": "no"}],
    }
    grader = [{"role": "user", "content": "grade: no"}]
    events = [
        {"event": "span_begin", "id": "s1", "type": "solver"},
        _model_event(asked, call, "s1", "2026-01-01T00:00:01+00:00"),
        _model_event([*asked, call, failed], done, "s1", "2026-01-01T00:00:02+00:00"),
        {"event": "span_begin", "id": "s2", "type": "scorers"},
        {"event": "span_begin", "id": "s3", "parent_id": "s2", "type": "scorer"},
        _model_event(grader, {"role": "assistant", "content": "C"}, "s3", "2026-01-01T00:00:03+00:00"),
    ]
    sample = {"id": 7, "epoch": 2, "messages": [*asked, call, failed, done], "events": events, "scores": {"m": 1}}
    messages, notes = _import("inspect", _eval_zip([sample]))
    assert summary(messages) == ["user:text", "  assistant:text+1calls", "  tool:t1", "  assistant:text"]
    assert {m["conversation_id"] for m in messages} == {"E:7:epoch2"}
    result = _trace(messages)[2]["tool_reses"][0]
    assert (result["result"], result["is_error"]) == ("denied", True)
    assert _trace(messages)[3]["reasoning_content"] == "no access"
    assert notes == ["kept under additional_kwargs.traceloupe_import.unplaced, no place in the stored format: "
                     "scores (1), stop_reason (2)"]  # fmt: skip


def test_inspect_without_model_events_reads_the_samples_messages() -> None:
    log = {
        "version": 1,
        "eval": {"run_id": "R", "task": "t"},
        "samples": [
            {
                "id": "a",
                "epoch": 1,
                "messages": [{"role": "user", "content": "2+2"}, {"role": "assistant", "content": "4"}],
            }
        ],
    }
    messages, _ = _import("inspect", log)
    assert summary(messages) == ["user:text", "  assistant:text"]
    assert messages[0]["conversation_id"] == "R:a:epoch1"


def test_vercel_ui_tool_states_give_results_errors_and_open_calls() -> None:
    ui = [
        {"id": "u1", "role": "user", "parts": [{"type": "text", "text": "go"}]},
        {
            "id": "a1",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "reasoning", "text": "three tools"},
                {
                    "type": "tool-read",
                    "toolCallId": "r",
                    "state": "output-error",
                    "rawInput": '{"path": ',
                    "errorText": "gone",
                },
                {
                    "type": "tool-rm",
                    "toolCallId": "d",
                    "state": "output-denied",
                    "input": {},
                    "approval": {"id": "x", "approved": False, "reason": "no"},
                },
                {
                    "type": "tool-web",
                    "toolCallId": "w",
                    "state": "output-available",
                    "providerExecuted": True,
                    "input": {},
                    "output": 1,
                },
                {"type": "source-url", "sourceId": "s", "url": "https://example.com"},
                {"type": "step-start"},
                {"type": "tool-ls", "toolCallId": "l", "state": "input-available", "input": {"dir": "/"}},
            ],
        },
    ]
    messages, _ = _import("vercel-ai", ui)
    assert summary(messages) == [
        "user:text",
        "  assistant:text+2calls",
        "  tool:r",
        "  tool:d",
        "  assistant:text+1calls",
    ]
    results = [(r["tool_reses"][0]["result"], r["tool_reses"][0]["is_error"]) for r in _trace(messages)[2:4]]
    assert results == [("gone", True), ("execution denied: no", True)]
    assert [p.get("type") or "approval" for p in _kept(messages)] == ["approval", "tool-web", "source-url"]
    assert tool_calls(messages)[0] == ("r", "read", '{"path": ')  # the input that failed to parse, as sent
    assert tool_calls(messages)[-1] == ("l", "ls", '{"dir": "/"}')  # no output yet: the call stays open


def test_vercel_model_messages_read_error_outputs_and_media() -> None:
    model = [
        {"role": "system", "content": "be brief"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "what is it"}, {"type": "image", "image": "https://e.x/a.png"}],
        },
        {"role": "assistant", "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "look", "input": {}}]},
        {
            "role": "tool",
            "content": [
                {
                    "type": "tool-result",
                    "toolCallId": "c",
                    "toolName": "look",
                    "output": {"type": "error-text", "value": "blurry"},
                }
            ],
        },
        {"role": "assistant", "content": "cannot tell"},
    ]
    messages, _ = _import("vercel-ai", model)
    assert summary(messages) == ["system", "user:multipart", "  assistant:text+1calls", "  tool:c", "  assistant:text"]
    assert messages[1]["content"][1] == {"type": "image", "url": "https://e.x/a.png"}
    result = _trace(messages)[3]["tool_reses"][0]
    assert (result["result"], result["is_error"]) == ("blurry", True)


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ([request({"part_kind": "user-prompt", "content": "hi"})], "pydantic-ai"),
        ({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}, "samples": []}, "inspect"),
        ([{"id": "1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}], "vercel-ai"),
        (
            [
                {
                    "role": "assistant",
                    "content": [{"type": "tool-call", "toolCallId": "c", "toolName": "t", "input": {}}],
                }
            ],
            "vercel-ai",
        ),
        ([{"role": "user", "msg_type": "text", "content": "hi", "msg_id": "m"}], "traceloupe"),
    ],
)
def test_each_transcript_format_is_told_by_its_content(document: Any, expected: str) -> None:
    assert sniff(orjson.dumps(document, option=orjson.OPT_INDENT_2), "any.name").name == expected


def test_an_eval_zip_is_told_by_its_content() -> None:
    assert sniff(_eval_zip([{"id": 1, "epoch": 1, "messages": []}])[:4096], "log.bin").name == "inspect"
