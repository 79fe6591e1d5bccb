"""Final answers judged by the chosen comparison: exact, similar (default measured on bench pairs), json, judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import MisuseError
from core.replay.answers import (
    DEFAULT_THRESHOLD,
    AnswerComparison,
    judge_reply_text,
    parse_comparison,
    plain_judge,
    read_judge_reply,
    similarity,
)
from core.replay.compare import compare_step

PAIRS = Path(__file__).parents[2] / "bench" / "answer_pairs.jsonl"
REFUND = "I refunded order A-1042 (84.50 EUR, refund R-311) and emailed Ana the confirmation."


def test_a_polite_closer_against_a_refund_is_a_different_answer_with_its_diff_and_score() -> None:
    result = compare_step([], "You're welcome!", [], REFUND)
    assert (result.verdict, result.reason) == ("diverged", "different_answer")
    assert result.detail["score"] == 0.0 and result.detail["comparison"] == f"similar:{DEFAULT_THRESHOLD:g}"
    assert result.detail["word_diff"] == [{"op": "replace", "recorded": REFUND, "replayed": "You're welcome!"}]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("exact", "exact"),
        ("similar", f"similar:{DEFAULT_THRESHOLD:g}"),
        ("similar:0.8", "similar:0.8"),
        ("json", "json"),
        ("judge:anthropic/claude-sonnet-4-20250514", "judge:anthropic/claude-sonnet-4-20250514"),
    ],
)
def test_every_comparison_form_reads_back_as_it_is_recorded(text: str, expected: str) -> None:
    assert str(parse_comparison(text)) == expected


@pytest.mark.parametrize("text", ["fuzzy", "similar:1.5", "similar:x", "judge:openai", "judge:/m", "exact:1"])
def test_a_malformed_comparison_is_refused_naming_the_forms(text: str) -> None:
    with pytest.raises(MisuseError, match="--compare"):
        parse_comparison(text)


def test_exact_ignores_whitespace_only() -> None:
    exact = plain_judge(AnswerComparison("exact"))
    assert exact("Done.\n  Anything else?", " Done. Anything else? ").same
    assert not exact("Done. Anything else?", "done. anything else?").same


def test_json_compares_values_not_text() -> None:
    judge = plain_judge(AnswerComparison("json"))
    assert judge('{"a": 1, "b": [true]}', '{"b":[true],"a":1.0}').same
    assert not judge('{"a": 1}', '{"a": true}').same
    verdict = judge('{"a": 1}', "not json")
    assert not verdict.same and verdict.detail["json"] == "the replayed answer is not JSON"


def test_similar_uses_its_threshold() -> None:
    assert plain_judge(AnswerComparison("similar", 0.5))("Lisbon is warm today", "Lisbon is sunny today").same
    assert not plain_judge(AnswerComparison("similar", 0.8))("Lisbon is warm today", "Lisbon is sunny today").same


def test_the_default_threshold_matches_no_measured_pair_of_different_meaning() -> None:
    pairs = [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines()]
    different = [similarity(p["recorded"], p["replayed"]) for p in pairs if p["meaning"] == "different"]
    same = [similarity(p["recorded"], p["replayed"]) for p in pairs if p["meaning"] == "same"]
    assert len(different) >= 20 and max(different) < DEFAULT_THRESHOLD
    assert sum(s >= DEFAULT_THRESHOLD for s in same) >= 0.8 * len(same)


def test_a_judges_answer_is_read_in_the_documented_format_only() -> None:
    assert read_judge_reply(judge_reply_text("same", "Both refund 84.50 EUR.")) == (True, "Both refund 84.50 EUR.")
    assert read_judge_reply('Sure! {"verdict": "different", "reasoning": "x"}') == (False, "x")
    for bad in ("same", '{"verdict": "maybe"}', "{not json}"):
        with pytest.raises(ValueError, match="judge"):
            read_judge_reply(bad)
