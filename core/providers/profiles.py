"""Model profiles: the request-time rules that depend on the model, not only on the dialect.

The SDK types accept the same body for every model; the providers do not. Each dialect has an
ordered table of model-name patterns (first match wins), each entry a :class:`ModelProfile` that
names its evidence. ``profile_for(provider, model)`` picks one; an unknown model gets the
conservative profile of its dialect and a warning saying so. Patterns are searched, not anchored,
so provider-prefixed ids (``us.anthropic.claude-opus-4-7``, ``models/gemini-3-pro``) match too.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from typing import Literal

ThinkingMode = Literal["none", "budget", "adaptive"]
"""Anthropic's ``thinking`` parameter: none (no extended thinking), ``enabled`` + ``budget_tokens``, or ``adaptive``."""
GeminiThinking = Literal["none", "budget", "level"]
"""Gemini's ``thinkingConfig``: none (no thinking model), ``thinkingBudget`` (2.5) or ``thinkingLevel`` (3)."""
ToolResultMedia = Literal["function_response_parts", "sibling_parts"]
"""Where Gemini takes a tool result's media: inside ``functionResponse.parts``, or as parts of a user content
after the responses (providers.md: the response content holds only the responses, langchain#27799)."""


@dataclass(frozen=True, slots=True)
class ToolNameRule:
    """The names a provider accepts for tools; others are rewritten, the same way in every place they occur."""

    pattern: re.Pattern[str]
    max_length: int
    evidence: str

    def accepts(self, name: str) -> bool:
        """Whether ``name`` may be sent as it is."""
        return len(name) <= self.max_length and self.pattern.fullmatch(name) is not None

    def rewrite(self, name: str) -> str:
        """An accepted name for ``name``: rejected characters as ``_``, a leading ``_`` where a letter must
        come first, cut to fit, and a short digest of the original so two names do not become one."""
        if self.accepts(name):
            return name
        cleaned = re.sub(r"[^A-Za-z0-9_-]", "_", name) or "_"
        if self.pattern.fullmatch(cleaned[:1] + "a") is None:
            cleaned = "_" + cleaned
        digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=4).hexdigest()
        return f"{cleaned[: self.max_length - len(digest) - 1]}_{digest}"


# [SDK: openai FunctionDefinition.name] "a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum
# length of 64". Zhipu and Doubao copy OpenAI's schema [unverified]; they use the same rule.
OPENAI_TOOL_NAMES = ToolNameRule(re.compile(r"[A-Za-z0-9_-]+"), 64, "openai SDK FunctionDefinition.name")
# 400 "tools.N.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
# (modelcontextprotocol/modelcontextprotocol#1345, home-assistant/core#147760, anthropics/claude-code#96152).
ANTHROPIC_TOOL_NAMES = ToolNameRule(
    re.compile(r"[A-Za-z0-9_-]+"), 128, "Anthropic 400 '^[a-zA-Z0-9_-]{1,128}$' (claude-code#96152)"
)
# [SDK: google-genai FunctionDeclaration.name] "Must start with a letter or an underscore. Must be a-z, A-Z,
# 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 128."
GEMINI_TOOL_NAMES = ToolNameRule(
    re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]*"), 128, "google-genai SDK FunctionDeclaration.name"
)


@dataclass(frozen=True, slots=True)
class ModelProfile:
    """What one family of models accepts, with the evidence for it.

    ``thinking_off`` is False where the model cannot stop reasoning (Gemini 2.5 Pro and 3 Pro, OpenAI
    o-series): "off" then asks for the least reasoning and says so. ``reasoning_model`` marks OpenAI
    reasoning models: ``reasoning_effort`` is sent, ``max_completion_tokens`` is the limit and sampling
    settings such as ``temperature`` are never sent. ``effort_off`` is the lowest effort the model takes.
    """

    name: str
    dialect: str
    evidence: str
    tool_names: ToolNameRule
    thinking: ThinkingMode = "none"
    gemini_thinking: GeminiThinking = "none"
    thinking_off: bool = True
    tool_result_media: ToolResultMedia = "sibling_parts"
    reasoning_model: bool = False
    effort_off: str = "low"


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """The profile chosen for a model, and the warning when the model was not recognised."""

    profile: ModelProfile
    model: str
    warning: str | None = None


def _anthropic(name: str, thinking: ThinkingMode, evidence: str) -> ModelProfile:
    return ModelProfile(name, "anthropic", evidence, ANTHROPIC_TOOL_NAMES, thinking=thinking)


_PYDANTIC_AI_ANTHROPIC = "pydantic-ai profiles/anthropic.py"
ANTHROPIC: tuple[tuple[str, ModelProfile], ...] = (
    # "Claude Opus 4.7+ requires adaptive thinking and returns a 400 for {'type': 'enabled', 'budget_tokens'}"
    # (anthropic_disallows_budget_thinking); later generations likewise (claude-sonnet-5, claude-haiku-5-5).
    (
        r"claude-opus-4-(?:[7-9]|\d\d)|claude-(?:opus|sonnet|haiku)-(?:[5-9]|\d\d)",
        _anthropic(
            "claude-adaptive-only", "adaptive", f"{_PYDANTIC_AI_ANTHROPIC}: anthropic_disallows_budget_thinking"
        ),
    ),
    # Sonnet 4.6 and Opus 4.6 take adaptive thinking (budget is deprecated there).
    (
        r"claude-(?:opus|sonnet)-4-6",
        _anthropic("claude-adaptive", "adaptive", f"{_PYDANTIC_AI_ANTHROPIC}: anthropic_supports_adaptive_thinking"),
    ),
    # Extended thinking with a token budget: Claude 4 / 4.1 / 4.5 and 3.7 Sonnet [docs: extended thinking models].
    (
        r"claude-(?:opus|sonnet|haiku)-4(?!-[6-9])|claude-3-7-sonnet",
        _anthropic("claude-budget", "budget", "Anthropic docs, extended thinking: supported models"),
    ),
    # Claude 3 and 3.5 have no extended thinking [docs].
    (r"claude-3", _anthropic("claude-no-thinking", "none", "Anthropic docs, extended thinking: supported models")),
)
# Budget thinking is what every Claude with extended thinking took before Opus 4.7.
ANTHROPIC_CONSERVATIVE = _anthropic("claude-conservative", "budget", "the long-standing form, for an unknown model")


def _gemini(
    name: str,
    evidence: str,
    thinking: GeminiThinking = "none",
    thinking_off: bool = True,
    media: ToolResultMedia = "sibling_parts",
) -> ModelProfile:
    return ModelProfile(
        name,
        "gemini",
        evidence,
        GEMINI_TOOL_NAMES,
        gemini_thinking=thinking,
        thinking_off=thinking_off,
        tool_result_media=media,
    )


GEMINI: tuple[tuple[str, ModelProfile], ...] = (
    # functionResponse.parts is Gemini 3+ only: 400 "function_response.parts is not supported for this model"
    # on 2.5 (google-gemini/gemini-cli#19436); Vercel ai sets supportsFunctionResponseParts for Gemini 3.
    # Gemini 3 takes thinkingLevel and cannot switch thinking off [docs: Gemini 3 thinking].
    (
        r"gemini-[3-9]",
        _gemini(
            "gemini-3",
            "gemini-cli#19436; Vercel ai supportsFunctionResponseParts; Gemini docs thinkingLevel",
            thinking="level",
            thinking_off=False,
            media="function_response_parts",
        ),
    ),
    # 2.5 Pro: thinkingBudget 128..32768, thinking cannot be turned off [docs: thinking budgets].
    (
        r"gemini-2\.5-pro",
        _gemini("gemini-2.5-pro", "Gemini docs, thinking budgets", thinking="budget", thinking_off=False),
    ),
    # 2.5 Flash / Flash-Lite: thinkingBudget 0 switches thinking off [docs: thinking budgets].
    (r"gemini-2\.5", _gemini("gemini-2.5-flash", "Gemini docs, thinking budgets", thinking="budget")),
    # 2.0 and 1.5 are not thinking models: no thinkingConfig [docs].
    (r"gemini-(?:2\.0|1\.)", _gemini("gemini-no-thinking", "Gemini docs, thinking: supported models")),
)
# Sibling media parts are what every Gemini accepts (Vercel's fallback for supportsFunctionResponseParts=false).
GEMINI_CONSERVATIVE = _gemini("gemini-conservative", "what every Gemini accepts", thinking="budget")


def _openai(
    dialect: str, name: str, evidence: str, reasoning: bool = False, effort_off: str = "low", thinking_off: bool = True
) -> ModelProfile:
    return ModelProfile(
        name,
        dialect,
        evidence,
        OPENAI_TOOL_NAMES,
        reasoning_model=reasoning,
        effort_off=effort_off,
        thinking_off=thinking_off,
    )


_PYDANTIC_AI_OPENAI = "pydantic-ai profiles/openai.py"


def _openai_table(dialect: str) -> tuple[tuple[str, ModelProfile], ...]:
    return (
        # Chat variants of GPT-5 do not reason (pydantic-ai: thinking_always_enabled excludes '-chat').
        (r"gpt-5[.\d]*-chat", _openai(dialect, "gpt-5-chat", f"{_PYDANTIC_AI_OPENAI}: '-chat' variants")),
        # GPT-5.1 and later take reasoning_effort "none" (pydantic-ai: is_gpt_5_1_plus).
        (
            r"gpt-5\.\d",
            _openai(dialect, "gpt-5.1+", f"{_PYDANTIC_AI_OPENAI}: is_gpt_5_1_plus", reasoning=True, effort_off="none"),
        ),
        # GPT-5 always reasons; its lowest effort is "minimal" [docs: reasoning].
        (
            r"gpt-5",
            _openai(dialect, "gpt-5", f"{_PYDANTIC_AI_OPENAI}: is_gpt_5", reasoning=True, effort_off="minimal"),
        ),
        # o-series always reason and reject sampling settings (pydantic-ai openai_unsupported_model_settings).
        (
            r"(?:^|[/.])o\d",
            _openai(dialect, "o-series", f"{_PYDANTIC_AI_OPENAI}: is_o_series", reasoning=True, thinking_off=False),
        ),
        (r"gpt-4|gpt-3\.5", _openai(dialect, "gpt-4", "no reasoning parameters (OpenAI docs)")),
    )


# An unknown OpenAI model gets no reasoning parameters: a model without reasoning rejects reasoning_effort.
OPENAI_CONSERVATIVE = _openai("openai", "openai-conservative", "no reasoning parameters, for an unknown model")

PROFILES: dict[str, tuple[tuple[str, ModelProfile], ...]] = {
    "anthropic": ANTHROPIC,
    "gemini": GEMINI,
    "openai": _openai_table("openai"),
    "openai-responses": _openai_table("openai-responses"),
    # The OpenAI-compatible vendors switch reasoning with their own ``thinking`` parameter (their modules).
    "zhipu": ((r"glm-", _openai("zhipu", "glm", "Zhipu GLM v4 chat (providers.md section 5)")),),
    "doubao": ((r"doubao-", _openai("doubao", "doubao", "Volcengine Ark chat (providers.md section 6)")),),
}
CONSERVATIVE: dict[str, ModelProfile] = {
    "anthropic": ANTHROPIC_CONSERVATIVE,
    "gemini": GEMINI_CONSERVATIVE,
    "openai": OPENAI_CONSERVATIVE,
    "openai-responses": _openai("openai-responses", "openai-conservative", OPENAI_CONSERVATIVE.evidence),
    "zhipu": _openai("zhipu", "glm-conservative", "OpenAI-compatible, for an unknown model"),
    "doubao": _openai("doubao", "doubao-conservative", "OpenAI-compatible, for an unknown model"),
}


@functools.lru_cache(maxsize=256)
def profile_for(provider: str, model: str | None) -> ProfileChoice:
    """The profile of ``model`` in dialect ``provider`` (None: the dialect's default model).

    An unknown model gets the conservative profile of its dialect, with a warning naming it; an unknown
    provider raises UnknownNameError.
    """
    if model is None:
        from core.providers.registry import get_dialect

        model = get_dialect(provider).default_model
    for pattern, profile in PROFILES.get(provider, ()):
        if re.search(pattern, model.lower()):
            return ProfileChoice(profile, model)
    conservative = CONSERVATIVE.get(provider) or _openai(provider, "conservative", "no profiles for this dialect")
    warning = (
        f"model {model!r} is not in the {provider} profiles; the conservative profile "
        f"{conservative.name!r} was used (it may not match what this model accepts)"
    )
    return ProfileChoice(conservative, model, warning)
