"""The dialects' fast paths give what their general paths give.

Anthropic and Gemini build the assistant turn a trace is made of in their reformat loop; with the inline
turn switched off every turn goes through the general helper, and any history must give the same body,
warnings and provenance either way.

``arguments_object`` trusts orjson alone when the object it read is flat and holds no float (a long
integer would have come back as a float); anything else goes through the exact reader. Any text, valid
or not, long integers and floats at any depth included, must give the same object and warnings as the
exact reader alone.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.jsonio import loads
from core.llm.messages import (
    LLMAssistantMessage,
    LLMMessage,
    LLMRedactedThinking,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMThinking,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
    parse_arguments,
)
from core.providers import anthropic, gemini
from core.providers.base import RAW_ARGUMENTS_KEY, RequestContext, RequestOptions, arguments_object
from core.providers.jsonable import provenance_map
from core.providers.registry import get_dialect

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),  # unbounded: past 64 bits too
    st.integers(min_value=10**18, max_value=10**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner))
JSON_TEXTS = st.dictionaries(st.text(max_size=6), VALUES, max_size=4).map(json.dumps) | VALUES.map(json.dumps)
ODD_TEXTS = st.sampled_from(["", "  ", "{bad", "[1]", "NaN", '{"a": NaN}', '{"a": 1}{', '{"n": 12345678901234567890}'])


def _exact(call: LLMToolCall, ctx: RequestContext) -> dict[str, Any]:
    """The general path: the exact reader on every text."""
    try:
        parsed = loads(call.arguments)
    except orjson.JSONDecodeError:
        parsed = parse_arguments(call.arguments)
    if type(parsed) is dict:
        return parsed
    ctx.warn(
        "m", "tool_call.arguments", f"call {call.id}: arguments are not a JSON object; sent under {RAW_ARGUMENTS_KEY!r}"
    )
    return {RAW_ARGUMENTS_KEY: call.arguments}


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_TEXTS | ODD_TEXTS | st.text(max_size=12))
def test_arguments_object_equals_the_exact_reader(text: str) -> None:
    call = LLMToolCall("c1", "f", text)
    fast_ctx, exact_ctx = RequestContext(RequestOptions()), RequestContext(RequestOptions())
    fast, exact = arguments_object(call, "m", fast_ctx), _exact(call, exact_ctx)
    # The stdlib writer tells 1 from 1.0 and writes integers of any size: equal text, equal values and types.
    assert json.dumps(fast) == json.dumps(exact)
    assert fast_ctx.warnings == exact_ctx.warnings


@given(st.text(max_size=12) | st.sampled_from(["call_1", "toolu_01-x", "a b", "\u00e9", "x\n", "\ud800"]) | st.none())
def test_tool_id_keeps_what_the_regex_accepts_and_rewrites_the_rest(call_id: str | None) -> None:
    text = call_id or "call"
    out = anthropic.tool_id(call_id)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", out)
    if re.fullmatch(r"[A-Za-z0-9_-]+", text):
        assert out == text
    else:
        assert re.fullmatch(re.escape(re.sub(r"[^A-Za-z0-9_-]", "_", text)) + "_[0-9a-f]{8}", out)


@given(st.lists(st.text(alphabet="ab_. -\u00e9", max_size=4), min_size=2, max_size=6, unique=True))
def test_tool_id_keeps_distinct_ids_distinct(call_ids: list[str]) -> None:
    """Ids that differ only in rejected characters (a.b, a b, a_b) stay distinct: Anthropic rejects two
    tool_use blocks with one id, and each result must pair with its own call."""
    assert len({anthropic.tool_id(i) for i in call_ids}) == len(call_ids)


# Neutral histories of every shape a dialect may meet, in any order (to_list's pairing is not assumed).
IDS = st.sampled_from(["a", "b", "", "bad id!", "call_1"])
TOOL_CALLS = st.builds(
    LLMToolCall,
    IDS,
    st.sampled_from(["f", "g"]),
    st.sampled_from(['{"q": "x", "k": 1}', "{}", "", "{bad", "[1]", '{"n": 123456789012345678901234567890}']),
    st.sampled_from([None, {"thought_signature": "sig"}, {"thought_signature": ""}, {"other": 1}]),
)
REASONING = st.sampled_from(
    [None, "", "thinking", (LLMThinking("t", "s"), LLMRedactedThinking("r")), (LLMThinking("t", ""),), ()]
)
ASSISTANT = st.builds(
    LLMAssistantMessage,
    st.sampled_from(["", "text"]),
    REASONING,
    st.lists(TOOL_CALLS, max_size=2).map(tuple),
    st.none(),
    st.sampled_from([(), ("x = 1",)]),
    st.sampled_from(["a1", "a2", None]),
)
RESULT = st.builds(
    LLMToolMessage,
    st.sampled_from(["", "result"]),
    st.sampled_from(["a", "b", "", "bad id!", "call_1", None]),
    st.sampled_from([None, "", "f"]),
    st.booleans(),
    st.sampled_from(["t1", "t2", None]),
)
USER = st.builds(
    LLMUserMessage,
    st.lists(st.sampled_from([LLMTextPart("u"), LLMTextPart("")]), max_size=2).map(tuple),
    st.sampled_from(["u1", None]),
    st.sampled_from([None, "a", "b", "", "console"]),
)
OTHER = st.sampled_from(
    [LLMSystemMessage("s", "s1"), LLMSystemMessage("", "s2"), LLMTFLMessage("out", "sum", {}, "c1")]
)
HISTORY = st.lists(st.one_of(ASSISTANT, RESULT, USER, OTHER), max_size=10)


def _build(dialect: str, history: list[LLMMessage], thinking: bool | None) -> tuple[str, Any, Any]:
    ctx = RequestContext(RequestOptions(thinking=thinking))
    body = get_dialect(dialect).reformat(history, ctx)
    return json.dumps(body), ctx.warnings, provenance_map(body, ctx)


@pytest.mark.parametrize(("dialect", "module"), [("anthropic", anthropic), ("gemini", gemini)])
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(history=HISTORY, thinking=st.sampled_from([None, True, False]))
def test_the_inline_common_turn_gives_the_general_result(
    dialect: str, module: Any, history: list[LLMMessage], thinking: bool | None
) -> None:
    inline = _build(dialect, history, thinking)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "INLINE_COMMON_TURN", False)
        general = _build(dialect, history, thinking)
    assert inline == general
