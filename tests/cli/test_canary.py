"""The operator's key never leaves ``traceloupe replay``: not in the database, the output or a log line.

A canary key is set in the environment for every provider; reply runs and step runs go through the command
line, a reply and a final answer that echo the key and every kind of failure included, with logging at DEBUG
(the SDKs' own debug logs too) and the process's stdout/stderr captured. Then everything is searched. The same
flow through the dashboard is tests/replay/test_canary.py.
"""

from __future__ import annotations

import logging

import pytest

from core.store import Store
from tests.replay.canary import assert_nowhere, dump_database
from tests.replay.conftest import CANARY_KEY
from tests.replay.replay_data import CONVERSATION, DAMAGED, ORIGINAL_TEXT
from web.cli import main
from web.devtools.stub_provider import Reply, StubServer


@pytest.mark.usefixtures("cli_env")
def test_the_canary_key_appears_nowhere(
    replay_store: Store,
    replay_db: str,
    stub: StubServer,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    db = replay_db
    stub.state.script.append(Reply(text=f"echo {CANARY_KEY}"))  # a provider that echoes the key
    assert main(["replay", "--db", db, "--conversation", CONVERSATION, "--provider", "doubao", "--model", "d"]) == 0
    argv = ["replay", "--db", db, "--conversation", CONVERSATION, "--provider", "zhipu", "--model", "stub-error-500"]
    assert main(argv) == 3
    # Step runs: a matched one whose final answer echoes the key, a failed one per provider, a refused one.
    steps = ["replay", "--db", db, "--conversation", CONVERSATION, "--steps", "--json", "--provider"]
    call = {"name": "weather", "arguments": {"city": "Lisbon"}}
    for dialect in ("openai", "anthropic", "gemini"):
        final = {"text": f"{ORIGINAL_TEXT} echo {CANARY_KEY}"}  # the recorded answer, near enough, and the key
        stub.state.script_steps("gpt-4o", [{"text": "", "tool_calls": [call]}, final])
        assert main([*steps, dialect, "--model", "gpt-4o"]) == 0
        assert main([*steps, dialect, "--model", "stub-error-500"]) == 3
    damaged = ["replay", "--db", db, "--conversation", DAMAGED, "--steps", "--provider", "openai", "--model", "m"]
    assert main(damaged) == 1
    assert main(["runs", "--db", db]) == 0
    assert main(["runs", "--db", db, "--json"]) == 0
    out, err = capfd.readouterr()
    dump = dump_database(replay_store)
    logs = caplog.text + "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)

    # The canary did travel: to the stub, in the auth header, once per provider call.
    assert sum(CANARY_KEY in " ".join(r.headers.values()) for r in stub.state.requests) == len(stub.state.requests) > 10
    assert "[redacted]" in dump  # the echoed key was replaced before it was stored
    assert "HTTP Request" in logs
    assert_nowhere({"database": dump, "logs": logs, "stdout": out, "stderr": err})
