"""``traceloupe suite``'s arguments and output: usage errors before anything is recorded, unknown names as one line,
and ids from traces printed with their control characters escaped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.store import Store
from core.suites import Suites
from tests.suites import suite_data
from web.cli import main

EVIL = "evil\x1b]52;c;aGk=\x07\x1b[2J\u202eid"


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = str(tmp_path / "cli.db")
    with Store.open(url) as store:
        suite_data.seed(store, tmp_path, 3)
        path = tmp_path / "evil.jsonl"
        messages = suite_data.messages(9)
        for m in messages:
            m["conversation_id"] = EVIL
        path.write_text("".join(json.dumps(m) + "\n" for m in messages))
        store.import_path(path)
    return url


@pytest.mark.parametrize(
    "args",
    [
        ["suite", "create", "x"],
        ["suite", "create", "x", "--search", "weather", "--conversation", "suite-conv-000"],
        ["suite", "create", "x", "--kind", "no-such-kind"],
        ["suite", "run", "x", "--provider", "openai"],
        ["suite", "run", "x", "--resume", "--provider", "openai"],
        ["suite", "run", "x", "--provider", "openai", "--model", "gpt-4o", "--concurrency", "0"],
    ],
)
def test_usage_errors_exit_2_and_record_nothing(db: str, args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*args, "--db", db]) == 2
    assert len([line for line in capsys.readouterr().err.splitlines() if line.startswith("traceloupe")]) == 1
    with Store.open(db) as store:
        assert Suites(store).summaries() == ()


def test_unknown_names_and_a_missing_key_exit_1_with_one_line(
    db: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["suite", "create", "three", "--search", "weather", "--db", db]) == 0
    capsys.readouterr()
    cases = [
        (["suite", "show", "nope"], "no suite 'nope'"),
        (["suite", "run", "nope", "--resume"], "no suite 'nope'"),
        (["suite", "run", "three", "--resume"], "no unfinished run"),
        (["suite", "run", "three", "--provider", "openai", "--model", "gpt-4o"], "set OPENAI_API_KEY"),
        (["suite", "run", "three", "--provider", "nope", "--model", "m"], "unknown provider"),
        (["suite", "create", "three", "--search", "weather"], "exists already"),
        (["suite", "create", "none", "--search", "no such text at all"], "no conversation matches"),
    ]
    for args, said in cases:
        assert main([*args, "--db", db]) == 1, args
        ours = [line for line in capsys.readouterr().err.splitlines() if line.startswith("traceloupe")]
        assert len(ours) == 1 and said in ours[0], (args, ours)  # (other lines: a handler another test left)
    with Store.open(db) as store:
        assert Suites(store).runs("three") == ()


def test_ids_from_traces_are_printed_escaped(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suite", "create", "evil", "--conversation", EVIL, "--db", db]) == 0
    assert main(["suite", "list", "--db", db]) == 0
    assert main(["suite", "show", "evil", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "\\x1b]52;c;aGk=\\x07\\x1b[2J\\u202eid" in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


def test_on_a_terminal_the_progress_bar_is_rewritten_in_place() -> None:
    import io

    from core.suites import Progress
    from web.cli.suite_output import ProgressPrinter

    stream = io.StringIO()
    printer = ProgressPrinter(stream, terminal=True)
    printer.update(Progress({"pending": 4}, 0.0))
    printer.update(Progress({"matched": 2, "failed": 1, "pending": 1}, 0.0125))
    printer.close()
    frames = stream.getvalue().split("\r\x1b[K")[1:]
    assert len(frames) == 2 and stream.getvalue().endswith("\n")
    assert frames[0].startswith("[........................] 0/4 done") and "ETA ?" in frames[0]
    assert "3/4 done, 0 diverged, 1 failed, 1 remaining, $0.012500 so far, ETA 0:00:0" in frames[1]


def test_suite_list_describes_a_filter_as_the_suite_pages_do(db: str, capsys: pytest.CaptureFixture[str]) -> None:
    from core.store.filters import describe

    picked = ["--conversation", "suite-conv-000", "--conversation", "suite-conv-001"]
    assert main(["suite", "create", "picked", *picked, "--db", db]) == 0
    assert main(["suite", "create", "found", "--search", "weather", "--db", db]) == 0
    capsys.readouterr()
    assert main(["suite", "list", "--db", db]) == 0
    out = capsys.readouterr().out
    assert describe({"conversations": ["suite-conv-000", "suite-conv-001"]}) in out
    assert describe({"search": "weather"}) in out
