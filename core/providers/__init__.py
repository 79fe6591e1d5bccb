"""Provider adapters: ChatLLM's request assembly and one translation module per provider dialect."""

from core.messages.placement import expand_trace_for_msg
from core.providers.base import (
    Degradation,
    Dialect,
    GenerationParams,
    NamedToolChoice,
    RequestContext,
    RequestOptions,
    ToolChoice,
    ToolSpec,
    ToolsSource,
)
from core.providers.chat_llm import PHASES, ChatLLM, RequestResult
from core.providers.profiles import ModelProfile, ProfileChoice, profile_for
from core.providers.registry import (
    all_providers,
    default_pair,
    default_provider,
    dialect_names,
    dialects,
    get_dialect,
    provider_named,
)

__all__ = [
    "PHASES",
    "ChatLLM",
    "Degradation",
    "Dialect",
    "GenerationParams",
    "ModelProfile",
    "NamedToolChoice",
    "ProfileChoice",
    "RequestContext",
    "RequestOptions",
    "RequestResult",
    "ToolChoice",
    "ToolSpec",
    "ToolsSource",
    "all_providers",
    "default_pair",
    "default_provider",
    "dialect_names",
    "dialects",
    "expand_trace_for_msg",
    "get_dialect",
    "profile_for",
    "provider_named",
]
