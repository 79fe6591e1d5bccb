"""``--from auto``: each format is told from the content, most specific first, our own format last."""

from __future__ import annotations

import orjson
import pytest

from core.errors import InputError
from core.formats.registry import FORMATS, OWN_FORMAT, format_named, format_names, sniff


def test_every_format_has_a_unique_name_and_ours_comes_last() -> None:
    names = [f.name for f in FORMATS]
    assert len(set(names)) == len(names)
    assert names[-1] == OWN_FORMAT
    assert format_names()[0] == "auto"


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"role": "user", "msg_type": "text", "content": "hi", "msg_id": "m"}\n', OWN_FORMAT),
        (b'[{"role": "user", "msg_type": "text", "content": "hi"}]', OWN_FORMAT),
        (
            orjson.dumps(
                {"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "gen_ai.system"}]}]}]}]}
            ),
            "otlp",
        ),
        (
            orjson.dumps(
                {"resourceSpans": [{"scopeSpans": [{"spans": [{"attributes": [{"key": "openinference.span.kind"}]}]}]}]}
            ),
            "openinference",
        ),
        (b'[{"name": "llm", "context": {"trace_id": "t", "span_id": "s"}, "span_kind": "LLM"}]', "openinference"),
        (b"\x0a\x84\x01\x12\x7fgen_ai.system", "otlp"),
        (b'{"trace": {"id": "t", "projectId": "p"}, "observations": [{"type": "GENERATION"}]}', "langfuse"),
        (b'{"post": [{"id": "r", "run_type": "llm", "inputs": {"messages": []}}]}', "langsmith"),
        (b'[{"id": "r", "run_type": "chain", "child_runs": [{"run_type": "llm"}]}]', "langsmith"),
    ],
)
def test_the_content_tells_the_format(head: bytes, expected: str) -> None:
    assert sniff(head, "any.name").name == expected


def test_an_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match="known: auto, "):
        format_named("langfusee")
