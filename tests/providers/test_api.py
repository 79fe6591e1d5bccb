"""The public API of core.providers is pinned: growing it is a visible decision."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

import core.providers
import core.providers.dialects
from core import TextMessage
from core.providers import ChatLLM, dialect_names, get_dialect, provider_named, registry


def test_all_is_pinned() -> None:
    assert core.providers.__all__ == [
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


def test_every_registered_dialect_loads_under_its_name() -> None:
    assert dialect_names() == ["anthropic", "doubao", "gemini", "openai", "openai-responses", "zhipu"]
    for name in dialect_names():
        dialect = get_dialect(name)
        assert dialect.name == name and dialect.default_model and dialect.description


def test_provider_modules_never_import_each_other_or_an_sdk() -> None:
    """Provider modules depend on core.llm and the shared base, never on each other (DESIGN.md), and import no
    SDK when loaded: a provider's wire imports its SDK inside the functions that send (at the first send)."""
    import ast
    from pathlib import Path

    folder = Path(core.providers.__file__).parent
    dialect_modules = {f"core.providers.dialects.{n.replace('-', '_')}" for n in dialect_names()}
    for path in [*folder.glob("*.py"), *folder.glob("dialects/*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        own = ".".join(path.relative_to(folder.parent.parent).with_suffix("").parts)
        assert not (imported & dialect_modules) - {own}, path.name
        assert not imported & {"requests", "web"}, path.name
        loaded = {n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
        loaded |= {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names}
        assert not loaded & {"openai", "anthropic", "google.genai", "google", "httpx", "httpx2"}, path.name


NEW_PROVIDER = """
import re

from core.providers.dialects.chat_completions import CHAT_WIRE, ChatCompletionsDialect, openai_profile

PROFILE = openai_profile("acme", "acme", "a provider added as one module")


class AcmeDialect(ChatCompletionsDialect):
    name = "acme"
    default_model = "acme-1"
    description = "a provider added as one module"
    key_var = "ACME_API_KEY"
    base_url_var = "ACME_BASE_URL"
    default_base_url = "https://api.acme.test/v1"
    wire = CHAT_WIRE
    profiles = ((r"acme-", PROFILE),)
    conservative = PROFILE
    suggested_models = ("acme-1",)
    model_families = ("acme-",)

    def media_part(self, part, msg_id, ctx):
        return ctx.degrade(part, msg_id, "acme takes text only")


DIALECT = AcmeDialect()
"""


def _with_acme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Drop the toy provider into a folder that joins the dialects package's search path, as a file added to
    core/providers/dialects/ would: nothing is registered anywhere."""
    package = importlib.import_module(registry.PACKAGE)
    (tmp_path / "acme.py").write_text(NEW_PROVIDER)
    monkeypatch.setattr(package, "__path__", [*package.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_found", None)
    monkeypatch.delitem(sys.modules, "core.providers.dialects.acme", raising=False)


def test_a_new_provider_is_one_module_and_no_change_elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from core.preflight import preflight
    from core.replay.endpoints import availability, endpoint_for
    from web.bodies.builder import providers

    _with_acme(tmp_path, monkeypatch)
    try:
        assert "acme" in dialect_names()
        acme = provider_named("acme")
        result = ChatLLM(acme).construct_request_params([TextMessage(content="hi", msg_id="u")])
        assert result.body == {"model": "acme-1", "messages": [{"role": "user", "content": "hi"}]}
        assert preflight(result).accepted
        env = {"ACME_API_KEY": "acme-key-0123456789"}
        endpoint = endpoint_for(acme, env)
        assert endpoint is not None and endpoint.base_url == "https://api.acme.test/v1"
        assert [a.available for a in availability(env) if a.provider is acme] == [True]
        assert "acme" in providers()  # the payload page's provider list, the CLI's --provider names
    finally:
        monkeypatch.setattr(registry, "_found", None)  # forget acme for the tests that follow


def test_a_dialect_outside_the_dialects_package_is_not_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only core.providers.dialects is scanned: the shared modules of core.providers are never imported to look."""
    (tmp_path / "acme.py").write_text(NEW_PROVIDER)
    monkeypatch.setattr(core.providers, "__path__", [*core.providers.__path__, str(tmp_path)])
    monkeypatch.setattr(registry, "_found", None)
    monkeypatch.delitem(sys.modules, "core.providers.acme", raising=False)
    assert "acme" not in dialect_names()
    assert "core.providers.acme" not in sys.modules
    monkeypatch.setattr(registry, "_found", None)
