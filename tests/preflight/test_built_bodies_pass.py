"""Every body the adapters build passes preflight, for every dialect and every model profile: random histories
(orphan calls and results, repeated ids, empty turns, signed and unsigned reasoning, attachments) and every
golden case, with thinking unset, on and off."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.messages.union import Message
from core.preflight import preflight
from core.providers import ChatLLM, RequestOptions, dialect_names, get_dialect, provider_named
from core.providers.profiles import ModelProfile, profile_for
from tests.providers.cases import CASES
from tests.providers.test_rules import histories

# One model name per profile (and one unknown name per dialect, for its conservative profile).
MODELS = {
    "anthropic": ["claude-opus-4-7", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-3-5-haiku", "claude-next"],
    "gemini": ["gemini-3-pro", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.0-flash", "gemini-next"],
    "openai": ["gpt-5-chat", "gpt-5.1", "gpt-5", "o3", "gpt-4.1", "gpt-next"],
    "openai-responses": ["gpt-5-chat", "gpt-5.1", "gpt-5", "o3", "gpt-4.1", "gpt-next"],
    "zhipu": ["glm-4.6v", "zhipu-next"],
    "doubao": ["doubao-seed-1-6", "seed-next"],
}
THINKING = (None, True, False)


def _shape(profile: ModelProfile) -> tuple[object, ...]:
    """What a profile decides about a body (its name and evidence aside: the model table names its own)."""
    return (profile.thinking, profile.gemini_thinking, profile.thinking_off, profile.reasoning_model,
            profile.tool_result_media, profile.sampling)  # fmt: skip


def test_every_profile_has_a_model_here() -> None:
    for dialect in dialect_names():
        provider = get_dialect(dialect)
        reached = {_shape(profile_for(provider, model).profile) for model in MODELS[dialect]}
        assert reached >= {_shape(p) for _, p in provider.profiles} | {_shape(provider.conservative)}, dialect


def _errors(msgs: list[Message], dialect: str, model: str, thinking: bool | None, options: Any = None) -> list[str]:
    base = options or RequestOptions()
    opts = RequestOptions(model=model, thinking=thinking, tools=base.tools, attachments_root=base.attachments_root)
    result = ChatLLM(provider_named(dialect), opts).construct_request_params(msgs)
    return [str(f) for f in preflight(result).errors]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(), st.data())
def test_any_history_passes_preflight_for_every_dialect_and_profile(msgs: list[Message], data: Any) -> None:
    for dialect in dialect_names():
        model = data.draw(st.sampled_from(MODELS[dialect]), label=dialect)
        thinking = data.draw(st.sampled_from(THINKING), label=f"{dialect} thinking")
        assert _errors(msgs, dialect, model, thinking) == []


@pytest.mark.parametrize("dialect", dialect_names())
@pytest.mark.parametrize("case", list(CASES))
def test_every_case_passes_preflight_for_every_profile(case: str, dialect: str) -> None:
    msgs, options = CASES[case]()
    for model in MODELS[dialect]:
        for thinking in THINKING:
            assert _errors(msgs, dialect, model, thinking, options) == [], (model, thinking)
