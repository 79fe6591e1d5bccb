"""Fast paths against their oracles.

``arguments_object`` trusts orjson alone when the object it read is flat and holds no float (a long
integer would have come back as a float); anything else goes through the exact reader. Any text, valid
or not, long integers and floats at any depth included, must give the same object and warnings as the
exact reader alone.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.jsonio import loads
from core.llm.messages import (
    LLMToolCall,
    parse_arguments,
)
from core.providers.arguments import STRICT_JSON_RULE
from core.providers.base import RAW_ARGUMENTS_KEY, RequestContext, RequestOptions, arguments_object
from tests.long_runs import examples

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
        seen: list[str] = []
        try:  # NaN and Infinity are not JSON: they travel as the strings they were written as
            parsed = json.loads(call.arguments, parse_constant=lambda literal: seen.append(literal) or literal)
        except ValueError:
            parsed = None
        if type(parsed) is dict and seen:
            listed = ", ".join(sorted(set(seen)))
            ctx.warn(
                "m",
                "tool_call.arguments",
                f"call {call.id}: {listed} in the arguments is not JSON; sent as a string",
                STRICT_JSON_RULE,
            )
            return parsed
        parsed = parse_arguments(call.arguments)
    if type(parsed) is dict:
        return parsed
    ctx.warn(
        "m", "tool_call.arguments", f"call {call.id}: arguments are not a JSON object; sent under {RAW_ARGUMENTS_KEY!r}"
    )
    return {RAW_ARGUMENTS_KEY: call.arguments}


@settings(max_examples=examples(200, long=800), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON_TEXTS | ODD_TEXTS | st.text(max_size=12))
def test_arguments_object_equals_the_exact_reader(text: str) -> None:
    call = LLMToolCall("c1", "f", text)
    fast_ctx, exact_ctx = RequestContext(RequestOptions()), RequestContext(RequestOptions())
    fast, exact = arguments_object(call, "m", fast_ctx), _exact(call, exact_ctx)
    # The stdlib writer tells 1 from 1.0 and writes integers of any size: equal text, equal values and types.
    assert json.dumps(fast) == json.dumps(exact)
    assert fast_ctx.warnings == exact_ctx.warnings
