"""The provider-log round trip over the recorded corpus: every difference is a documented normalisation."""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pytest

from core.formats.provider_logs import calls_of
from core.formats.roundtrip import documented, print_differences, round_trip, verify
from core.llm.messages import LLMImagePart, LLMUserMessage
from core.providers.registry import provider_named

CORPUS = Path(__file__).parent / "data" / "provider_logs"
CASSETTES = sorted(CORPUS.glob("*/*.yaml"))


@pytest.mark.parametrize("cassette", CASSETTES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_every_recorded_request_rebuilds_modulo_documented_normalisations(cassette: Path) -> None:
    trips = list(verify(calls_of([cassette])))
    assert trips
    bugs = [f"{call.source.source_id} {d.explain()}" for call, trip in trips for d in trip.bugs]
    assert bugs == []


def test_the_corpus_holds_over_fifty_requests_across_the_four_apis() -> None:
    per_api = Counter(call.request.provider for call in calls_of(CASSETTES) if call.request is not None)
    assert sum(per_api.values()) >= 50
    assert {"openai", "openai-responses", "anthropic", "gemini", "zhipu"} <= set(per_api)
    assert min(per_api[name] for name in ("openai", "openai-responses", "anthropic", "gemini")) >= 10


def test_a_difference_no_normalisation_explains_is_reported_as_a_bug() -> None:
    dialect = provider_named("anthropic")
    recorded = {
        "model": "claude-3-5-haiku-latest",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "top_k": 5,
    }
    trip = round_trip(dialect, recorded)
    assert trip.bugs == ()
    assert [d.path for d in trip.differences] == ["/top_k"]  # unmodelled, kept in the call's extra
    block = {"type": "text", "text": "hi", "citations": None}  # a key of no neutral place, no normalisation
    unexplained = dict(recorded, messages=[{"role": "user", "content": [block]}])
    assert [d.path for d in round_trip(dialect, unexplained).bugs] == ["/messages/0/content/0/citations"]


def test_the_verify_printer_names_the_file_the_interaction_and_the_path() -> None:
    out = io.StringIO()
    cassette = CORPUS / "gemini" / "test_google_tool_output.yaml"
    assert print_differences(calls_of([cassette]), out, every=True) == 0
    text = out.getvalue()
    assert "test_google_tool_output.yaml interactions[1] (gemini)" in text
    assert "normalisation: dummy thought signature" in text


def test_an_image_detail_level_is_kept_not_read_as_the_parts_description() -> None:
    dialect = provider_named("openai")
    image = {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high"}}
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": [{"type": "text", "text": "see"}, image]}]}
    read = dialect.read_request(body)
    message = read.messages[0]
    assert isinstance(message, LLMUserMessage) and isinstance(message.content[1], LLMImagePart)
    assert message.content[1].detail is None  # the neutral detail is a description, not OpenAI's level
    assert read.extra["unread_fields"] == {"messages[0].content[1].image_url.detail": "high"}
    (difference,) = round_trip(dialect, body).differences
    assert (difference.path, difference.normalisation and difference.normalisation.name) == (
        "/messages/0/content/1/image_url/detail",
        "unmodelled field",
    )


def test_a_responses_image_detail_level_is_a_documented_normalisation() -> None:
    image = {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "high"}
    body = {"model": "gpt-4.1", "input": [{"role": "user", "content": [{"type": "input_text", "text": "see"}, image]}]}
    (difference,) = round_trip(provider_named("openai-responses"), body).differences
    assert difference.path == "/input/0/content/1/detail"
    assert difference.normalisation is not None and difference.normalisation.name == "image detail level"


# Exercised by the tests above rather than by a recording of the corpus.
UNIT_TESTED = {"image detail level"}


def test_every_documented_normalisation_explains_a_recorded_difference() -> None:
    used = {id(d.normalisation) for _, trip in verify(calls_of(CASSETTES)) for d in trip.differences}
    unused = [f"{owner}: {rule.name}" for owner, rule in documented() if id(rule) not in used]
    assert [u for u in unused if u.split(": ", 1)[1] not in UNIT_TESTED] == []
    assert all(rule.reason for _, rule in documented())
