"""A bug inside any subcommand is one line on stderr and a non-zero exit, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from web.cli import COMMANDS, EXIT_INTERNAL_ERROR, main

GOOD = '{"role":"user","msg_type":"text","content":"hi","msg_id":"m1","conversation_id":"c"}\n'

# command -> (arguments after the name, the dotted attribute made to fail deep inside it)
CASES: dict[str, tuple[list[str], str]] = {
    "check": (["{file}"], "core.reader.read_path"),
    "repair": (["{file}", "-o", "{out}"], "core.reader.read_path"),
    "payload": (["{file}", "--provider", "openai"], "core.reader.read_path"),
    "diff": (["{file}", "--left", "openai", "--right", "anthropic"], "core.reader.read_path"),
    "stub-provider": (["--port", "0"], "web.devtools.stub_provider.StubServer.__init__"),
    "serve": (["--db", "{db}"], "core.store.Store.open"),
    "demo": (["--port", "0"], "web.devtools.demo_data.build"),
    "import": (["{file}", "--db", "{db}"], "core.store.Store.open"),
    "export": (["--db", "{db}"], "core.store.Store.open"),
    "conversations": (["--db", "{db}"], "core.store.Store.open"),
    "runs": (["--db", "{db}"], "core.store.Store.open"),
    "replay": (["--db", "{db}", "--conversation", "c", "--provider", "p", "--model", "m"], "core.store.Store.open"),
    "models": (["--json"], "core.models.model_table"),
    "rules": (["--json"], "core.preflight.catalogue.catalogue"),
    "db": (["status", "--db", "{db}"], "core.store.Store.open"),
    "worker": (["--db", "{db}"], "core.store.Store.open"),
    "suite": (["list", "--db", "{db}"], "core.store.Store.open"),
    "keys": (["list", "--db", "{db}"], "core.store.Store.open"),
    "users": (["list", "--db", "{db}"], "core.store.Store.open"),
    "audit": (["--db", "{db}"], "core.store.Store.open"),
}


def test_every_command_is_covered() -> None:
    assert sorted(CASES) == sorted(COMMANDS)


@pytest.mark.parametrize("command", sorted(CASES))
def test_an_internal_error_is_one_line_and_a_non_zero_exit(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    args, target = CASES[command]
    file = tmp_path / "in.jsonl"
    file.write_text(GOOD)
    db = tmp_path / "t.db"
    db.touch()
    places = {"file": str(file), "out": str(tmp_path / "out.jsonl"), "db": str(db)}

    def fail(*_: object, **__: object) -> None:
        raise RuntimeError("forced\nfailure \x1b[2J")

    monkeypatch.setattr(target, fail)
    monkeypatch.delenv("TRACELOUPE_TRACEBACK", raising=False)
    code = main([command, *(a.format(**places) for a in args)])
    out, err = capsys.readouterr()
    assert code == EXIT_INTERNAL_ERROR
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert lines[-1] == (
        f"traceloupe {command}: internal error (RuntimeError: forced failure \\x1b[2J); "
        "this is a bug in Traceloupe: TRACELOUPE_TRACEBACK=1 shows where"
    )
    assert all("internal error" not in line for line in lines[:-1])  # demo and serve may say what they start
