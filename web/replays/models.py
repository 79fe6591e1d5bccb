"""Which model names belong to which provider: a Re-run form must not send one provider's model to another.

A provider's families (``Dialect.model_families``, in its dialect module) are deliberately name prefixes,
not models: providers add models every month, and a family outlives them. A name outside every family of its
provider is refused unless the reader typed it on purpose (the form's "as typed" box); such a run carries a
warning.
"""

from __future__ import annotations

from core.providers import Dialect


def known_model(provider: Dialect, model: str) -> bool:
    """Whether ``model`` is in one of ``provider``'s families (a provider without families knows every name)."""
    families = provider.model_families
    return not families or model.strip().lower().startswith(families)


def model_warning(provider: Dialect, model: str) -> str | None:
    """The warning a run carries when its model is outside its provider's families; None when it is not."""
    if known_model(provider, model):
        return None
    name = provider.name
    return f"{model!r} is not a known {name} model name (sent as typed; {name} may refuse it)"


def unknown_model_message(provider: Dialect, model: str) -> str:
    """Why a Re-run was refused: the model is another family's, as after a provider change the form missed."""
    families = ", ".join(f"{f}…" for f in provider.model_families)
    name = provider.name
    return (
        f"{model!r} is not a {name} model (known names start with {families}); "
        f"pick a {name} model, or tick 'as typed' to send this name anyway"
    )
