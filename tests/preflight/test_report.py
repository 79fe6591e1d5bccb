"""The capability report counts what a provider cannot carry by kind, from the build's own warnings."""

from __future__ import annotations

import pytest

from core.preflight import cannot_carry, capability_report
from core.providers import Degradation
from tests.providers.cases import build


@pytest.mark.parametrize(("case", "kind"), [("audio", "audio"), ("video", "video")])
def test_media_anthropic_cannot_take_is_counted_by_kind_with_its_messages(case: str, kind: str) -> None:
    report = capability_report(build(case, "anthropic")).to_json()
    assert report["cannot_carry"] == [
        {"kind": kind, "msg_ids": ["u1", "u2"], "what_happens": f"Anthropic takes no {kind}; sent as text"}
    ]


def test_gemini_carries_video_so_nothing_is_reported() -> None:
    assert capability_report(build("video", "gemini")).cannot_carry == ()


def test_gemini_reports_only_the_audio_it_does_not_fetch_from_a_url() -> None:
    """Inline audio goes; an external URL of audio is not fetched (vercel/ai#16757 lists no audio type)."""
    (entry,) = capability_report(build("audio", "gemini")).cannot_carry
    assert (entry.kind, entry.msg_ids) == ("audio", ("u2",))
    assert "from an external URL" in entry.what_happens


def test_reasoning_another_provider_wrote_is_reported_as_not_carried() -> None:
    (entry,) = capability_report(build("reasoning_string", "openai")).cannot_carry
    assert (entry.kind, entry.msg_ids) == ("reasoning", ("a1",))
    assert "dropped" in entry.what_happens


def test_the_report_json_has_exactly_the_documented_keys() -> None:
    report = capability_report(build("reasoning_string", "anthropic")).to_json()
    assert list(report) == ["provider", "model", "profile", "cannot_carry", "fixes", "preflight"]
    assert (report["provider"], report["model"]) == ("anthropic", "claude-sonnet-4-6")
    assert all(list(entry) == ["kind", "msg_ids", "what_happens"] for entry in report["cannot_carry"])
    assert all(list(entry) == ["rule", "severity", "authority", "msg_id"] for entry in report["preflight"])
    assert all(list(entry) == ["rule", "severity", "source", "fix", "msg_id"] for entry in report["fixes"])


class _CountedId(str):
    """A msg_id that counts how often it is compared for equality (a list's membership test compares each item)."""

    comparisons = 0

    def __eq__(self, other: object) -> bool:
        _CountedId.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


def _comparisons_per_warning(n: int) -> float:
    warnings = [Degradation(_CountedId(f"a{i}"), "reasoning", f"reasoning of a{i} dropped") for i in range(n)]
    _CountedId.comparisons = 0
    (entry,) = cannot_carry(warnings)
    assert len(entry.msg_ids) == n
    return _CountedId.comparisons / n


def test_a_long_trace_s_report_compares_each_warning_a_constant_number_of_times() -> None:
    """One warning a record, on a 100,000-record trace: the report must not compare each with all before it."""
    small, large = _comparisons_per_warning(500), _comparisons_per_warning(2_000)
    assert large <= small * 1.1 + 1, f"{large:.1f} comparisons a warning at 2,000 against {small:.1f} at 500"
