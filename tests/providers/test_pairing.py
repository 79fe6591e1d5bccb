"""to_list's output obeys the pairing rules every provider shares, whatever came in.

Any mix of neutral messages, odd ids, missing names, orphans, legacy results and attachments: each run of
assistant records with calls is followed directly by one result per call, in call order, under the call's
name; no result answers a call that is not there; no call id repeats.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.llm.messages import (
    LLMAssistantMessage,
    LLMFunctionCall,
    LLMFunctionMessage,
    LLMMessage,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
)
from core.providers import pairing
from core.providers.base import RequestContext, RequestOptions
from core.providers.jsonable import llm_message_json

# A few ids, the empty one and the synthesised ones among them, so results meet their calls, miss them,
# repeat them and arrive out of order.
CALL_IDS = st.sampled_from(["a", "b", "c", ""])
RESULT_IDS = st.sampled_from(["a", "b", "c", "", None, "call_auto_1", "call_fn_1"])
SERIAL = st.integers(0, 9)

calls = st.builds(LLMToolCall, CALL_IDS, st.sampled_from(["f", "g"]), st.just("{}"))
assistant = st.builds(
    lambda cs, legacy, n: LLMAssistantMessage(
        "text", None, tuple(cs), LLMFunctionCall("fn", "{}") if legacy else None, (), f"a{n}"
    ),
    st.lists(calls, max_size=3),
    st.booleans(),
    SERIAL,
)
result = st.builds(
    lambda call_id, name, error, n: LLMToolMessage("r", call_id, name, error, f"t{n}"),
    RESULT_IDS,
    st.sampled_from([None, "f"]),
    st.booleans(),
    SERIAL,
)
legacy_result = st.builds(lambda name, n: LLMFunctionMessage(name, "x", f"f{n}"), st.sampled_from(["fn", ""]), SERIAL)
user = st.builds(
    lambda attachment_of, n: LLMUserMessage((LLMTextPart("u"),), f"u{n}", attachment_of),
    st.sampled_from([None, "console", "a", "b", "call_auto_1"]),
    SERIAL,
)
other = st.sampled_from([LLMSystemMessage("s", "s1"), LLMTFLMessage("out", None, {}, "c1")])
message = st.one_of(assistant, result, legacy_result, user, other)
# What to_llm_request returns: one message, or a list (a tool record's results with their attachments).
formatted = st.lists(st.one_of(message, st.lists(message, min_size=1, max_size=3)), max_size=12)


def _run(items: list[LLMMessage | list[LLMMessage]]) -> tuple[list[dict[str, Any]], list[Any]]:
    ctx = RequestContext(RequestOptions())
    return [llm_message_json(m) for m in pairing.to_list(items, ctx)], ctx.warnings


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(formatted)
def test_every_call_is_answered_once_in_order_under_its_name(items: list[LLMMessage | list[LLMMessage]]) -> None:
    out = pairing.to_list(items, RequestContext(RequestOptions()))
    ids = [call.id for m in out if isinstance(m, LLMAssistantMessage) for call in m.tool_calls]
    assert len(ids) == len(set(ids)) and all(ids)
    assert not any(isinstance(m, LLMFunctionMessage) for m in out)
    i = 0
    while i < len(out):
        msg = out[i]
        i += 1
        if isinstance(msg, LLMToolMessage):
            raise AssertionError(f"result {msg.tool_call_id} follows no call")
        if not isinstance(msg, LLMAssistantMessage) or not msg.tool_calls:
            continue
        open_calls = list(msg.tool_calls)
        while i < len(out) and isinstance(out[i], LLMAssistantMessage) and out[i].tool_calls:  # one step's records
            open_calls += out[i].tool_calls  # type: ignore[union-attr]
            i += 1
        answers = out[i : i + len(open_calls)]
        assert [(r.tool_call_id, r.name) for r in answers if isinstance(r, LLMToolMessage)] == [
            (c.id, c.name) for c in open_calls
        ]
        i += len(open_calls)


def test_in_order_results_are_placed_without_warnings() -> None:
    turn = LLMAssistantMessage("", None, (LLMToolCall("a", "f", "{}"), LLMToolCall("b", "g", "{}")), None, (), "a1")
    results = [LLMToolMessage("1", "a", "f", False, "t1"), LLMToolMessage("2", "b", "g", False, "t2")]
    out, warnings = _run([turn, results])
    assert [m["role"] for m in out] == ["assistant", "tool", "tool"] and warnings == []
