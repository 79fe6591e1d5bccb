"""Preflight reports a deliberately broken body with the rule it breaks, at the message the node came from.

Each body is a real build (so provenance is real), then broken the way a hand edit or an adapter bug would.
"""

from __future__ import annotations

from typing import Any

import pytest

from core.preflight import preflight
from core.providers import RequestResult, dialect_names, get_dialect
from core.providers.profiles import profile_for
from tests.providers.cases import build

CALL_HOLDERS = {"anthropic": "messages", "gemini": "contents", "openai-responses": "input"}


def _findings(result: RequestResult, model: str | None = None) -> dict[str, list[str | None]]:
    """rule id -> the msg_ids of its findings, for the body's own model or for ``model``."""
    out: dict[str, list[str | None]] = {}
    profile = profile_for(result.provider, model).profile if model else None
    for finding in preflight(result, profile).findings:
        out.setdefault(finding.rule, []).append(finding.msg_id)
    return out


def _results_first(dialect: str, body: dict[str, Any]) -> None:
    """Move the tool results of the parallel-call case before the turn that makes the calls."""
    key = CALL_HOLDERS.get(dialect, "messages")
    items = body[key]
    if dialect in ("anthropic", "gemini"):
        items[1], items[2] = items[2], items[1]
    else:  # openai-shaped and Responses: two call holders' results, then the calls
        calls = [i for i, item in enumerate(items) if item.get("tool_calls") or item.get("type") == "function_call"]
        results = [i for i, item in enumerate(items) if item.get("role") == "tool" or "output" in item]
        moved = [items[i] for i in results]
        kept = [item for i, item in enumerate(items) if i not in results]
        at = min(calls)
        body[key] = kept[:at] + moved + kept[at:]


@pytest.mark.parametrize("dialect", dialect_names())
def test_the_parallel_call_case_is_accepted_as_built(dialect: str) -> None:
    verdict = preflight(build("tool_calls_parallel", dialect))
    assert verdict.accepted and not verdict.findings, verdict.findings


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_result_before_its_call_is_reported_at_the_tool_message(dialect: str) -> None:
    result = build("tool_calls_parallel", dialect)
    _results_first(dialect, result.body)
    found = _findings(result)
    assert "result-before-call" in found, found
    assert set(found["result-before-call"]) <= {"t1", "t2"}
    assert not preflight(result).accepted


@pytest.mark.parametrize("dialect", dialect_names())
def test_a_repeated_tool_id_is_reported(dialect: str) -> None:
    result = build("tool_calls_parallel", dialect)
    body = result.body
    match dialect:
        case "anthropic":
            body["messages"][1]["content"][1]["id"] = "call_a"
        case "gemini":
            body["contents"][1]["parts"][1]["functionCall"]["id"] = "call_a"
        case "openai-responses":
            body["input"][2]["call_id"] = "call_a"
        case _:
            body["messages"][1]["tool_calls"][1]["id"] = "call_a"
    assert "unique-tool-ids" in _findings(result)


@pytest.mark.parametrize("dialect", dialect_names())
def test_an_unanswered_call_is_reported_at_the_assistant_turn(dialect: str) -> None:
    result = build("tool_calls_parallel", dialect)
    body = result.body
    match dialect:
        case "anthropic":
            del body["messages"][2]["content"][1]
        case "gemini":
            del body["contents"][2]["parts"][1]
        case "openai-responses":
            del body["input"][4]
        case _:
            del body["messages"][3]
    found = _findings(result)
    assert found.get("call-answered-once") == ["a1"], found


def _thinking_on(body: dict[str, Any]) -> None:
    body["thinking"] = {"type": "enabled", "budget_tokens": 1024}


def test_anthropic_thinking_after_text_or_a_leading_tool_use_is_reported() -> None:
    result = build("reasoning_blocks", "anthropic")
    body = result.body
    _thinking_on(body)
    assert preflight(result).accepted
    turn = body["messages"][1]["content"]
    assert [b["type"] for b in turn] == ["thinking", "redacted_thinking", "thinking", "text", "tool_use"]
    turn.insert(2, turn.pop(3))  # [thinking, redacted, text, thinking, tool_use]
    found = _findings(result)
    assert found["thinking-leads-turn"] == ["a1"]
    assert "thinking-on-last-tool-turn" not in found  # the turn still starts with thinking
    turn.insert(0, turn.pop())  # thinking after tool_use: [tool_use, thinking, ...]
    found = _findings(result)
    assert "a1" in found["thinking-leads-turn"]
    assert found["thinking-on-last-tool-turn"] == ["a1"]


def test_anthropic_interleaved_thinking_of_merged_records_is_accepted() -> None:
    result = build("tool_calls_parallel", "anthropic")
    _thinking_on(result.body)
    uses = result.body["messages"][1]["content"]
    one, two = ({"type": "thinking", "thinking": "t", "signature": f"sig{n}"} for n in (1, 2))
    result.body["messages"][1]["content"] = [one, uses[0], two, uses[1]]
    verdict = preflight(result)
    assert verdict.accepted and not verdict.findings, verdict.findings


def test_anthropic_thinking_on_and_a_last_tool_turn_without_thinking_is_reported() -> None:
    result = build("tool_calls_parallel", "anthropic")
    _thinking_on(result.body)
    assert _findings(result)["thinking-on-last-tool-turn"] == ["a1"]
    result.body["thinking"] = {"type": "disabled"}
    assert preflight(result).accepted


def test_anthropic_final_turn_with_thinking_when_thinking_is_off_is_reported() -> None:
    result = build("reasoning_blocks", "anthropic")
    body = result.body
    body["messages"] = body["messages"][:2]  # the assistant turn with thinking is now the final one (prefill)
    del body["messages"][1]["content"][-1]  # and holds no tool_use
    found = _findings(result)
    assert set(found["no-final-thinking-when-off"]) == {"a1"}
    _thinking_on(body)
    assert "no-final-thinking-when-off" not in _findings(result)


def test_anthropic_final_assistant_text_ending_in_whitespace_is_reported() -> None:
    result = build("bug5_final_text_trailing_whitespace", "anthropic")  # a model that takes a prefill
    result.body["messages"][-1]["content"][-1]["text"] += "\n"
    assert _findings(result)["final-no-trailing-whitespace"] == ["a1"]


def test_anthropic_thinking_type_follows_the_model() -> None:
    # pydantic-ai's Anthropic profile: Opus 4.7 answers 400 to budget thinking; Sonnet 4.5 takes only budget.
    result = build("user_text", "anthropic")
    result.body["thinking"] = {"type": "enabled", "budget_tokens": 1024}
    assert "thinking-mode" in _findings(result, "claude-opus-4-7")
    assert "thinking-mode" not in _findings(result, "claude-sonnet-4-5")
    result.body["thinking"] = {"type": "adaptive"}
    assert "thinking-mode" not in _findings(result, "claude-opus-4-7")
    assert "thinking-mode" in _findings(result, "claude-3-5-haiku")


def test_the_adaptive_only_profile_is_the_one_preflight_refuses_budget_thinking_for() -> None:
    from core.preflight.anthropic import ADAPTIVE_ONLY_PROFILE

    assert profile_for(get_dialect("anthropic"), "claude-opus-4-7").profile.name == ADAPTIVE_ONLY_PROFILE
    assert profile_for(get_dialect("anthropic"), "claude-sonnet-4-6").profile.name != ADAPTIVE_ONLY_PROFILE


def test_gemini_function_response_parts_follow_the_model() -> None:
    # gemini-cli#19436: "function_response.parts is not supported for this model" before Gemini 3.
    result = build("tool_calls_parallel", "gemini")
    response = result.body["contents"][2]["parts"][0]["functionResponse"]
    response["parts"] = [{"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}}]
    assert _findings(result, "gemini-2.5-flash")["function-response-parts"] == ["t2"]
    assert "function-response-parts" not in _findings(result, "gemini-3-pro")


def test_gemini_thinking_config_follows_the_model() -> None:
    result = build("user_text", "gemini")
    result.body["generationConfig"] = {"thinkingConfig": {"thinkingBudget": 0}}
    assert "thinking-config" not in _findings(result, "gemini-2.5-flash")
    assert "thinking-config" in _findings(result, "gemini-2.5-pro")
    result.body["generationConfig"] = {"thinkingConfig": {"thinkingLevel": "low"}}
    assert "thinking-config" in _findings(result, "gemini-2.5-flash")
    assert "thinking-config" not in _findings(result, "gemini-3-pro")


def test_gemini_a_response_named_after_another_function_is_reported() -> None:
    result = build("tool_calls_parallel", "gemini")
    result.body["contents"][2]["parts"][1]["functionResponse"]["name"] = "lookup"
    assert _findings(result)["response-names-its-call"] == ["t1"]


@pytest.mark.parametrize("dialect", ["openai", "openai-responses"])
def test_openai_reasoning_models_refuse_max_tokens_and_temperature(dialect: str) -> None:
    result = build("user_text", dialect)
    result.body["temperature"] = 0.2
    assert "reasoning-model-params" in _findings(result, "o3")
    assert "reasoning-model-params" not in _findings(result, "gpt-4.1")
    del result.body["temperature"]
    result.body["reasoning_effort" if dialect == "openai" else "reasoning"] = (
        "low" if dialect == "openai" else {"effort": "low"}
    )
    assert "reasoning-model-params" in _findings(result, "gpt-4.1")
    assert "reasoning-model-params" not in _findings(result, "gpt-5")


def test_responses_reasoning_item_without_its_following_item_is_reported() -> None:
    result = build("tool_calls_parallel", "openai-responses")
    result.body["input"].append({"type": "reasoning", "id": "rs_1", "summary": []})
    assert "reasoning-item-followed" in _findings(result)


def test_a_body_the_sdk_types_reject_is_reported_at_the_message_that_broke_them() -> None:
    result = build("tool_calls_parallel", "openai")
    result.body["messages"][1]["tool_calls"][0]["function"]["arguments"] = {"city": "Paris"}
    verdict = preflight(result)
    types = [f for f in verdict.findings if f.rule == "sdk-types"]
    assert types and types[0].msg_id == "a1" and types[0].severity == "error"
    assert types[0].authority.startswith("openai ")
    assert types[0].pointer.startswith("/messages/1/tool_calls/0")


@pytest.mark.parametrize(
    ("dialect", "path", "value", "pointer"),
    [
        ("gemini", ["contents", 1, "parts", 0, "functionCall", "args"], '{"city": "Paris"}', "/contents/1/parts/0"),
        ("zhipu", ["messages", 2, "content"], [{"type": "text", "text": "18C"}], "/messages/2"),
        ("anthropic", ["messages", 1, "content", 0, "input"], '{"city": "Paris"}', "/messages/1/content/0"),
        # Responses items have no discriminator: only the function_call member's error is reported.
        ("openai-responses", ["input", 1, "arguments"], {"city": "Paris"}, "/input/1/arguments"),
    ],
)
def test_sdk_type_errors_are_located_in_the_body_and_at_their_message(
    dialect: str, path: list[Any], value: Any, pointer: str
) -> None:
    result = build("tool_calls_parallel", dialect)
    node: Any = result.body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    types = [f for f in preflight(result).findings if f.rule == "sdk-types"]
    assert types, preflight(result).findings
    assert types[0].pointer.startswith(pointer)
    assert types[0].msg_id in {"a1", "t1", "t2"}
    assert len(types) == 1, types
