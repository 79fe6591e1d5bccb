"""The benchmark's OTLP batches have the shape the ingest benchmark claims: per conversation 5 turns, each one trace
of an agent span, 3 model calls (the first two asking for tools) and 3 tool runs, histories resent on every call."""

from __future__ import annotations

import io
from collections import Counter

from bench import agent_spans
from core.formats.events import ModelCall, ToolExecution
from core.formats.otlp import read_spans
from core.formats.registry import read_otlp


def _all_spans(conversations: int, batch_spans: int) -> list[bytes]:
    return agent_spans.otlp_batches(conversations, batch_spans)


def test_each_turn_is_one_trace_of_an_agent_three_model_calls_and_three_tool_runs() -> None:
    bodies = _all_spans(3, 50)
    spans = [s for body in bodies for s in read_spans(io.BufferedReader(io.BytesIO(body)), "x")]
    assert len(spans) == 3 * agent_spans.TURNS * agent_spans.SPANS_PER_TURN
    assert all(len(list(read_spans(io.BufferedReader(io.BytesIO(b)), "x"))) <= 50 for b in bodies)
    by_trace: dict[str, Counter[str]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, Counter())[span.attributes["openinference.span.kind"]] += 1
    assert len(by_trace) == 3 * agent_spans.TURNS
    assert set(map(frozenset, (c.items() for c in by_trace.values()))) == {
        frozenset({("AGENT", 1), ("LLM", 3), ("TOOL", 3)})
    }
    sessions = {span.attributes["session.id"] for span in spans}
    assert sessions == {agent_spans.session_id(c) for c in range(3)}


def test_every_model_call_resends_the_whole_history_and_the_tool_runs_answer_its_calls() -> None:
    body = b"".join(_all_spans(1, 512))
    events = list(read_otlp(io.BufferedReader(io.BytesIO(body)), "x"))
    calls = [e for e in events if isinstance(e, ModelCall)]
    runs = [e for e in events if isinstance(e, ToolExecution)]
    assert len(calls) == agent_spans.TURNS * agent_spans.MODEL_CALLS_PER_TURN
    assert len(runs) == agent_spans.TURNS * agent_spans.TOOL_SPANS_PER_TURN
    sent = sorted(len(c.input or ()) for c in calls)
    assert sent[0] == 2  # the system prompt and the first question
    assert sent == sorted(set(sent))  # each call sends more than the one before: the history grows and is resent
    asked = {call.id for c in calls for m in (c.output or ()) for call in getattr(m, "tool_calls", None) or ()}
    assert asked == {r.call_id for r in runs}
