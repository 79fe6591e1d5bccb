"""Cassette bodies VCR recorded gzip-compressed (``Content-Encoding: gzip``) read as the answer they hold."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path

import pytest
import yaml  # type: ignore[import-untyped]

from core.errors import InputError
from core.formats import provider_logs
from core.formats.provider_logs import read_cassette
from core.llm.messages import LLMAssistantMessage

CORPUS = Path(__file__).parent / "data" / "provider_logs"
# dd-trace-py recorded this streamed answer as gzip bytes (``!!binary``), as the SDK received it.
GZIPPED = CORPUS / "anthropic" / "ddtrace_anthropic_completion_beta_tools_stream.yaml"


def test_a_gzip_recorded_streamed_answer_reads_as_its_messages() -> None:
    (call,) = read_cassette(GZIPPED)
    assert call.output is not None
    (message,) = call.output
    assert isinstance(message, LLMAssistantMessage)
    assert message.content.startswith("Let me search for a weather tool")
    (tool_call,) = message.tool_calls
    assert (tool_call.id, tool_call.name) == ("toolu_01SHf2kbTahK9zYYPDyvNp5r", "get_weather")
    assert json.loads(tool_call.arguments) == {"location": "San Francisco, CA"}
    assert call.extra["response"]["stop_reason"] == "tool_use"


def _cassette(tmp_path: Path, body: object, headers: dict[str, list[str]]) -> Path:
    request = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
    interaction = {
        "request": {"uri": "https://api.openai.com/v1/chat/completions", "body": json.dumps(request)},
        "response": {"status": {"code": 200}, "headers": headers, "body": {"string": body}},
    }
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump({"interactions": [interaction]}))
    return path


ANSWER = {"object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "hello"}}]}


def test_base64_text_of_a_gzip_body_under_content_encoding_gzip_is_read(tmp_path: Path) -> None:
    packed = base64.b64encode(gzip.compress(json.dumps(ANSWER).encode())).decode()
    (call,) = read_cassette(_cassette(tmp_path, packed, {"Content-Encoding": ["gzip"]}))
    assert [m.content for m in call.output or ()] == ["hello"]


def test_a_body_that_would_expand_past_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(provider_logs, "DECOMPRESSED_LIMIT", 1024)
    big = dict(ANSWER, padding="x" * 4096)
    path = _cassette(tmp_path, gzip.compress(json.dumps(big).encode()), {"content-encoding": ["gzip"]})
    with pytest.raises(InputError) as caught:
        list(read_cassette(path))
    assert caught.value.path == "interactions[0]" and "expands past" in caught.value.reason


def test_a_corrupt_gzip_body_is_refused_naming_the_interaction(tmp_path: Path) -> None:
    packed = gzip.compress(json.dumps(ANSWER).encode())[:20]
    with pytest.raises(InputError) as caught:
        list(read_cassette(_cassette(tmp_path, packed, {"Content-Encoding": ["gzip"]})))
    assert caught.value.path == "interactions[0]"
