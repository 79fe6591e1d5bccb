"""Step replays send the agent's tools: through the real SDKs against the strict stub, a three-step turn with stored
tools matches with every request carrying them in the provider's form; without stored tools it matches on tools
inferred from the recorded calls and says so; ``--tools``/``--tool-choice`` override what is stored."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.errors import MisuseError
from core.providers import NamedToolChoice, ToolSpec
from core.replay.sent_tools import GivenTools
from core.replay.steps import replay_steps
from core.store import Store
from tests.replay.replay_data import import_lines
from tests.replay.steps_data import CALLS, STEPS_CONVERSATION, TURN, identical_steps, script, steps_conversation
from web.devtools.stub_provider import StubServer

MODELS = {
    "openai": "gpt-4o",
    "openai-responses": "gpt-4.1",
    "anthropic": "claude-sonnet-4-20250514",
    "gemini": "gemini-2.5-flash",
}
NAMES = ["search_flights", "book", "weather", "hotel"]
STORED = [
    {"name": "search_flights", "description": "Search flights.", "parameters": {
        "type": "object", "properties": {"to": {"type": "string"}, "date": {"type": "string"},
                                         "passengers": {"type": "integer"}}, "required": ["to"]}},
    {"name": "book", "description": "Book a flight.", "parameters": {
        "type": "object", "properties": {"flight": {"type": "string"}, "seats": {"type": "integer"},
                                         "extras": {"type": "object"}}, "required": ["flight"]}},
    {"name": "weather", "description": "The weather of a city.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}},
    {"name": "hotel", "description": "Book a hotel.", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}}}},
]  # fmt: skip
WITH_TOOLS = "conv-steps-tools"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """The steps turn twice: stored with the agent's tools (the turn's context line), and stored without."""
    turn = f"{WITH_TOOLS}-{TURN}"
    params = {"max_tokens": 512}
    context = {"traceloupe_request": {"conversation_id": WITH_TOOLS, "turn": turn, "tools": STORED,
                                      "tool_choice": "auto", "params": params}}  # fmt: skip
    with Store.open(str(tmp_path / "tools.db")) as opened:
        lines = [*steps_conversation(), *steps_conversation(WITH_TOOLS), context]
        import_lines(opened, tmp_path / "tools.jsonl", lines)
        yield opened


def _sent(dialect: str, body: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]], Any]:
    """The tool names a request carried, each tool's schema, and its tool choice, read in the provider's form."""
    if dialect == "gemini":
        (tool,) = body["tools"]
        declarations = tool["functionDeclarations"]
        keys = ("parametersJsonSchema", "parameters_json_schema", "parameters")  # the SDK sends snake case
        schemas = [next(d[k] for k in keys if k in d) for d in declarations]
        return [d["name"] for d in declarations], schemas, body.get("toolConfig", {}).get("functionCallingConfig")
    if dialect == "openai":
        assert all(t["type"] == "function" for t in body["tools"])
        functions = [t["function"] for t in body["tools"]]
        return [f["name"] for f in functions], [f["parameters"] for f in functions], body.get("tool_choice")
    if dialect == "openai-responses":
        assert all(t["type"] == "function" for t in body["tools"])
        return [t["name"] for t in body["tools"]], [t["parameters"] for t in body["tools"]], body.get("tool_choice")
    return [t["name"] for t in body["tools"]], [t["input_schema"] for t in body["tools"]], body.get("tool_choice")


CHOICE_AUTO = {"openai": "auto", "openai-responses": "auto", "anthropic": {"type": "auto"}, "gemini": {"mode": "AUTO"}}


def _refusals(stub: StubServer) -> list[dict[str, Any]]:
    return list(getattr(stub.state, "refusals", []))


@pytest.mark.parametrize("dialect", list(MODELS))
def test_a_turn_with_stored_tools_matches_and_every_request_carries_them_in_the_providers_form(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    model = MODELS[dialect]
    script(stub, model, identical_steps())
    run = replay_steps(store, WITH_TOOLS, dialect, model, environ=stub_env)
    assert (run.status, [s.verdict for s in run.steps]) == ("matched", ["same", "same", "same", "same_final"])
    assert (run.tools_source, run.tool_names, run.tool_choice) == ("stored", NAMES, "auto")
    assert len(stub.state.requests) == 4 and _refusals(stub) == []
    for request in stub.state.requests:
        names, schemas, choice = _sent(dialect, request.body)
        assert names == NAMES and choice == CHOICE_AUTO[dialect]
        assert schemas[1]["properties"]["seats"]["type"].lower() == "integer"  # the stored schema, not a guess
    assert all(s.request_body.get("max_tokens", 512) == 512 for s in run.steps if dialect != "gemini")


@pytest.mark.parametrize("dialect", list(MODELS))
def test_the_same_turn_without_stored_tools_matches_on_inferred_tools_and_says_so(
    store: Store, stub: StubServer, stub_env: dict[str, str], dialect: str
) -> None:
    model = MODELS[dialect]
    script(stub, model, identical_steps())
    run = replay_steps(store, STEPS_CONVERSATION, dialect, model, environ=stub_env)
    assert run.status == "matched" and _refusals(stub) == []
    assert (run.tools_source, run.tool_names) == ("inferred", NAMES)
    # Step 1's history holds no call yet: the tools of the steps to come are offered from the first request.
    assert all(_sent(dialect, r.body)[0] == NAMES for r in stub.state.requests)


def test_given_tools_and_tool_choice_replace_the_stored_ones(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    tools = tuple(ToolSpec(t["name"], "given", t["parameters"]) for t in STORED)
    script(stub, "gpt-4o", [{"text": "", "tool_calls": CALLS[0]}, {"text": "no more"}])
    given = GivenTools(tools, NamedToolChoice("search_flights"))
    run = replay_steps(store, WITH_TOOLS, "openai", "gpt-4o", environ=stub_env, tools=given)
    assert (run.tools_source, run.tool_choice) == ("given", {"name": "search_flights"})
    first = stub.state.requests[0].body
    assert first["tool_choice"] == {"type": "function", "function": {"name": "search_flights"}}
    assert {t["function"]["description"] for t in first["tools"]} == {"given"}


def test_a_tool_choice_forcing_a_tool_not_sent_is_refused_before_anything_is_recorded(
    store: Store, stub: StubServer, stub_env: dict[str, str]
) -> None:
    with pytest.raises(MisuseError, match="forces tool 'cancel', which this replay does not send"):
        replay_steps(store, WITH_TOOLS, "openai", "gpt-4o", environ=stub_env,
                     tools=GivenTools(tool_choice=NamedToolChoice("cancel")))  # fmt: skip
    assert store.list_step_runs(conversation_id=WITH_TOOLS, limit=1) == () and stub.state.requests == []


def test_replay_steps_takes_tools_from_a_file_on_the_command_line(
    tmp_path: Path, stub: StubServer, stub_env: dict[str, str], monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    from web.cli import main

    for name, value in stub_env.items():
        monkeypatch.setenv(name, value)
    db = str(tmp_path / "cli.db")
    with Store.open(db) as opened:
        import_lines(opened, tmp_path / "cli.jsonl", steps_conversation())
    anthropic_shape = [{"name": t["name"], "input_schema": t["parameters"]} for t in STORED]
    (tmp_path / "tools.json").write_text(json.dumps(anthropic_shape))
    script(stub, "gpt-4o", identical_steps())
    argv = ["replay", "--conversation", STEPS_CONVERSATION, "--provider", "openai", "--model", "gpt-4o", "--steps",
            "--tools", str(tmp_path / "tools.json"), "--tool-choice", "required", "--db", db]  # fmt: skip
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "tools sent (given for this replay): search_flights, book, weather, hotel; tool choice required" in err
    assert "inferred" not in err
    assert stub.state.requests[0].body["tool_choice"] == "required"
