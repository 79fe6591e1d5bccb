"""``traceloupe stub-provider``: the loopback stand-in for the providers, and its step scripts from a file."""

from __future__ import annotations

from typing import Any

import pytest

from web.cli import main


def test_the_stub_command_loads_step_scripts_from_a_file(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('["not", "a", "mapping"]')
    assert main(["stub-provider", "--port", "0", "--script", str(bad)]) == 1
    assert "cannot read the step script" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("dialect", "body"),
    [
        ("openai", {"messages": [
            {"role": "user", "content": "old question"}, {"role": "assistant", "content": "old answer"},
            {"role": "user", "content": "Refund order A-1"},
            {"role": "assistant", "tool_calls": [{"id": "1"}, {"id": "2"}]}, {"role": "tool", "content": "x"},
            {"role": "tool", "content": "y"}, {"role": "assistant", "tool_calls": [{"id": "3"}]},
            {"role": "tool", "content": "Refund order A-1 done"},
        ]}),
        ("anthropic", {"messages": [
            {"role": "user", "content": [{"type": "text", "text": "Refund order A-1"}]},
            {"role": "assistant", "content": [{"type": "tool_use"}]}, {"role": "user", "content": [{"type": "x"}]},
            {"role": "assistant", "content": [{"type": "tool_use"}]}, {"role": "user", "content": [{"type": "x"}]},
        ]}),
        ("gemini", {"contents": [
            {"role": "user", "parts": [{"text": "Refund order A-1"}]}, {"role": "model", "parts": []},
            {"role": "user", "parts": []}, {"role": "model", "parts": []}, {"role": "user", "parts": []},
        ]}),
        ("openai-responses", {"input": [
            {"role": "user", "content": "Refund order A-1"}, {"type": "function_call"}, {"type": "function_call"},
            {"type": "function_call_output"}, {"type": "function_call_output"}, {"type": "function_call"},
            {"type": "function_call_output"},
        ]}),
    ],
)  # fmt: skip
def test_a_turn_script_answers_a_request_by_the_step_it_stands_at(dialect: str, body: dict[str, Any]) -> None:
    """Two steps taken after the turn's user message (parallel calls are one step): the third is asked for."""
    from web.devtools.stub_turns import step_of

    assert step_of(dialect, body, ["Refund order A-1", "old question"]) == ("Refund order A-1", 2)
    assert step_of(dialect, body, ["not in it"]) is None
