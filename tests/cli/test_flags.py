"""Every number and name a flag takes has a range or a rule: past it, argparse's one line and exit 2, before any
database is opened, never "internal error"."""

from __future__ import annotations

from pathlib import Path

import pytest

from web.cli import main

BIG = [str(2**31), str(2**63), str(2**64), "1e400", "nan", "-1"]
"""Past PostgreSQL's INTEGER, SQLite's INTEGER, any 64-bit column; not finite; negative."""


def _exit_code(argv: list[str]) -> int:
    """``main``'s code: argparse's own refusals exit 2 from inside it, the commands' checks return 2."""
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


def _cases(db: str) -> list[tuple[list[str], str]]:
    replay = ["replay", "--db", db, "--conversation", "c", "--provider", "openai", "--model", "gpt-4o"]
    suite = ["suite", "run", "s", "--db", db, "--provider", "openai", "--model", "gpt-4o"]
    return [
        ([*replay, "--steps", "--max-steps"], "--max-steps"),
        ([*replay, "--steps", "--max-cost"], "--max-cost"),
        ([*replay, "--timeout"], "--timeout"),
        ([*suite, "--concurrency"], "--concurrency"),
        ([*suite, "--max-cost"], "--max-cost"),
        ([*suite, "--timeout"], "--timeout"),
        (["runs", "--db", db, "--limit"], "--limit"),
        (["conversations", "--db", db, "--limit"], "--limit"),
        (["serve", "--db", db, "--port"], "--port"),
        (["serve", "--db", db, "--import-max-mib"], "--import-max-mib"),
        (["serve", "--db", db, "--build-seconds"], "--build-seconds"),
        (["serve", "--db", db, "--build-concurrency"], "--build-concurrency"),
        (["serve", "--db", db, "--max-connections"], "--max-connections"),
        (["import", "x.jsonl", "--db", db, "--max-file-mib"], "--max-file-mib"),
        (["import", "x.jsonl", "--db", db, "--max-line-mib"], "--max-line-mib"),
        (["payload", "x.jsonl", "--provider", "openai", "--max-tokens"], "--max-tokens"),
        (["diff", "x.jsonl", "--left", "openai", "--right", "anthropic", "--width"], "--width"),
        (["stub-provider", "--port"], "--port"),
        (["worker", "--db", db, "--concurrency"], "--concurrency"),
        (["worker", "--db", db, "--stalled-after"], "seconds"),
        (["worker", "--db", db, "--max-attempts"], "--max-attempts"),
        (["worker", "--db", db, "--rate-limit-wait"], "seconds"),
        (["serve", "--db", db, "--workers"], "--workers"),
    ]


@pytest.mark.parametrize("value", BIG)
def test_an_out_of_range_number_flag_is_one_argparse_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    db = str(tmp_path / "never.db")
    for args, flag in _cases(db):
        if value == "-1" and flag in ("--max-cost",):
            continue  # checked below: "-1" reads as a flag to argparse
        code = _exit_code([*args, value])
        err = capsys.readouterr().err
        assert code == 2, (args, value)
        assert flag in err and "internal error" not in err, (flag, err)
    assert not Path(db).exists()


@pytest.mark.parametrize(
    "flag,value", [("--model", "gpt-4o\x00"), ("--model", "g" * 3_000_000), ("--upto", "a\x00"), ("--turn", "t\nx")]
)
def test_a_name_flag_with_a_control_character_or_megabytes_long_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    args = ["replay", "--db", str(tmp_path / "n.db"), "--conversation", "c", "--provider", "openai"]
    if flag != "--model":
        args += ["--model", "gpt-4o"]
    if flag == "--turn":
        args.append("--steps")
    code = _exit_code([*args, flag, value])
    err = capsys.readouterr().err
    assert code == 2 and flag in err and len(err) < 2000


@pytest.mark.parametrize("limit", ["openai=0", f"openai={2**63}", "openai=1e9", "openai"])
def test_a_provider_limit_out_of_range_is_one_line_and_no_worker_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], limit: str
) -> None:
    code = _exit_code(["worker", "--db", str(tmp_path / "never.db"), "--provider-limit", limit])
    err = capsys.readouterr().err
    assert code in (1, 2) and "provider limit" in err and "internal error" not in err, err
