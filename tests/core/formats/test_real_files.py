"""Real files from public repositories (``tests/formats/data/README.md`` cites each) imported: the conversations,
the messages per role and kind, the tool calls and results each must give, and a second import that changes
nothing."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from core.formats import importing
from core.formats.importing import read_foreign
from core.formats.registry import SNIFF_BYTES, sniff
from core.store import Store
from tests.core.formats.summary import summary, tool_calls
from web.cli import main

DATA = Path(__file__).parents[2] / "formats" / "data"

PXI_TURN = [
    "system",
    "user:text",
    *["  assistant:text+1calls", "  tool:call-01", "  assistant:text+1calls", "  tool:call-02"],
    *["  assistant:text+1calls", "  tool:call-03", "  assistant:text"],
    "user:text",
    *(line for n in range(4, 12) for line in ("  assistant:text+1calls", f"  tool:call-{n:02d}")),
    "  assistant:text",
]
PXI_SUBAGENT = [
    "system",
    *["user:text", "  assistant:text+1calls", "  tool:call-01", "  assistant:text"],
    *["user:text", "  assistant:text+1calls", "  tool:call-02", "  assistant:text"],
    *["user:text", "  assistant:text+1calls", "  tool:call-03", "  assistant:text+3calls"],
    *["  tool:call-04", "  tool:call-05", "  tool:call-06"],
    *(line for n in range(7, 20) for line in ("  assistant:text+1calls", f"  tool:call-{n:02d}")),
    "  assistant:text",
]
LANGCHAIN_AGENT = [
    *["system", "user:text", "  assistant:text+1calls", "  tool:call_paris", "  assistant:text"],
    *["user:text", "  assistant:text+1calls", "  tool:call_lyon", "  assistant:text"],
]
LANGGRAPH_SUPERVISOR = [
    *["system", "user:text", "  system", "  assistant:text+1calls"],  # the supervisor routes to the coder
    *["user:text", "  assistant:text+1calls", "  tool:call_kJJfHdv1RIqUrTx58bpxn1pD", "  assistant:text"],  # the coder
    *["user:text", "  system"],  # the supervisor again, the coder's answer relayed as a user message, not answered yet
]
"""LangGraph's multi-agent supervisor tutorial run with LangSmith tracing on: three histories in one trace."""

# file, format sniffed, {conversation_id: summary}, tool calls (id, name, arguments) of the first conversation
INSTRUMENTED_AGENT = [
    *["system", "user:text", "  assistant:text+2calls", "  tool:call_{c}_paris", "  tool:call_{c}_lyon"],
    *["  assistant:text", "user:text", "  assistant:text"],
]
"""The agent of ``tests.ingest.instrumented_agents`` recorded by a real instrumentation (``record_instrumented``)."""
INSTRUMENTED_FILES = [
    ("otlp/genai_openai_agent.json", "otlp"),
    ("otlp/genai_openai_responses_agent.json", "otlp"),
    ("otlp/genai_anthropic_agent.json", "otlp"),
    ("otlp/openllmetry_openai_agent.json", "otlp"),
    ("otlp/openllmetry_anthropic_agent.json", "otlp"),
    ("openinference/openinference_openai_agent.json", "openinference"),
    ("openinference/openinference_openai_responses_agent.json", "openinference"),
    ("openinference/openinference_anthropic_agent.json", "openinference"),
]
KEYLESS_CONVERSATIONS = {
    "otlp/openllmetry_openai_agent.json": "082fa652f5b8d62a",
    "otlp/openllmetry_anthropic_agent.json": "f251cc3ebdcdcfee",
}
"""OpenLLMetry's model-call spans carry no conversation id: the conversation is named after its first call's span."""


GALILEO_LANGGRAPH = [
    ("weather", "4d1a8af4b5d10966", ("call_BKNI3yfXs4ZRl7ZIDQEw9hK3", "weather_tool", '{"city": "San Francisco"}')),
    (
        "calculator",
        "4275f231bc53af4f",
        ("call_kp4Mb6VxdRJVhqQlp2gloUVi", "convert_tool", '{"value": 100, "from_unit": "km", "to_unit": "mi"}'),
    ),
    (
        "rag",
        "bf29e8f0417ba111",
        ("call_ZhCMKEpHjx1mTFZrcvjZI8O2", "retrieve_documents", '{"query": "RAG how it works"}'),
    ),
]
"""OTLP/protobuf export requests of OpenLLMetry-instrumented LangGraph agents (rungalileo/galileo-agents), one span
each: an agent's second model call, resending its first call's tool call and the tool's result."""


def _instrumented_case(
    name: str, format_name: str
) -> tuple[str, str, dict[str, list[str]], list[tuple[str, str, str]]]:
    c = Path(name).stem
    conversation = KEYLESS_CONVERSATIONS.get(name, c.replace("_", "-"))
    calls = [(f"call_{c}_{city.lower()}", "weather", f'{{"city": "{city}"}}') for city in ("Paris", "Lyon")]
    return name, format_name, {conversation: [line.format(c=c) for line in INSTRUMENTED_AGENT]}, calls


CASES = [
    *(_instrumented_case(name, format_name) for name, format_name in INSTRUMENTED_FILES),
    (
        "otlp/latitude_rendering.json",
        "otlp",
        {
            "ID_1": [
                "system",
                "user:text",
                *["  assistant:text", "  system", "  assistant:text", "  system", "  assistant:text+1calls"],
                *["  tool:fake-tool-call-id-1", "  system", "  assistant:text"],
            ]
        },
        [("fake-tool-call-id-1", "get_weather", '{"location": "Barcelona"}')],
    ),
    (
        "otlp/latitude_manual_tools.json",
        "otlp",
        {"ID_2": ["system", "user:text", "  assistant:text+1calls", "  tool:call_1", "  assistant:text"]},
        [("call_1", "get_weather", '{"city": "NYC"}')],
    ),
    (
        "otlp/pydantic_ai_tools.pb",
        "otlp",
        {
            "01a248d7-a069-75b7-8add-a3a2371a6330": [
                *["system", "user:text", "  assistant:text+1calls", "  tool:call_paris", "  assistant:text"],
            ]
        },
        [("call_paris", "get_weather", '{"city": "Paris"}')],
    ),
    *(
        (
            f"otlp/galileo_langgraph_{agent}_call2.pb",
            "otlp",
            {span: ["system", "user:text", "  assistant:text+1calls", f"  tool:{call[0]}", "  assistant:text"]},
            [call],
        )
        for agent, span, call in GALILEO_LANGGRAPH
    ),
    (
        "otlp/galileo_crewai_research_call2.pb",
        "otlp",
        {"fb06ffa0b7619510": ["system", "user:text", *["  assistant:text"] * 4]},
        [],
    ),
    ("otlp/galileo_langgraph_rag_embeddings.pb", "otlp", {}, []),
    ("otlp/galileo_crewai_content_agent.pb", "otlp", {}, []),
    ("otlp/openllmetry_openai.json", "otlp", {"0f69feaecfced498": ["system", "user:text", "  assistant:text"]}, []),
    ("otlp/strands.json", "otlp", {"4b6bf754c099094a": ["user:text", "  assistant:text"]}, []),
    ("otlp/spring_ai_no_content.json", "otlp", {}, []),
    (
        "openinference/openinference_openai_otlp.json",
        "openinference",
        {"my-test-session": ["system", "user:text", "  assistant:text"]},
        [],
    ),
    (
        "langfuse/langgraph-python-2025-08-22.trace.json",
        "langfuse",
        {
            "e1fde3efec57ce8a69bafd3fb928a7eb": [
                *["user:text", "user:text", "  assistant:text+1calls", "  tool:call_1oGK863sxQHlPreFhDdEs3yl"],
                "  assistant:text",
            ]
        },
        [("call_1oGK863sxQHlPreFhDdEs3yl", "Web-Search", '{"query": "example"}')],
    ),
    (
        "langfuse/pydantic-ai-tools-2025-12-04.trace.json",
        "langfuse",
        {
            "7a38edd8123db47ad8dcb8aa4c5e3926": [
                *["system", "user:text", "  assistant:text+3calls", "  tool:call_X0OSgjUukT5inyEQvuZQnHrk"],
                *["  tool:call_WxZcCvSDhGT4RJHlcU01k10x", "  tool:call_aRaObiWKKt6GzgDkkUl3bu1Q", "  assistant:text"],
                *["user:text", "  assistant:text", "  system", "user:text", "  assistant:text+1calls"],
            ]
        },
        None,
    ),
    ("openinference/phoenix_pxi_turn_trace.json", "openinference", {"fixture-session": PXI_TURN}, None),
    *(
        (
            f"langsmith/langchain_agent_{kind}.json",
            "langsmith",
            {"thread-weather-7": LANGCHAIN_AGENT},
            [("call_paris", "get_weather", '{"city": "Paris"}'), ("call_lyon", "get_weather", '{"city": "Lyon"}')],
        )
        for kind in ("ingest", "run_tree")
    ),
    (
        "langsmith/langgraph_supervisor_coder_ingest.jsonl",
        "langsmith",
        {"04b65363-bd87-4916-b1a7-0fddaafb5681": LANGGRAPH_SUPERVISOR},
        [
            ("call_6Vb99yVg3cAUK8J5xgsxJB52", "routeResponse", '{"next": "Coder"}'),
            ("call_kJJfHdv1RIqUrTx58bpxn1pD", "Python_REPL", '{"query": "print(\'Hello, World!\')"}'),
        ],
    ),
    (
        "langsmith/langgraph_tool_node_ingest.json",
        "langsmith",
        {"36b3beaa-8c9b-4d53-8904-52566a2fcb2b": ["user:text"]},
        [],
    ),
    (
        "langsmith/langsmith_py_wrap_openai_.json",
        "langsmith",
        {"d0d84d31-923d-4cb5-94a8-40a0a0087578": ["user:text", "  assistant:text"]},
        [],
    ),
    (
        "langsmith/langsmith_js_wrap_openai_default.json",
        "langsmith",
        {"dc34609e-3eeb-459d-bc2a-6fedb01d2e6e": ["user:text", "  assistant:text"]},
        [],
    ),
    (
        "langsmith/langsmith_js_wrap_openai_reasoning.json",
        "langsmith",
        {"e954b8e3-c337-4a05-bf0a-ca2baac3ba48": ["user:text", "  assistant:text"]},
        [],
    ),
    (
        "openinference/phoenix_pxi_turn_subagent_trace.json",
        "openinference",
        {"fixture-subagent-session": PXI_SUBAGENT},
        None,
    ),
]


def _conversations(name: str) -> tuple[str, dict[str, list[dict[str, object]]], list[str]]:
    path = DATA / name
    chosen = sniff(path.read_bytes()[:SNIFF_BYTES], str(path))
    with path.open("rb") as handle:
        records, foreign = read_foreign(chosen, handle, str(path))
    conversations: dict[str, list[dict[str, object]]] = {}
    for record in records:
        conversations.setdefault(record.message.conversation_id, []).append(record.raw)
    return chosen.name, conversations, [n.text for n in foreign.notes]


@pytest.mark.parametrize(("name", "format_name", "expected", "calls"), CASES, ids=[c[0] for c in CASES])
def test_a_real_file_gives_its_conversations(
    name: str, format_name: str, expected: dict[str, list[str]], calls: list[tuple[str, str, str]] | None
) -> None:
    chosen, conversations, _ = _conversations(name)
    assert chosen == format_name
    assert {cid: summary(messages) for cid, messages in conversations.items()} == expected
    if calls is not None and conversations:
        assert tool_calls(next(iter(conversations.values()))) == calls


@pytest.mark.parametrize(("name", "format_name"), INSTRUMENTED_FILES, ids=[n for n, _ in INSTRUMENTED_FILES])
def test_an_instrumented_tool_run_that_failed_is_an_error_result_naming_its_tool(name: str, format_name: str) -> None:
    _, conversations, _ = _conversations(name)
    records = next(iter(conversations.values()))[1]["intermediate_trace"]["records"]  # type: ignore[index]
    results = [(r["name"], r["is_error"]) for record in records[1:3] for r in record["tool_reses"]]
    assert results == [("weather", False), ("weather", True)]


def test_a_model_call_without_captured_content_is_reported_not_stored() -> None:
    _, conversations, notes = _conversations("otlp/spring_ai_no_content.json")
    assert conversations == {}
    assert notes == ["model call content was not captured: nothing stored for it"]


def test_arguments_recorded_empty_then_resent_as_an_empty_object_are_one_call() -> None:
    # pxi_turn_trace.json: call-04 is output with arguments "" and resent with "{}" in the next input.
    _, conversations, _ = _conversations("openinference/phoenix_pxi_turn_trace.json")
    calls = tool_calls(conversations["fixture-session"])
    assert [c for c in calls if c[0] == "call-04"] == [("call-04", "list_datasets", "")]
    assert len({c[0] for c in calls}) == len(calls) == 11


def test_object_arguments_become_json_text_and_tool_spans_give_results() -> None:
    _, conversations, _ = _conversations("otlp/latitude_manual_tools.json")
    records = conversations["ID_2"][1]["intermediate_trace"]["records"]  # type: ignore[index]
    assert records[1]["tool_reses"][0]["result"]
    assert orjson.loads(records[0]["tool_calls"][0]["arguments"]) == {"city": "NYC"}


@pytest.mark.parametrize("folder", ["otlp", "openinference", "langfuse", "langsmith"])
def test_a_second_import_changes_nothing_and_an_export_reimports_unchanged(
    folder: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    paths = sorted(str(p) for p in (DATA / folder).iterdir() if p.suffix in (".json", ".jsonl", ".pb"))
    assert main(["import", "--from", "auto", *paths, "--db", url]) == 0
    with Store.open(url) as store:
        first = list(store.export_texts())
    assert len(first) > 1
    assert main(["import", "--from", "auto", *paths, "--db", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"total: 0 messages imported from {len(paths)} of {len(paths)} files")
    with Store.open(url) as store:
        assert list(store.export_texts()) == first
    exported, again = tmp_path / "export.jsonl", f"sqlite:///{tmp_path / 'again.db'}"
    assert main(["export", "--db", url, "-o", str(exported)]) == 0
    assert main(["import", str(exported), "--db", again]) == 0  # an export of ours re-imports unchanged
    with Store.open(again) as store:
        assert list(store.export_texts()) == first


def test_an_ingest_body_gives_the_patched_reply_its_model_and_its_usage_aside() -> None:
    # The JS SDK's patch names its run by trace and dotted order only; the reply and the usage are in it.
    _, conversations, notes = _conversations("langsmith/langsmith_js_wrap_openai_default.json")
    [user] = conversations["dc34609e-3eeb-459d-bc2a-6fedb01d2e6e"]
    [reply] = user["intermediate_trace"]["records"]  # type: ignore[index]
    assert (user["content"], reply["content"]) == ("howdy", "Howdy! How can I assist you today?")
    assert reply["additional_kwargs"]["traceloupe_import"]["unplaced"]["usage_metadata"]["total_tokens"] == 18
    assert notes == [
        "kept under additional_kwargs.traceloupe_import.unplaced, no place in the stored format: usage_metadata (1)"
    ]


def test_a_langchain_run_tree_and_the_ingest_bodies_of_the_same_runs_give_the_same_conversation() -> None:
    _, tree, _ = _conversations("langsmith/langchain_agent_run_tree.json")
    _, ingest, _ = _conversations("langsmith/langchain_agent_ingest.json")
    assert tree == ingest
    records = tree["thread-weather-7"][1]["intermediate_trace"]["records"]  # type: ignore[index]
    assert [r["tool_reses"][0]["result"] for r in records if r["role"] == "tool"] == ["18C and sunny"]


def test_ingest_bodies_of_a_langgraph_run_give_the_coders_tool_result_and_the_supervisors_open_call() -> None:
    # Four batch bodies one a line: the runs posted in one are patched in a later one (no run_type in a patch).
    _, conversations, notes = _conversations("langsmith/langgraph_supervisor_coder_ingest.jsonl")
    turns = conversations["04b65363-bd87-4916-b1a7-0fddaafb5681"]
    coder = turns[2]["intermediate_trace"]["records"]  # type: ignore[index]
    assert turns[1]["content"] == turns[2]["content"] == "Code hello world and print it to the terminal"
    assert [(r["call_id"], r["name"], r["result"]) for r in coder[1]["tool_reses"]] == [
        ("call_kJJfHdv1RIqUrTx58bpxn1pD", "Python_REPL", "Hello, World!\n")
    ]
    assert coder[2]["content"].startswith('The code to print "Hello, World!" to the terminal is:')
    assert turns[3]["content"] == coder[2]["content"]  # relayed to the supervisor as a human message
    assert notes == [
        "model call output was not captured: its input alone is stored",
        "the calls of conversation '04b65363-bd87-4916-b1a7-0fddaafb5681' send 3 separate histories: joined in time"
        " order",
        "kept under additional_kwargs.traceloupe_import.unplaced, no place in the stored format: llm_output (3),"
        " parts (4)",
    ]


def test_the_name_of_a_relayed_langgraph_message_and_the_models_metadata_are_kept() -> None:
    # The coder's answer reaches the supervisor as HumanMessage(name="Coder"); the supervisor's last call (output
    # not captured) is the only call that sends it, so it is kept on the last message that call sent.
    _, conversations, _ = _conversations("langsmith/langgraph_supervisor_coder_ingest.jsonl")
    turns = conversations["04b65363-bd87-4916-b1a7-0fddaafb5681"]
    kept = [
        part
        for turn in turns
        for record in [turn, *turn.get("intermediate_trace", {}).get("records", [])]  # type: ignore[attr-defined]
        for part in record.get("additional_kwargs", {})
        .get("traceloupe_import", {})
        .get("unplaced", {})
        .get("parts", [])
    ]
    assert {"langchain_message": "HumanMessage", "name": "Coder"} in kept
    assert [p["usage_metadata"]["output_tokens"] for p in kept if "usage_metadata" in p] == [5, 22, 38]
    last_sent = turns[3]["intermediate_trace"]["records"][-1]  # type: ignore[index]
    assert {"langchain_message": "HumanMessage", "name": "Coder"} in last_sent["additional_kwargs"][
        "traceloupe_import"
    ]["unplaced"]["parts"]


def test_the_tool_a_langchain_model_was_forced_to_call_is_the_requests_tool_choice() -> None:
    # The supervisor's invocation_params force routeResponse (OpenAI's form); the coder's leave the choice open.
    contexts = [
        value["traceloupe_request"] for _, value in _contexts("langsmith/langgraph_supervisor_coder_ingest.jsonl")
    ]  # type: ignore[index]
    assert [([t["name"] for t in c["tools"]], c["tool_choice"]) for c in contexts] == [
        (["routeResponse"], {"name": "routeResponse"}),
        (["Python_REPL"], None),
    ]


def test_tool_runs_a_tool_node_made_of_calls_no_model_made_are_reported_not_stored() -> None:
    # LangGraph's tool-calling how-to invokes its ToolNode on a hand-written AIMessage: each tool run is a trace
    # of its own, and no model call of the file made the calls they answer.
    _, conversations, notes = _conversations("langsmith/langgraph_tool_node_ingest.json")
    [ask] = conversations["36b3beaa-8c9b-4d53-8904-52566a2fcb2b"]
    assert ask["content"] == "what's the weather in sf?"
    assert notes == [
        "model call output was not captured: its input alone is stored",
        *(f"tool run '{name}' answers no recorded call: not stored" for name in ("get_weather", "get_coolest_cities")),
        "tool run 'get_weather' answers no recorded call: not stored",
    ]
    [(_, context)] = _contexts("langsmith/langgraph_tool_node_ingest.json")
    request = context["traceloupe_request"]  # type: ignore[index]
    assert (request["provider"], request["model"]) == ("anthropic", "claude-3-haiku-20240307")
    assert [t["name"] for t in request["tools"]] == ["get_weather", "get_coolest_cities"]


def test_langchain_tool_definitions_sent_as_tool_messages_are_the_requests_tools() -> None:
    path = DATA / "langfuse" / "langgraph-python-2025-08-22.trace.json"
    with path.open("rb") as handle:
        _, foreign = read_foreign(sniff(path.read_bytes()[:SNIFF_BYTES], str(path)), handle, str(path))
    [line] = foreign.store_lines
    request = line.value["traceloupe_request"]
    assert [t["name"] for t in request["tools"]] == ["Web-Search"]
    assert (request["turn"], request["model"], request["params"]) == (None, "gpt-4o-2024-08-06", {"temperature": 0.0})


def _contexts(name: str) -> list[object]:
    path = DATA / name
    with path.open("rb") as handle:
        _, foreign = read_foreign(sniff(path.read_bytes()[:SNIFF_BYTES], str(path)), handle, str(path))
    return [(line.line, line.value) for line in foreign.store_lines]


def test_request_contexts_spilled_to_disk_come_back_as_they_were(monkeypatch: pytest.MonkeyPatch) -> None:
    # One context per conversation: a large file's go to a temporary file while its messages are read.
    held = _contexts("langfuse/pydantic-ai-tools-2025-12-04.trace.json")
    monkeypatch.setattr(importing, "SPILL_AFTER", 1)
    spilled = _contexts("langfuse/pydantic-ai-tools-2025-12-04.trace.json")
    assert spilled == held
    assert len(spilled) == 3


def test_each_turn_gets_the_context_of_the_call_that_answered_it() -> None:
    # Two pydantic-ai agents in one trace: the writer at temperature 0.7 (two turns), the critic at 0.
    path = DATA / "langfuse" / "pydantic-ai-tools-2025-12-04.trace.json"
    with path.open("rb") as handle:
        records, foreign = read_foreign(sniff(path.read_bytes()[:SNIFF_BYTES], str(path)), handle, str(path))
    turns = [r.raw["msg_id"] for r in records if r.raw["role"] == "user"]
    contexts = [line.value["traceloupe_request"] for line in foreign.store_lines]
    assert [(c["turn"], c["params"]) for c in contexts] == [
        (turns[0], {"temperature": 0.7}),
        (turns[1], {"temperature": 0.7}),
        (turns[2], {"temperature": 0.0}),
    ]


@pytest.mark.parametrize(
    ("agent", "asked", "result", "answer"),
    [
        (
            "weather",
            "What's the weather like in San Francisco?",
            "Weather in San Francisco: 55F, rainy, 32% humidity",
            "The current weather in San Francisco is 55",
        ),
        ("calculator", "Convert 100 km to mi", "100.0 km = 62.1371 mi", "100 kilometers is equal to approximately"),
        ("rag", "What is RAG and how does it work?", "[1] RAG Systems:\nRetrieval-Augmented", "RAG, or Retrieval"),
    ],
)
def test_an_openllmetry_protobuf_call_gives_the_tool_result_it_resent_and_the_answer_it_got(
    agent: str, asked: str, result: str, answer: str
) -> None:
    # Each answer's recorded role is "unknown" (OpenLLMetry's LangChain instrumentation 0.49.6): still the model's.
    _, conversations, _ = _conversations(f"otlp/galileo_langgraph_{agent}_call2.pb")
    [[system, user]] = conversations.values()
    records = user["intermediate_trace"]["records"]  # type: ignore[index]
    assert system["role"] == "system"
    assert user["content"] == asked
    assert [r["role"] for r in records] == ["assistant", "tool", "assistant"]
    assert records[1]["tool_reses"][0]["result"].startswith(result)
    assert records[2]["content"].startswith(answer)


@pytest.mark.parametrize("name", ["otlp/galileo_langgraph_rag_embeddings.pb", "otlp/galileo_crewai_content_agent.pb"])
def test_openllmetry_embedding_and_agent_spans_are_no_model_call_missing_its_content(name: str) -> None:
    _, conversations, notes = _conversations(name)
    assert (conversations, notes) == ({}, [])
