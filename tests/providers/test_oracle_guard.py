"""The oracle guard (tests/providers/oracle_guard.py) tells a handled refusal from a silent one: a build that fixes
nothing and a check that reports nothing are silent; a clamp naming its rule and a preflight error are not."""

from __future__ import annotations

import pytest

from core.preflight import check_body
from core.providers import RequestOptions, provider_named
from tests.providers.builders import run, user
from tests.providers.oracle_guard import watch

HELLO = [user("hello", 1)]


def test_a_build_that_fixes_nothing_is_seen_as_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    with watch(monkeypatch) as seen:
        run("openai", HELLO, model="gpt-4o", temperature=1.0)
    assert seen.touched and not seen.handled


def test_a_clamp_naming_its_rule_is_seen_as_a_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    with watch(monkeypatch) as seen:
        run("openai", HELLO, model="gpt-4o", temperature=9.0)
    assert seen.fixes == {"temperature-range"} and not seen.uncatalogued


def test_a_preflight_error_is_seen_and_a_clean_check_is_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    dialect = provider_named("openai")
    profile = dialect.profile(RequestOptions(model="gpt-4o"))
    good = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    with monkeypatch.context() as patched, watch(patched) as clean:
        check_body(dialect, good, profile)
    with monkeypatch.context() as patched, watch(patched) as refused:
        check_body(dialect, {**good, "temperature": 9.0}, profile)
    assert clean.touched and not clean.handled
    assert refused.errors == {"temperature-range"}
