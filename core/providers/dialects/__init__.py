"""One module per provider (a ``DIALECT``), found by :mod:`core.providers.registry`; shared shapes beside them."""

DEFAULT_PROVIDER = "openai"
"""The provider a page shows first when none is asked for."""
DEFAULT_PAIR = ("openai", "anthropic")
"""The two providers the diff page compares when none are asked for."""
