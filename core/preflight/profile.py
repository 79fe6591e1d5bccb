"""What preflight needs to know about the model a body is for: read from the provider's model profile."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ModelRules:
    """The model-dependent facts the rules check against (a view of the model profile)."""

    name: str
    anthropic_thinking_types: tuple[str, ...] = ("enabled",)
    function_response_parts: bool = False
    reasoning_model: bool = False


def rules_for(dialect: str, model: str) -> ModelRules:
    """The rules' view of ``model``'s profile in ``dialect``."""
    return ModelRules(name=f"{dialect}:{model}")
