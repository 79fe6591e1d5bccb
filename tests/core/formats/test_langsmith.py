"""LangSmith runs: a LangGraph-style run tree whose chat model runs record LangChain messages (serialized, and
``message_to_dict``'s and ``model_dump``'s spellings), its tool runs answering calls by id, two traces of one
``thread_id`` joined, and an ingest body's patch completing its post. The real SDK files are in
``test_real_files.py``."""

from __future__ import annotations

import io
from typing import Any

import orjson

from core.formats.importing import read_foreign
from core.formats.registry import SNIFF_BYTES, format_named, sniff
from tests.core.formats.summary import summary, tool_calls


def _lc(kind: str, **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind], "kwargs": kwargs}


SYSTEM = _lc("SystemMessage", content="You answer about weather.")
ASK = _lc("HumanMessage", content="Weather in Paris?")
CALL = _lc(
    "AIMessage",
    content=[{"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "call_1", "name": "w", "input": {}}],
    tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}],
)
RESULT = {"type": "tool", "content": "18C", "tool_call_id": "call_1", "name": "weather"}  # model_dump's spelling
ANSWER = _lc("AIMessage", content="It is 18C in Paris.")


def _llm(run_id: str, start: str, sent: list[Any], answer: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": run_id,
        "name": "ChatAnthropic",
        "run_type": "llm",
        "start_time": start,
        "end_time": start.replace(":00Z", ":01Z"),
        "inputs": {"messages": [sent]},
        "outputs": {"generations": [[{"text": "", "type": "ChatGeneration", "message": answer}]]},
        "extra": {
            "invocation_params": {"model": "claude-sonnet-4-5", "temperature": 0.2, "max_tokens": 512},
            "metadata": {"ls_provider": "anthropic", "ls_model_name": "claude-sonnet-4-5"},
        },
    }


def _trace(trace: str, thread: str, minute: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    for run in runs:
        run["trace_id"] = trace
    return {
        "id": trace,
        "trace_id": trace,
        "name": "LangGraph",
        "run_type": "chain",
        "start_time": f"2025-05-01T10:{minute:02d}:00Z",
        "inputs": {},
        "extra": {"metadata": {"thread_id": thread}},
        "child_runs": [{"id": f"{trace}-agent", "run_type": "chain", "name": "agent", "child_runs": runs}],
    }


FIRST = _trace(
    "t1",
    "thread-7",
    0,
    [
        _llm("l1", "2025-05-01T10:00:00Z", [SYSTEM, ASK], CALL),
        {
            "id": "tool1",
            "name": "weather",
            "run_type": "tool",
            "start_time": "2025-05-01T10:00:02Z",
            "inputs": {"input": "{'city': 'Paris'}"},
            "outputs": {"output": _lc("ToolMessage", content="18C", tool_call_id="call_1", name="weather")},
        },
        _llm("l2", "2025-05-01T10:00:03Z", [SYSTEM, ASK, CALL, RESULT], ANSWER),
    ],
)
THANKS = {"type": "human", "data": {"content": "Thanks!", "type": "human"}}  # message_to_dict's spelling
SECOND = _trace(
    "t2",
    "thread-7",
    5,
    [_llm("l3", "2025-05-01T10:05:00Z", [SYSTEM, ASK, CALL, RESULT, ANSWER, THANKS], _lc("AIMessage", content="Bye"))],
)


def _read(document: Any) -> tuple[str, dict[str, list[dict[str, Any]]], list[Any]]:
    data = document if isinstance(document, bytes) else orjson.dumps(document)
    chosen = sniff(data[:SNIFF_BYTES], "runs.json")
    records, foreign = read_foreign(format_named(chosen.name), io.BytesIO(data), "runs.json")
    conversations: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        conversations.setdefault(record.message.conversation_id, []).append(record.raw)
    return chosen.name, conversations, [line.value["traceloupe_request"] for line in foreign.store_lines]


def test_a_run_tree_of_langchain_messages_gives_its_conversation_and_tool_results() -> None:
    chosen, conversations, contexts = _read([FIRST])
    assert chosen == "langsmith"
    assert {cid: summary(m) for cid, m in conversations.items()} == {
        "thread-7": ["system", "user:text", "  assistant:text+1calls", "  tool:call_1", "  assistant:text"]
    }
    messages = conversations["thread-7"]
    assert tool_calls(messages) == [("call_1", "weather", '{"city": "Paris"}')]
    records = messages[1]["intermediate_trace"]["records"]
    assert records[0]["content"] == "Looking."  # the tool_use block restating the call is not a second call
    assert records[1]["tool_reses"][0]["result"] == "18C"
    assert [(c["provider"], c["model"], c["params"]) for c in contexts] == [
        ("anthropic", "claude-sonnet-4-5", {"max_tokens": 512, "temperature": 0.2})
    ]


def test_two_traces_of_one_thread_are_one_conversation_and_a_second_read_is_the_same() -> None:
    _, conversations, _ = _read([SECOND, FIRST])
    assert list(conversations) == ["thread-7"]
    assert summary(conversations["thread-7"])[-2:] == ["user:text", "  assistant:text"]
    assert _read([SECOND, FIRST])[1] == conversations


def test_a_tool_run_without_a_recorded_call_id_answers_the_open_call_of_its_name() -> None:
    tree = orjson.loads(orjson.dumps(FIRST))
    runs = tree["child_runs"][0]["child_runs"]
    runs[1]["outputs"] = {"output": "18C"}
    del runs[2]  # no later call resends the result: the tool run alone gives it
    _, conversations, _ = _read(tree)
    assert summary(conversations["thread-7"]) == ["system", "user:text", "  assistant:text+1calls", "  tool:call_1"]


def test_langchains_provider_names_are_read_as_ours() -> None:
    tree = orjson.loads(orjson.dumps(FIRST))
    for run in tree["child_runs"][0]["child_runs"]:
        if run["run_type"] == "llm":
            run["extra"]["metadata"]["ls_provider"] = "google_genai"
            run["extra"]["invocation_params"]["model"] = "gemini-2.5-flash"
    _, _, contexts = _read(tree)
    assert [(c["provider"], c["model"]) for c in contexts] == [("gemini", "gemini-2.5-flash")]


def test_an_ingest_patch_completes_the_run_its_trace_and_dotted_order_name() -> None:
    post = {"id": "r", "trace_id": "r", "dotted_order": "1Zr", "run_type": "llm", "start_time": 1728803137170}
    post["inputs"] = {"messages": [{"role": "user", "content": "howdy"}]}
    patch = {"trace_id": "r", "dotted_order": "1Zr", "end_time": 1728803138285}
    patch["outputs"] = {"choices": [{"message": {"role": "assistant", "content": "Howdy!"}}]}
    _, conversations, _ = _read({"post": [post], "patch": [patch]})
    assert {cid: summary(m) for cid, m in conversations.items()} == {"r": ["user:text", "  assistant:text"]}


def test_ingest_bodies_one_a_line_are_read_in_order_a_later_patch_completing_an_earlier_post() -> None:
    # A cassette or a proxy keeps the SDK's batch bodies one a line; the Python SDK's patch has no run_type.
    post = {"id": "r", "trace_id": "r", "run_type": "llm", "start_time": "2024-09-19T17:46:56Z"}
    post["inputs"] = {"messages": [[ASK]]}
    patch = {"id": "r", "trace_id": "r", "end_time": "2024-09-19T17:46:57Z", "inputs": post["inputs"]}
    patch["outputs"] = {"generations": [[{"text": "", "message": ANSWER}]]}
    lines = b"\n".join(orjson.dumps(body) for body in ({"post": [post], "patch": []}, {"post": [], "patch": [patch]}))
    _, conversations, _ = _read(lines)
    assert {cid: summary(m) for cid, m in conversations.items()} == {"r": ["user:text", "  assistant:text"]}
    assert _read(orjson.loads(b"[" + lines.replace(b"\n", b",") + b"]"))[1] == conversations  # a JSON array too


def test_a_tool_message_of_status_error_is_an_error_result() -> None:
    tree = orjson.loads(orjson.dumps(FIRST))
    runs = tree["child_runs"][0]["child_runs"]
    runs[1]["outputs"]["output"]["kwargs"]["status"] = "error"  # the tool run's own message
    runs[2]["inputs"]["messages"][0][3] = {**RESULT, "status": "error"}  # and as the next call resends it
    _, conversations, _ = _read(tree)
    records = conversations["thread-7"][1]["intermediate_trace"]["records"]
    assert [(r["call_id"], r["is_error"]) for r in records[1]["tool_reses"]] == [("call_1", True)]


def test_a_human_messages_name_is_kept_once_with_a_warning() -> None:
    named = _lc("HumanMessage", content="Weather in Paris?", name="Planner", id="m-1")
    tree = orjson.loads(orjson.dumps(FIRST))
    for run in tree["child_runs"][0]["child_runs"]:
        if run["run_type"] == "llm":
            sent = run["inputs"]["messages"][0]
            sent[sent.index(ASK)] = named
    data = orjson.dumps(tree)
    records, foreign = read_foreign(format_named("langsmith"), io.BytesIO(data), "runs.json")
    kept = [
        part
        for record in records
        for message in [record.raw, *record.raw.get("intermediate_trace", {}).get("records", [])]
        for part in message.get("additional_kwargs", {})
        .get("traceloupe_import", {})
        .get("unplaced", {})
        .get("parts", [])
    ]
    assert kept == [{"langchain_message": "HumanMessage", "name": "Planner"}]  # not the message's own id
    assert any("parts (1)" in note.text for note in foreign.notes)
