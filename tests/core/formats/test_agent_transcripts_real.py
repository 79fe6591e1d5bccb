"""Real agent transcripts (pydantic-ai, inspect_ai, Vercel AI SDK; ``tests/formats/data/README.md`` cites each)
imported: the conversations, the messages per role and kind, the tool calls and results each must give, what is
kept aside, and a second import that changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from core.formats.importing import read_foreign
from core.formats.registry import SNIFF_BYTES, sniff
from core.store import Store
from tests.core.formats.summary import summary, tool_calls
from web.cli import main

DATA = Path(__file__).parents[2] / "formats" / "data"
FOLDERS = ["pydantic_ai", "inspect", "vercel_ai"]
SECRET_PLAN = ["user:text", "  assistant:text+1calls", "  tool:call_8vnYkl9oL2oW09LaWsgvQFoM", "  system"]
BASH_TURN = ["user:text", *(line for n in range(5) for line in ("  assistant:text+1calls", f"  tool:hardcoded_{n}"))]
STEPS = ["user:text", "  assistant:text+1calls", "  tool:call-1", "  assistant:text+2calls", "  tool:call-2"]
SCREENSHOTS = [(f"call-{n}", "screenshot", f'{{"value": "value-{n}"}}') for n in range(1, 5)]
WEATHER = [("call-1", "weather", '{"city": "Tokyo"}')]
BASH_LS = [(f"hardcoded_{n}", "bash", '{"cmd": "ls"}') for n in range(5)]
POPULARITY = ["system", "user:text", "  assistant:text"]

# file, format sniffed, [(conversation summary, tool calls)] in order of the conversations
CASES: list[tuple[str, str, list[tuple[list[str], list[tuple[str, str, str]]]]]] = [
    (
        "pydantic_ai/agent_sandbox_secret_plan.json",
        "pydantic-ai",
        [
            (
                [*SECRET_PLAN, "  assistant:text"],
                [("call_8vnYkl9oL2oW09LaWsgvQFoM", "secret_plan", '{"password":42}')],
            )
        ],
    ),
    (
        "pydantic_ai/test_messages_tool_return_url_dict.json",
        "pydantic-ai",
        [(["user:text", "  assistant:text+1calls", "  tool:call_1"], [("call_1", "my_tool", "{}")])],
    ),
    (
        "inspect/log_message_deduplication.eval",
        "inspect",
        [
            (
                [*BASH_TURN, "  assistant:text"],
                BASH_LS,
            )
        ],
    ),
    ("inspect/log_streaming.eval", "inspect", [(POPULARITY, [])] * 4),
    ("inspect/log_images.json", "inspect", [(["system", "user:multipart", "  assistant:text"], [])]),
    (
        "vercel_ai/ui_tool_approval_weather.json",
        "vercel-ai",
        [(["user:text", "  assistant:text+1calls", "  tool:call-1", "  assistant:text"], WEATHER)],
    ),
    (
        "vercel_ai/model_tool_approval_weather.json",
        "vercel-ai",
        [(["user:text", "  assistant:text+1calls", "  tool:call-1", "  assistant:text"], WEATHER)],
    ),
    (
        "vercel_ai/ui_dynamic_tool.json",
        "vercel-ai",
        [(["user:text", "  assistant:text+1calls", "  tool:call-1", "user:text"], SCREENSHOTS[:1])],
    ),
    (
        "vercel_ai/model_tool_steps.json",
        "vercel-ai",
        [
            (
                [*STEPS, "  tool:call-3", "  assistant:text+1calls", "  tool:call-4", "  assistant:text"],
                SCREENSHOTS,
            )
        ],
    ),
]


def _imported(name: str) -> tuple[str, dict[str, list[dict[str, Any]]], list[str]]:
    path = DATA / name
    chosen = sniff(path.read_bytes()[:SNIFF_BYTES], str(path))
    with path.open("rb") as handle:
        records, foreign = read_foreign(chosen, handle, str(path))
    conversations: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        conversations.setdefault(record.message.conversation_id, []).append(record.raw)
    return chosen.name, conversations, [n.text for n in foreign.notes]


def _records(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for m in messages for r in [m, *m.get("intermediate_trace", {}).get("records", [])]]


def _unplaced(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = (r.get("additional_kwargs", {}).get("traceloupe_import", {}).get("unplaced") for r in _records(messages))
    return [u for u in found if u]


@pytest.mark.parametrize(("name", "format_name", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_real_transcript_gives_its_conversations_and_tool_calls(
    name: str, format_name: str, expected: list[tuple[list[str], list[tuple[str, str, str]]]]
) -> None:
    chosen, conversations, _ = _imported(name)
    assert chosen == format_name
    assert [(summary(m), tool_calls(m)) for m in conversations.values()] == expected


def test_pydantic_ai_keeps_usage_and_provider_ids_aside_and_reads_the_model_into_the_context() -> None:
    path = DATA / "pydantic_ai" / "agent_sandbox_secret_plan.json"
    with path.open("rb") as handle:
        records, foreign = read_foreign(sniff(path.read_bytes()[:SNIFF_BYTES], str(path)), handle, str(path))
    (messages,) = [[r.raw for r in records]]
    kept = _unplaced(messages)
    assert [k["provider_response_id"] for k in kept] == [
        "chatcmpl-CU273cUPnJQKMnNQoK00SW7oteSdG",
        "chatcmpl-CU273OuDMBD9CLae0uEOsFzHgCA7R",
    ]
    assert [k["usage"]["output_tokens"] for k in kept] == [14, 25]
    [line] = foreign.store_lines
    assert (line.value["traceloupe_request"]["provider"], line.value["traceloupe_request"]["model"]) == (
        "openai",
        "gpt-4o-mini-2024-07-18",
    )
    result = _records(messages)[2]
    assert result["tool_reses"][0]["result"] == "The secret plan is revealed."
    assert result["tool_reses"][0]["name"] == "secret_plan"


def test_a_history_ending_on_a_tool_return_stores_it_and_says_no_answer_was_recorded() -> None:
    _, conversations, notes = _imported("pydantic_ai/test_messages_tool_return_url_dict.json")
    (messages,) = conversations.values()
    result = _records(messages)[-1]["tool_reses"][0]
    assert result["result"] == '{"items": [{"name": "Example", "url": "/some/path/12345"}]}'
    assert notes == ["model call output was not captured: its input alone is stored"]


def test_inspect_gives_one_conversation_per_sample_and_epoch_named_by_the_eval() -> None:
    _, conversations, _ = _imported("inspect/log_streaming.eval")
    assert sorted(conversations) == [f"3RWm2YmdLiKCyQMzEcERin:{s}:epoch{e}" for s in (1, 2) for e in (1, 2)]
    scores = [_unplaced(m)[0]["scores"] for m in conversations.values()]
    assert [sorted(s) for s in scores] == [["match"]] * 4  # the scorer's, kept with the last answer


def test_inspect_resolves_attachments_and_reads_the_tools_of_the_model_events() -> None:
    path = DATA / "inspect" / "log_message_deduplication.eval"
    with path.open("rb") as handle:
        records, foreign = read_foreign(sniff(path.read_bytes()[:SNIFF_BYTES], str(path)), handle, str(path))
    [line] = foreign.store_lines
    context = line.value["traceloupe_request"]
    assert (context["model"], context["tool_choice"]) == ("hardcoded", "auto")
    tools = {t["name"]: t["description"] for t in context["tools"]}
    assert tools["python"].startswith("Use the python function to execute Python code.")
    assert not any("attachment://" in str(r.raw) for r in records)
    _, conversations, _ = _imported("inspect/log_images.json")
    (messages,) = conversations.values()
    image = messages[1]["content"][1]
    assert image["type"] == "image" and image["url"].startswith("data:image/png;base64,")


def test_a_transcript_opening_with_an_answer_gets_a_marked_placeholder_turn() -> None:
    _, conversations, notes = _imported("vercel_ai/model_tool_steps.json")
    (messages,) = conversations.values()
    assert messages[0]["additional_kwargs"]["traceloupe_import"] == {"placeholder": True}
    assert notes == ["no user message opens this conversation: a marked placeholder turn"]


def test_ui_and_model_messages_of_one_conversation_give_the_same_turns() -> None:
    _, ui, _ = _imported("vercel_ai/ui_tool_approval_weather.json")
    _, model, _ = _imported("vercel_ai/model_tool_approval_weather.json")
    # The snapshot's writer sorts object keys: results compare as JSON values, not text.
    contents = [
        [
            (r["role"], r.get("content"), [orjson.loads(t["result"]) for t in r.get("tool_reses", [])])
            for r in _records(m)
        ]
        for conversations in (ui, model)
        for m in conversations.values()
    ]
    assert contents[0] == contents[1]
    kept = [p["type"] for k in _unplaced(next(iter(model.values()))) for p in k["parts"]]
    assert kept == ["tool-approval-request", "tool-approval-response"]


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_second_import_changes_nothing_and_an_export_reimports_unchanged(
    folder: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    paths = sorted(str(p) for p in (DATA / folder).iterdir() if p.suffix in (".json", ".eval"))
    assert main(["import", "--from", "auto", *paths, "--db", url]) == 0
    with Store.open(url) as store:
        first = list(store.export_texts())
    assert len(first) > 1
    assert main(["import", "--from", "auto", *paths, "--db", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"total: 0 messages imported from {len(paths)} of {len(paths)} files")
    exported, again = tmp_path / "export.jsonl", f"sqlite:///{tmp_path / 'again.db'}"
    assert main(["export", "--db", url, "-o", str(exported)]) == 0
    assert main(["import", str(exported), "--db", again]) == 0
    with Store.open(again) as store:
        assert list(store.export_texts()) == first
