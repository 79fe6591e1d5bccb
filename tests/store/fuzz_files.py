"""Hypothesis inputs for the reader and the import: random bytes and mutated valid files, and the settings that
replay a fixed set in CI (``TRACELOUPE_FUZZ_EXAMPLES`` widens the search to fresh draws)."""

from __future__ import annotations

import os
from typing import Any

import orjson
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from core.jsonio import dumps
from tests.strategies import messages

_WIDER = os.environ.get("TRACELOUPE_FUZZ_EXAMPLES")


def fuzz(examples: int) -> settings:
    """``examples`` fixed inputs in CI; a session sets TRACELOUPE_FUZZ_EXAMPLES to draw that many fresh ones."""
    return settings(
        max_examples=int(_WIDER) if _WIDER else examples,
        derandomize=_WIDER is None,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    )


SHARED_IDS = st.sampled_from(["m1", "m2", "c1", "x" * 513])
"""Ids the mutations reuse, so files collide with each other and with themselves (and one is too long)."""


def _jsonl(items: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(item, option=orjson.OPT_PASSTHROUGH_SUBCLASS) + b"\n" for item in items)


@st.composite
def mutated_files(draw: st.DrawFn) -> bytes:
    """A valid JSONL file of a few messages, then a few edits of the kinds hostile files make."""
    items = draw(st.lists(messages(max_depth=2), min_size=1, max_size=4))
    for item in items:
        if draw(st.booleans()):
            item["msg_id"] = draw(SHARED_IDS)
        if draw(st.booleans()):
            item["conversation_id"] = draw(st.sampled_from(["c1", "c2", "x" * 513]))
    data = bytearray(_jsonl(items))
    if draw(st.booleans()):
        data += draw(run_lines(str(items[0].get("conversation_id", "c1"))))
    for _ in range(draw(st.integers(0, 3))):
        edit = draw(st.sampled_from(["flip", "cut", "insert", "repeat", "nest", "number", "nul"]))
        at = draw(st.integers(0, max(0, len(data) - 1)))
        if edit == "flip" and data:
            data[at] ^= draw(st.integers(1, 255))
        elif edit == "cut":
            del data[at:]
        elif edit == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif edit == "repeat":
            line = draw(st.sampled_from(bytes(data).splitlines() or [b""]))
            data += line + b"\n"
        elif edit == "nest":
            depth = draw(st.sampled_from([64, 126, 254, 255, 600, 985, 1030]))
            data[at:at] = b"[" * depth + b"]" * depth
        elif edit == "number":
            data[at:at] = draw(st.sampled_from([b"1e999", b"-0", b"18446744073709551616", b"9" * 40, b"NaN"]))
        else:
            data[at:at] = b"\\u0000"
    return bytes(data)


@st.composite
def run_lines(draw: st.DrawFn, conversation_id: str) -> bytes:
    """One or two export run lines (``{"traceloupe_run": ...}``) with the fields hostile files give them."""
    lines = b""
    for _ in range(draw(st.integers(1, 2))):
        run: dict[str, Any] = {
            "run_id": draw(st.sampled_from(["r1", "r2", "x" * 513])),
            "conversation_id": draw(st.sampled_from([conversation_id, "elsewhere"])),
            "provider": draw(st.sampled_from(["openai", "p" * 41])),
            "model": draw(st.sampled_from(["gpt-4o", "g" * 201])),
            "status": draw(st.sampled_from(["ok", "error", "running", "nope"])),
            "request_body": {"__body__": 0},
            "started_at": draw(st.sampled_from([1, 2**63, -(2**63) - 1])),
        }
        extra = draw(st.sampled_from(["", "idempotency_key", "error", "input_tokens", "response_body", "up_to_msg_id"]))
        if extra == "idempotency_key":
            run[extra] = draw(st.sampled_from(["k" * 16, "k" * 5000, "k\x00ey"]))
        elif extra == "error":
            run[extra] = draw(st.sampled_from(["bad\x00", "e" * 10_000]))
        elif extra == "input_tokens":
            run[extra] = draw(st.sampled_from([10, 2**31, -1]))
        elif extra == "response_body":
            run[extra] = draw(st.sampled_from([{"id": "x"}, [], {"k\x00": 1}]))
        elif extra == "up_to_msg_id":
            run[extra] = draw(st.sampled_from(["m1", "x" * 513, "m\x00"]))
        depth = draw(st.sampled_from([1, 10, 254, 300, 900, 1010]))
        body = b'{"a":' * (depth - 1) + b'{"model":"gpt-4o"}' + b"}" * (depth - 1)
        line = dumps({"traceloupe_run": run}) + b"\n"  # orjson cannot write the integers past 64 bits
        lines += line.replace(b'{"__body__":0}', body)
    return lines


FILES = st.binary(max_size=300) | mutated_files()
DEEP = b'{"role":"system","additional_kwargs":{"x":' + b"[" * 998 + b"]" * 998 + b"}}\n"
