"""``traceloupe models``: what the model table says, as a table or as JSON."""

from __future__ import annotations

import json

import pytest

from web.cli import main


def test_models_json_lists_a_providers_models_with_their_limits_and_source(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["models", "--provider", "doubao", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed["source"]["name"] == "LiteLLM model map"
    assert list(listed["providers"]) == ["doubao"]
    seed = next(m for m in listed["providers"]["doubao"] if m["model"] == "doubao-seed-1-6")
    assert (seed["max_input_tokens"], seed["max_output_tokens"]) == (256_000, 16_000)
    assert "volcengine.com" in seed["source"]


def test_models_prints_one_row_per_model_under_the_tables_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--provider", "anthropic"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model table: LiteLLM model map ")
    rows = [line for line in lines[2:] if line.startswith("anthropic ")]
    assert any(" claude-sonnet-4-5 " in row and "64,000" in row for row in rows)


def test_models_refuses_an_unknown_provider(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--provider", "nope"]) == 2
    assert "invalid choice: 'nope'" in capsys.readouterr().err
