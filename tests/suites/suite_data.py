"""Conversations for suite tests and the benchmark: one tool step and a final answer each, with a marker.

Each conversation's user text holds a marker (``<<c007>>``) the stub provider can be scripted on
(``{"match": marker, "steps": [...]}``), so many conversations replayed at once each get their own answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from core.store import Store

FINAL_TEXT = "This is the stub provider's reply."
"""The recorded final answer: the stub's unscripted text reply, so a final-mode replay the stub answers matches."""


def conversation_id(i: int) -> str:
    """The id of conversation ``i``."""
    return f"suite-conv-{i:03d}"


def marker(i: int) -> str:
    """The text only conversation ``i``'s requests carry."""
    return f"<<c{i:03d}>>"


def call(i: int) -> dict[str, Any]:
    """The recorded tool call of conversation ``i``, in the stub's script format."""
    return {"name": "weather", "arguments": {"city": f"city-{i:03d}"}}


def messages(i: int, *, damaged: bool = False) -> list[dict[str, Any]]:
    """A user turn whose trace calls one tool, and the final answer after it (``damaged``: the step lost its type)."""
    cid = conversation_id(i)
    ts = 1_000_000 + i * 1_000
    recorded_call = {"id": f"{cid}-call", "name": "weather", "arguments": json.dumps(call(i)["arguments"])}
    out: list[dict[str, Any]] = [
        {
            "role": "user", "msg_type": "text", "content": f"What is the weather {marker(i)}?", "msg_id": f"{cid}-u",
            "create_ts": ts, "conversation_id": cid,
            "intermediate_trace": {"records": [
                {"role": "assistant", "msg_type": "text", "content": "", "msg_id": f"{cid}-step",
                 "create_ts": ts + 1, "conversation_id": cid, "tool_calls": [recorded_call]},
                {"role": "tool", "content": "", "msg_id": f"{cid}-result", "create_ts": ts + 2, "conversation_id": cid,
                 "tool_reses": [{"call_id": f"{cid}-call", "name": "weather", "result": "sunny, 22 C"}]},
            ]},
        },
        {"role": "assistant", "msg_type": "text", "content": FINAL_TEXT, "msg_id": f"{cid}-a", "create_ts": ts + 3,
         "conversation_id": cid},
    ]  # fmt: skip
    if damaged:
        del out[0]["intermediate_trace"]["records"][0]["msg_type"]
    return out


def seed(store: Store, folder: Path, count: int, *, damaged: frozenset[int] = frozenset()) -> list[str]:
    """Import ``count`` conversations (those in ``damaged`` with a damaged record); their ids."""
    path = folder / "suite.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for i in range(count) for m in messages(i, damaged=i in damaged)))
    store.import_path(path)
    return [conversation_id(i) for i in range(count)]


def same_steps(i: int) -> list[dict[str, Any]]:
    """The stub's answers that replay conversation ``i`` as recorded (steps mode)."""
    return [{"text": "", "tool_calls": [call(i)]}, {"text": FINAL_TEXT}]


def diverging_steps(i: int) -> list[dict[str, Any]]:
    """Answers that leave conversation ``i``'s recorded path at step 1 (other arguments)."""
    return [{"text": "", "tool_calls": [{"name": "weather", "arguments": {"city": "somewhere else"}}]}]


def script(base_url: str, count: int, *, diverge: frozenset[int] = frozenset(), mode: str = "steps") -> None:
    """Script the stub for one suite run of ``count`` conversations, diverging on ``diverge``."""
    for i in range(count):
        if i in diverge:
            steps = diverging_steps(i)
        elif mode == "steps":
            steps = same_steps(i)
        else:
            continue  # final mode: the stub's default text answer is the recorded final answer
        answer = httpx.post(f"{base_url}/__stub/script", json={"match": marker(i), "steps": steps})
        assert answer.status_code == 200
