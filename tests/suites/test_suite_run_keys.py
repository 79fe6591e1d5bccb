"""A suite run started with an idempotency key is recorded once per key, whichever process asks and however often."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from core.store import Store
from core.suites import Suites
from tests.suites import suite_data

KEY = "k" * 24


def _suites(store: Store, tmp_path: Path) -> Suites:
    suite_data.seed(store, tmp_path, 3)
    suites = Suites(store)
    suites.create("first", conversations=[suite_data.conversation_id(0), suite_data.conversation_id(1)])
    suites.create("second", conversations=[suite_data.conversation_id(2)])
    return suites


def test_the_same_key_from_two_processes_records_one_run(store: Store, tmp_path: Path) -> None:
    _suites(store, tmp_path)
    # Two Suites over one database stand for two server processes (or one restarted).
    one, other = Suites(store), Suites(store)
    with ThreadPoolExecutor(4) as pool:
        claims = list(
            pool.map(
                lambda s: s.claim_run("first", provider="openai", model="gpt-4o", idempotency_key=KEY),
                [one, other, one, other],
            )
        )
    assert len({run.run_id for run, _ in claims}) == 1
    assert sorted(created for _, created in claims) == [False, False, False, True]
    assert len(one.runs("first")) == 1


def test_a_key_names_its_own_suites_run_and_starts_nothing_in_another(store: Store, tmp_path: Path) -> None:
    suites = _suites(store, tmp_path)
    run, created = suites.claim_run("first", provider="openai", model="gpt-4o", idempotency_key=KEY)
    again, created_again = suites.claim_run("second", provider="openai", model="gpt-4o", idempotency_key=KEY)
    assert created and not created_again
    assert again.run_id == run.run_id and again.suite == "first"
    assert suites.runs("second") == ()


def test_runs_without_a_key_are_each_new(store: Store, tmp_path: Path) -> None:
    suites = _suites(store, tmp_path)
    a = suites.new_run("first", provider="openai", model="gpt-4o")
    b = suites.new_run("first", provider="openai", model="gpt-4o")
    assert a.run_id != b.run_id and len(suites.runs("first")) == 2
