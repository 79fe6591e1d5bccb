"""The README opens with the two set-up commands, then a first hour in commands that the CLI accepts as written."""

from __future__ import annotations

import argparse
import importlib
import shlex
from pathlib import Path

from web.cli import COMMANDS

README = Path(__file__).resolve().parents[1] / "README.md"
SET_UP = [
    "# Traceloupe",
    "",
    "```sh",
    "bash scripts/run.sh     # install into .venv and run the demo dashboard (prints its URL: http://127.0.0.1:8000/)",
    "bash scripts/test.sh    # install what the tests need (idempotently) and run the whole suite",
    "```",
]


def _walkthrough(lines: list[str]) -> tuple[str, list[str]]:
    """The prose after the set-up block up to the next code block, and that block's lines."""
    start = lines.index("```sh", len(SET_UP))
    end = lines.index("```", start + 1)
    return " ".join(lines[len(SET_UP) : start]), lines[start + 1 : end]


def _parses(line: str) -> argparse.Namespace:
    argv = shlex.split(line, comments=True)
    assert argv[0] == "traceloupe", line
    parser = argparse.ArgumentParser(prog=f"traceloupe {argv[1]}", exit_on_error=False)
    importlib.import_module(COMMANDS[argv[1]][0]).register(parser)
    return parser.parse_args(argv[2:])


def test_the_readme_opens_with_the_set_up_then_a_first_hour_in_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[: len(SET_UP)] == SET_UP
    prose, commands = _walkthrough(lines)
    assert "`scripts/run.sh` passes its flags on to `traceloupe demo`" in prose
    steps = [shlex.split(line, comments=True)[1:3] for line in commands]
    assert [s[0] for s in steps] == ["import", "serve", "diff", "replay", "suite", "suite"]
    assert steps[-1] == ["suite", "run"]
    parsed = [_parses(line) for line in commands]  # every command as written is one the CLI takes
    assert parsed[3].steps
    assert "--create" in commands[1]  # serve names the flag a missing database needs


def _section(lines: list[str], heading: str) -> list[str]:
    """The lines of a ``## `` section, up to the next one."""
    start = lines.index(heading)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def test_the_shared_server_section_sets_up_an_admin_a_remote_server_a_key_and_the_audit_in_commands_the_cli_takes() -> (
    None
):
    section = _section(README.read_text(encoding="utf-8").splitlines(), "## Shared server")
    start = section.index("```sh")
    commands = [line.split("|")[-1].strip() for line in section[start + 1 : section.index("```", start + 1)]]
    parsed: dict[str, argparse.Namespace] = {}
    for line in commands:  # the first of each command: the admin is made first
        parsed.setdefault(shlex.split(line, comments=True)[1], _parses(line))
    assert parsed["users"].action == "create" and parsed["users"].role == "admin"
    assert parsed["serve"].allow_remote and parsed["serve"].allowed_hosts == ["traces.example.com"]
    assert parsed["keys"].action == "create" and parsed["keys"].user == "bob"
    assert parsed["audit"].user == "bob"
    prose = " ".join(section)
    for needed in ("TLS proxy", "--secure-cookies", "`viewer`", "`reviewer`", "`admin`", "keys revoke", "Bearer"):
        assert needed in prose, needed
