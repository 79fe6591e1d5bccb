"""The dialects: every module of ``core.providers.dialects`` that defines a ``DIALECT``.

A new provider is one new module in that package with a ``DIALECT`` (a :class:`Dialect` instance): it is
found by looking, so nothing else changes. Only that package is imported, on the first question, then
remembered; the shared modules of ``core.providers`` are never scanned.
"""

from __future__ import annotations

import importlib
import pkgutil
import threading

from core.errors import UnknownNameError
from core.providers.base import Dialect
from core.providers.dialects import DEFAULT_PAIR, DEFAULT_PROVIDER

PACKAGE = "core.providers.dialects"
"""The package whose modules are the providers."""

_lock = threading.Lock()
_found: dict[str, Dialect] | None = None


def dialects() -> dict[str, Dialect]:
    """Every dialect by name (the name is also the folder of its golden payloads), sorted by name."""
    global _found
    with _lock:
        if _found is None:
            _found = _discover()
        return _found


def _discover() -> dict[str, Dialect]:
    package = importlib.import_module(PACKAGE)  # by name: ``core.providers.dialects`` is also a function here

    found: dict[str, Dialect] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module_name = f"{package.__name__}.{info.name}"
        dialect = getattr(importlib.import_module(module_name), "DIALECT", None)
        if dialect is None:
            continue  # a shared base (chat_completions), not a dialect
        if not isinstance(dialect, Dialect):
            raise TypeError(f"{module_name}.DIALECT must be a Dialect, not {type(dialect).__name__}")
        if dialect.name in found:
            raise TypeError(f"two dialects are named {dialect.name!r}; the second is in {module_name}")
        found[dialect.name] = dialect
    return dict(sorted(found.items()))


def dialect_names() -> list[str]:
    """The dialect names, sorted."""
    return list(dialects())


def all_providers() -> tuple[Dialect, ...]:
    """Every provider, sorted by name: the one list of known providers (payload page, replay, suites, CLI)."""
    return tuple(dialects().values())


def provider_named(name: str) -> Dialect:
    """The provider named ``name`` (as a URL, a CLI argument or a stored run names it); UnknownNameError listing
    the known ones otherwise. The one lookup by name: everything past it passes the object."""
    dialect = dialects().get(name)
    if dialect is None:
        raise UnknownNameError(f"unknown provider {name!r}; known: {', '.join(dialect_names())}")
    return dialect


def provider_called(name: str) -> Dialect | None:
    """The provider a trace's own name for it means (its dialect name or one of its ``other_names``), or None."""
    wanted = name.lower()
    for dialect in dialects().values():
        if wanted == dialect.name or wanted in dialect.other_names:
            return dialect
    return None


get_dialect = provider_named
"""The lookup under its first name, as the tests still call it; code calls :func:`provider_named`."""


def default_provider() -> Dialect:
    """The provider a page shows first when none is asked for."""
    return provider_named(DEFAULT_PROVIDER)


def default_pair() -> tuple[Dialect, Dialect]:
    """The two providers the diff page compares when none are asked for."""
    left, right = DEFAULT_PAIR
    return provider_named(left), provider_named(right)
