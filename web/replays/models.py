"""Which model names belong to which provider: a Re-run form must not send one provider's model to another.

The table is deliberately a list of name prefixes (families), not of models: providers add models
every month, and a family outlives them. A name outside every family of its provider is refused
unless the reader typed it on purpose (the form's "as typed" box); such a run carries a warning.
"""

from __future__ import annotations

MODEL_FAMILIES: dict[str, tuple[str, ...]] = {
    # platform.openai.com/docs/models: gpt-*, the o-series reasoning models, chatgpt-*, codex-*.
    "openai": ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-"),
    "openai-responses": ("gpt-", "o1", "o3", "o4", "chatgpt-", "codex-", "computer-use-"),
    # docs.anthropic.com/en/docs/about-claude/models: every model id starts with claude-.
    "anthropic": ("claude-",),
    # ai.google.dev/gemini-api/docs/models: gemini-* and the open gemma-* models, with or without "models/".
    "gemini": ("gemini-", "gemma-", "models/gemini-", "models/gemma-"),
    # docs.bigmodel.cn model list: glm-* chat models (plus the charglm/codegeex/cogview families).
    "zhipu": ("glm-", "charglm-", "codegeex-", "cogview-"),
    # volcengine.com/docs/82379 (Ark): doubao-* model ids, the deepseek-* and kimi-* models it hosts, and
    # inference endpoint ids (ep-...), which Ark accepts in the model field.
    "doubao": ("doubao-", "deepseek-", "kimi-", "ep-"),
}


def known_model(provider: str, model: str) -> bool:
    """Whether ``model`` is in one of ``provider``'s families (a provider without a table knows every name)."""
    families = MODEL_FAMILIES.get(provider)
    return families is None or model.strip().lower().startswith(families)


def model_warning(provider: str, model: str) -> str | None:
    """The warning a run carries when its model is outside its provider's families; None when it is not."""
    if known_model(provider, model):
        return None
    return f"{model!r} is not a known {provider} model name (sent as typed; {provider} may refuse it)"


def unknown_model_message(provider: str, model: str) -> str:
    """Why a Re-run was refused: the model is another family's, as after a provider change the form missed."""
    families = ", ".join(f"{f}…" for f in MODEL_FAMILIES.get(provider, ()))
    return (
        f"{model!r} is not a {provider} model (known names start with {families}); "
        f"pick a {provider} model, or tick 'as typed' to send this name anyway"
    )
