"""Turn rules that depend on the model, read from the model table rather than name patterns.

Oracle: Anthropic 400 "This model does not support assistant message prefill. The conversation must end with a
user message." for Claude Opus/Sonnet 4.6 and later (langchain-ai/deepagents#1585,
agenticloops-ai/agentic-ai-engineering#43); livekit/agents#7217 shows name patterns missing 4.7, 4.8 and 5.
"""

from __future__ import annotations

import pytest

from core.preflight import check_body, preflight
from core.providers import RequestOptions, provider_named
from tests.providers.builders import reply, run, user

ENDS_WITH_ASSISTANT = [user("Write a haiku.", 1), reply("Here it is:", 1)]


@pytest.mark.parametrize("model", ["claude-opus-4-7", "claude-sonnet-4-6", "claude-opus-4-8", "claude-sonnet-5"])
def test_a_model_without_prefill_gets_a_user_turn_after_the_final_assistant_turn(model: str) -> None:
    result = run("anthropic", ENDS_WITH_ASSISTANT, model=model)
    turns = result.body["messages"]
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]
    assert any("takes no prefill" in str(w) and w.msg_id == "a1" for w in result.warnings)
    assert not [f for f in preflight(result).findings if f.severity == "error"]


@pytest.mark.oracle_accepts
@pytest.mark.parametrize("model", ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-from-the-future"])
def test_a_model_that_takes_a_prefill_keeps_the_final_assistant_turn(model: str) -> None:
    result = run("anthropic", ENDS_WITH_ASSISTANT, model=model)
    assert [t["role"] for t in result.body["messages"]] == ["user", "assistant"]
    assert not any("prefill" in str(w) for w in result.warnings)


@pytest.mark.parametrize(
    ("model", "refused"),
    [("claude-opus-4-7", True), pytest.param("claude-sonnet-4-5", False, marks=pytest.mark.oracle_accepts)],
)
def test_preflight_calls_a_prefill_an_error_only_for_a_model_that_refuses_one(model: str, refused: bool) -> None:
    body = {
        "model": model,
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Write a haiku."}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Here it is:"}]},
        ],
    }
    dialect = provider_named("anthropic")
    rules = {f.rule for f in check_body(dialect, body, dialect.profile(RequestOptions(model=model)))}
    assert ("no-prefill" in rules) is refused
