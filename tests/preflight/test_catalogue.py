"""The rule catalogue: every fix a build applies names a rule of its provider's catalogue (same id as the preflight
rule), ``payload --report`` lists the fixes with severity and source, and ``traceloupe rules`` lists the catalogue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core import BaseMessage, TextMessage
from core.preflight import capability_report
from core.preflight.catalogue import UNCATALOGUED, catalogue
from core.providers import all_providers, provider_named
from tests.providers.builders import reply, run, user
from web.cli import main

SYSTEM = BaseMessage(role="system", content="Answer in French.", msg_id="s1", create_ts=1)
# Builds that each make the builder apply at least one fix.
FIXING_BUILDS: list[tuple[str, list[Any], dict[str, Any]]] = [
    ("openai", [user("hi", 1)], {"model": "gpt-5.4-pro", "thinking": False}),
    ("openai-responses", [user("hi", 1)], {"model": "gpt-5", "effort": "none", "max_tokens": 5}),
    ("gemini", [SYSTEM, user("hi", 1)], {"model": "gemma-3-27b-it", "thinking": True}),
    ("anthropic", [user("hi", 1), reply("Autumn ", 1)], {"model": "claude-sonnet-4-5", "thinking": True}),
    ("anthropic", [user("hi", 1), reply("Autumn", 1)], {"model": "claude-sonnet-4-6"}),
    ("anthropic", [user("hi", 1)], {"model": "claude-sonnet-4-5", "thinking": True, "max_tokens": 1000}),
]


@pytest.mark.parametrize(("provider", "history", "options"), FIXING_BUILDS)
def test_every_fix_names_a_rule_of_its_providers_catalogue(
    provider: str, history: list[Any], options: dict[str, Any]
) -> None:
    result = run(provider, history, **options)
    ids = {rule.id for rule in catalogue(provider_named(provider))}
    fixed = [w.rule for w in result.warnings if w.rule is not None]
    assert fixed
    assert set(fixed) <= ids
    report = capability_report(result)
    assert [fix.rule.id for fix in report.fixes] == fixed
    assert all(fix.rule.authority != UNCATALOGUED for fix in report.fixes)


@pytest.mark.parametrize("dialect", all_providers(), ids=lambda d: d.name)
def test_every_rule_of_a_catalogue_has_an_id_a_severity_and_a_source(dialect: Any) -> None:
    rules = catalogue(dialect)
    assert rules
    for rule in rules:
        assert rule.id and rule.severity in ("error", "warning") and rule.authority and rule.summary


def _gemma_file(tmp_path: Path) -> Path:
    path = tmp_path / "agent.jsonl"
    system = BaseMessage(role="system", content="Answer in French.", msg_id="s1", create_ts=1, conversation_id="c1")
    question = TextMessage(content="hello", msg_id="u1", create_ts=2, conversation_id="c1")
    path.write_bytes(system.model_dump_json().encode() + b"\n" + question.model_dump_json().encode() + b"\n")
    return path


def test_payload_report_lists_the_fixes_with_id_severity_and_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["payload", str(_gemma_file(tmp_path)), "--provider", "gemini", "--model", "gemma-3-27b-it", "--report"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "rules the builder fixed: 1" in out
    assert "fixed: system-instruction-supported" in out and "0xPlaygrounds/rig#788" in out
    assert main([*argv, "--json"]) == 0
    fixes = json.loads(capsys.readouterr().out)["fixes"]
    assert [(f["rule"], f["severity"]) for f in fixes] == [("system-instruction-supported", "error")]
    assert "supports_system_messages" in fixes[0]["source"] and "first user turn" in fixes[0]["fix"]


def test_rules_lists_each_providers_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", "--provider", "gemini", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["providers"]
    assert list(listed) == ["gemini"]
    ids = [rule["id"] for rule in listed["gemini"]]
    assert "system-instruction-supported" in ids and "sdk-types" in ids
    assert all(rule["severity"] in ("error", "warning") and rule["source"] for rule in listed["gemini"])
    assert main(["rules", "--provider", "openai"]) == 0
    assert "reasoning-effort-level" in capsys.readouterr().out
