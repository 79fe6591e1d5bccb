"""The model table: packaged from LiteLLM's model map, one slice per provider, unknown models said so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.models import ModelTable, facts_for, model_table
from core.models.table import DATA_FILE
from core.providers import all_providers, provider_named

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("dialect", all_providers(), ids=lambda d: d.name)
def test_every_model_the_pages_offer_is_in_the_table(dialect: object) -> None:
    from core.providers.base import Dialect

    assert isinstance(dialect, Dialect)
    for model in (dialect.default_model, *dialect.suggested_models):
        choice = facts_for(dialect, model)
        assert choice.match in {"exact", "alias"}, (dialect.name, model, choice.warning)
        assert choice.warning is None
        assert choice.facts is not None and choice.facts.max_output_tokens, (dialect.name, model)


def test_a_dated_or_preview_id_is_the_same_model() -> None:
    gemini = provider_named("gemini")
    choice = facts_for(gemini, "gemini-3-pro")
    assert (choice.match, choice.facts and choice.facts.model) == ("alias", "gemini-3-pro-preview")
    assert facts_for(provider_named("anthropic"), "claude-sonnet-4-5-20250929").match == "exact"


def test_an_unknown_variant_takes_its_familys_facts_with_a_warning() -> None:
    choice = facts_for(provider_named("anthropic"), "claude-sonnet-4-5-custom-tune")
    assert choice.match == "family"
    assert choice.facts is not None and choice.facts.model == "claude-sonnet-4-5"
    assert choice.warning and "'claude-sonnet-4-5-custom-tune' is not in the model table" in choice.warning


def test_an_unknown_model_falls_back_to_its_providers_default_with_a_warning() -> None:
    openai = provider_named("openai")
    choice = facts_for(openai, "my-finetune")
    assert choice.match == "dialect"
    assert choice.facts is not None and choice.facts.model == openai.default_model
    assert choice.warning and "default model" in choice.warning and "LiteLLM model map" in choice.warning


def test_a_provider_prefixed_id_is_found_by_its_bare_name() -> None:
    choice = facts_for(provider_named("gemini"), "models/gemini-2.5-pro")
    assert choice.match == "exact" and choice.facts is not None
    assert choice.facts.table_id == "gemini/gemini-2.5-pro"


def test_the_packaged_table_names_its_source_and_version_and_the_readme_quotes_them() -> None:
    source = model_table().source
    assert source.name == "LiteLLM model map" and source.license == "MIT"
    assert source.version[0].isdigit()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"LiteLLM {source.version}" in readme
    assert "scripts/refresh_model_table.py" in readme


def test_every_hand_verified_entry_cites_its_source() -> None:
    for dialect in all_providers():
        for model, entry in dialect.model_table_extra.items():
            assert str(entry.get("source_note", "")).strip(), (dialect.name, model)
            assert facts_for(dialect, model).facts is not None


def test_each_packaged_entry_belongs_to_a_providers_slice() -> None:
    hosts = {host for dialect in all_providers() for host in dialect.model_table_slice}
    models = json.loads(DATA_FILE.read_text(encoding="utf-8"))["models"]
    assert models and {entry["litellm_provider"] for entry in models.values()} <= hosts


def test_a_providers_own_entry_wins_over_another_hosts(tmp_path: Path) -> None:
    data = {
        "source": {"name": "t", "version": "1", "upstream": "u", "license": "MIT"},
        "models": {
            "vertex_ai/claude-x": {"litellm_provider": "vertex_ai-anthropic_models", "max_output_tokens": 1},
            "claude-x": {"litellm_provider": "anthropic", "max_output_tokens": 2},
        },
    }
    (tmp_path / "t.json").write_text(json.dumps(data), encoding="utf-8")
    table = ModelTable.load(tmp_path / "t.json")
    facts = table.lookup(provider_named("anthropic"), "claude-x").facts
    assert facts is not None and facts.max_output_tokens == 2
