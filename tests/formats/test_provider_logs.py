"""Provider logs (JSONL pairs, VCR cassettes) read into model-call events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import InputError
from core.formats.events import ConversationKey
from core.formats.provider_logs import read_cassette, read_pairs, sniff_cassette, sniff_pairs
from core.llm.messages import LLMAssistantMessage, LLMToolMessage, LLMUserMessage

CORPUS = Path(__file__).parent / "data" / "provider_logs"
CASSETTE = CORPUS / "anthropic" / "test_anthropic_tool_with_thinking.yaml"


def _pairs(tmp_path: Path) -> Path:
    """The cassette's exchanges rewritten as a JSONL of request/response pairs."""
    lines = [json.dumps({"request": c.recorded_body, "response": {"type": "message", "content": []}})
             for c in read_cassette(CASSETTE)]  # fmt: skip
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_cassette_gives_one_model_call_per_interaction_with_its_source_and_recorded_body() -> None:
    calls = list(read_cassette(CASSETTE))
    assert [c.source.source_id for c in calls] == ["interactions[0]", "interactions[1]"]
    second = calls[1]
    assert second.key == ConversationKey()  # nothing keys it: the assembler merges by prefix
    assert second.input is not None and [type(m) for m in second.input] == [
        LLMUserMessage,
        LLMAssistantMessage,
        LLMToolMessage,
    ]
    assert second.recorded_body is not None and second.recorded_body["max_tokens"] == 4096
    assert second.request is not None and second.request.provider == "anthropic"
    assert second.extra["request"] == {"stream": False}
    assert second.extra["url"] == "https://api.anthropic.com/v1/messages?beta=true"


def test_a_jsonl_of_pairs_reads_like_the_cassette_it_came_from(tmp_path: Path) -> None:
    path = _pairs(tmp_path)
    calls = list(read_pairs(path))
    assert [c.source.line for c in calls] == [1, 2]
    assert [c.input for c in calls] == [c.input for c in read_cassette(CASSETTE)]
    assert all(c.request is not None and c.request.provider == "anthropic" for c in calls)


def test_each_shape_is_sniffed_by_its_content(tmp_path: Path) -> None:
    pairs = _pairs(tmp_path).read_bytes()
    cassette = CASSETTE.read_bytes()
    assert sniff_pairs(pairs) and not sniff_cassette(pairs)
    assert sniff_cassette(cassette) and not sniff_pairs(cassette)
    assert sniff_cassette(json.dumps({"interactions": [{"request": {}}]}).encode())
    assert sniff_cassette(b"version: 1\ninteractions:\n- request:\n    body: null\n")  # VCR.py writes version first


def test_a_bad_line_is_refused_naming_the_file_the_line_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    good = {"request": {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}}
    bad = {"request": {"model": "gpt-4.1", "messages": [{"role": "narrator", "content": "hi"}]}}
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError) as caught:
        list(read_pairs(path))
    assert (caught.value.line, caught.value.path) == (2, "request.messages[0].role")


def test_a_python_object_tag_is_read_as_the_data_under_it_never_built(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    marker = tmp_path / "built"
    path.write_text(
        "interactions:\n- request:\n    headers:\n"
        f"      !!python/object/apply:pathlib.Path.touch [{str(marker)!r}]: [x]\n"
        "    uri: https://api.openai.com/v1/chat/completions\n"
        '    body: \'{"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}\'\n'
        "  response:\n    status: {code: 200}\n    body: {string: '{\"choices\": []}'}\n"
    )
    (call,) = read_cassette(path)
    assert call.input is not None and not marker.exists()


def test_a_request_the_provider_refused_is_not_a_model_call(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    path.write_text(
        "interactions:\n- request:\n    uri: https://api.anthropic.com/v1/messages\n"
        '    body: \'{"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": ["hi"]}\'\n'
        "  response:\n    status: {code: 400}\n    body: {string: '{}'}\n"
    )
    assert list(read_cassette(path)) == []


def test_an_answer_that_is_neither_json_nor_a_stream_is_not_captured_rather_than_empty(tmp_path: Path) -> None:
    path = tmp_path / "cassette.yaml"
    path.write_text(
        "interactions:\n- request:\n    uri: https://api.openai.com/v1/chat/completions\n"
        '    body: \'{"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}\'\n'
        "  response:\n    status: {code: 200}\n    body: {string: '<html>bad gateway</html>'}\n"
    )
    (call,) = read_cassette(path)
    assert call.output is None and call.input is not None


def test_a_cassette_passing_history_between_providers_reads_each_exchange_by_its_own_dialect() -> None:
    from core.providers.registry import provider_named

    mixed = CORPUS / "anthropic" / "test_anthropic_server_tool_pass_history_to_another_provider.yaml"
    calls = list(read_cassette(mixed, provider_named("anthropic")))
    assert [c.request.provider for c in calls if c.request is not None] == ["anthropic", "openai-responses"]


def test_a_json_cassette_reads_like_the_yaml_one(tmp_path: Path) -> None:
    import yaml  # type: ignore[import-untyped]

    path = tmp_path / "cassette.json"
    path.write_text(json.dumps(yaml.safe_load(CASSETTE.read_text())))
    assert sniff_cassette(path.read_bytes())
    assert [c.input for c in read_cassette(path)] == [c.input for c in read_cassette(CASSETTE)]


def test_a_request_alone_is_claimed_by_its_shape() -> None:
    from core.formats.provider_logs import dialect_of

    chat = {
        "model": "gpt-4.1",
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
    }
    anthropic = {"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}
    gemini = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
    responses = {"model": "gpt-4.1", "input": "hi"}
    names = [getattr(dialect_of(None, body, None), "name", None) for body in (chat, anthropic, gemini, responses)]
    assert names == ["openai", "anthropic", "gemini", "openai-responses"]
