"""to_list's fast path (results placed as they arrive in call order) gives what the block rules give.

The block rules are the ones the golden payloads and the bug tests pin; the fast path only skips their
bookkeeping when nothing needs it. Any mix of neutral messages, odd ids, missing names, orphans, legacy
results and attachments included, must come out the same list with the same warnings either way.
"""

from __future__ import annotations

from typing import Any

import pytest
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
def test_the_fast_path_gives_the_block_rules_result(items: list[LLMMessage | list[LLMMessage]]) -> None:
    fast = _run(items)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pairing, "PLACE_IN_ORDER", False)
        ruled = _run(items)
    assert fast == ruled


def test_in_order_results_are_placed_without_warnings() -> None:
    turn = LLMAssistantMessage("", None, (LLMToolCall("a", "f", "{}"), LLMToolCall("b", "g", "{}")), None, (), "a1")
    results = [LLMToolMessage("1", "a", "f", False, "t1"), LLMToolMessage("2", "b", "g", False, "t2")]
    out, warnings = _run([turn, results])
    assert [m["role"] for m in out] == ["assistant", "tool", "tool"] and warnings == []
