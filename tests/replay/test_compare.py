"""The step verdicts: which replies are the recorded step, and the reason each other reply diverges."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.messages.objects import ToolCall
from core.providers import get_dialect
from core.replay.compare import compare_step, json_diff, json_equal, text_diff
from core.replay.cost import StepUsage, cost_of, usage_of


def _calls(*specs: tuple[str, Any]) -> list[ToolCall]:
    return [ToolCall(id=f"id-{i}", name=n, arguments=a if isinstance(a, str) else json.dumps(a))
            for i, (n, a) in enumerate(specs)]  # fmt: skip


def test_arguments_equal_as_json_values_whatever_the_key_order_and_spacing() -> None:
    replayed = _calls(("search", '{"b": [1, 2.0], "a": {"x": null}}'))
    recorded = _calls(("search", '{"a":{"x":null},"b":[1.0,2]}'))
    result = compare_step(replayed, "", recorded, "")
    assert (result.verdict, result.call_ids) == ("same", {"id-0": "id-0"})


def test_a_boolean_is_not_a_number_and_list_order_matters() -> None:
    assert not json_equal(True, 1)
    assert not json_equal([1, 2], [2, 1])
    assert json_equal({"a": 1}, {"a": 1.0})


def test_parallel_calls_match_in_any_order_and_map_each_recorded_id_to_its_twin() -> None:
    recorded = [ToolCall(id="r-w", name="weather", arguments='{"city": "Lisbon"}'),
                ToolCall(id="r-h", name="hotel", arguments='{"city": "Lisbon"}')]  # fmt: skip
    replayed = [ToolCall(id="x-h", name="hotel", arguments='{"city": "Lisbon"}'),
                ToolCall(id="x-w", name="weather", arguments='{"city": "Lisbon"}')]  # fmt: skip
    result = compare_step(replayed, "", recorded, "")
    assert (result.verdict, result.call_ids) == ("same", {"r-w": "x-w", "r-h": "x-h"})


@pytest.mark.parametrize(
    ("replayed", "recorded", "reason"),
    [
        ([("search", {"q": "a"})], [("search", {"q": "b"})], "different_arguments"),
        ([("lookup", {"q": "a"})], [("search", {"q": "a"})], "different_tool"),
        ([("search", {"q": "a"}), ("weather", {})], [("search", {"q": "a"})], "extra_calls"),
        ([("search", {"q": "a"})], [("search", {"q": "a"}), ("weather", {})], "missing_calls"),
        ([], [("search", {"q": "a"})], "answered_instead_of_calling"),
        ([("search", {"q": "a"})], [], "called_instead_of_answering"),
    ],
)
def test_each_way_of_leaving_the_recorded_path_has_its_reason(
    replayed: list[tuple[str, Any]], recorded: list[tuple[str, Any]], reason: str
) -> None:
    result = compare_step(_calls(*replayed), "text", _calls(*recorded), "text")
    assert (result.verdict, result.reason) == ("diverged", reason)


def test_the_arguments_diff_names_each_changed_added_and_removed_path() -> None:
    diff = json_diff(
        {"a": 1, "b": {"c": [1, 2]}, "gone": 0, "a/b": 1}, {"a": 2, "b": {"c": [1, 3]}, "new": True, "a/b": 1}
    )
    assert diff == [
        {"path": "/a", "op": "changed", "recorded": 1, "replayed": 2},
        {"path": "/b/c/1", "op": "changed", "recorded": 2, "replayed": 3},
        {"path": "/gone", "op": "removed", "recorded": 0, "replayed": None},
        {"path": "/new", "op": "added", "recorded": None, "replayed": True},
    ]


def test_two_final_answers_are_the_same_final_step_with_a_word_diff_and_a_similarity() -> None:
    result = compare_step([], "Lisbon is sunny today", [], "Lisbon is warm today")
    assert result.verdict == "same_final"
    assert result.detail["word_diff"] == text_diff("Lisbon is warm today", "Lisbon is sunny today")["word_diff"]
    assert result.detail["similarity"] == 0.75
    assert result.detail["comparison"] == "similar:0.6" and result.detail["score"] == 0.75
    assert {"op": "replace", "recorded": "warm", "replayed": "sunny"} in result.detail["word_diff"]


def test_usage_counts_every_input_token_and_reasoning_as_output() -> None:
    anthropic = {"usage": {"input_tokens": 10, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 5,
                           "output_tokens": 7}}  # fmt: skip
    assert usage_of(get_dialect("anthropic").wire, anthropic) == StepUsage(105, 7, 90, None, 5)
    gemini = {"usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 8, "thoughtsTokenCount": 30,
                                "cachedContentTokenCount": 20}}  # fmt: skip
    assert usage_of(get_dialect("gemini").wire, gemini) == StepUsage(50, 38, 20, 30)
    chat = {"usage": {"prompt_tokens": 40, "completion_tokens": 9, "prompt_tokens_details": {"cached_tokens": 32},
                      "completion_tokens_details": {"reasoning_tokens": 4}}}  # fmt: skip
    assert usage_of(get_dialect("openai").wire, chat) == StepUsage(40, 9, 32, 4)


def test_cost_comes_from_the_price_table_and_an_unknown_model_gives_none_with_a_note() -> None:
    known = cost_of(get_dialect("openai"), "gpt-4o", StepUsage(1_000_000, 0))
    assert known.usd is not None and known.usd > 0 and known.note is None
    unknown = cost_of(get_dialect("openai"), "house-model", StepUsage(1000, 10))
    assert unknown.usd is None and unknown.note is not None and "house-model" in unknown.note
    assert cost_of(get_dialect("doubao"), "doubao-seed", StepUsage(1000, 10)).usd is None
