"""A small stored conversation for the replay tests: a user turn whose trace holds a tool call, its result
and the final assistant reply; plus a damaged variant (a bare assistant record, TFROB-299)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.store import Store

CONVERSATION = "conv-replay"
DAMAGED = "conv-damaged"
FIRST_REPLY = "a-1"
FINAL_REPLY = "a-2"
ORIGINAL_TEXT = "Lisbon in May is warm: about 22 degrees."


def conversation(conversation_id: str = CONVERSATION, *, damaged: bool = False) -> list[dict[str, Any]]:
    """One user question answered through a tool call, then the reply (ids prefixed when not the default)."""
    p = "" if conversation_id == CONVERSATION else f"{conversation_id}-"
    first: dict[str, Any] = {
        "role": "assistant", "msg_type": "text", "content": "", "msg_id": f"{p}{FIRST_REPLY}", "create_ts": 2_000,
        "conversation_id": conversation_id,
        "tool_calls": [{"id": "call-1", "name": "weather", "arguments": '{"city": "Lisbon"}'}],
    }  # fmt: skip
    if damaged:
        del first["msg_type"]  # a bare assistant record: the seed's contract error when the request is built
    return [
        {"role": "system", "content": "You are a travel agent.", "msg_id": f"{p}s", "create_ts": 500,
         "conversation_id": conversation_id},
        {
            "role": "user", "msg_type": "text", "content": "What is Lisbon like in May?", "msg_id": f"{p}u-1",
            "create_ts": 1_000, "conversation_id": conversation_id,
            "intermediate_trace": {"records": [
                first,
                {"role": "tool", "content": "", "msg_id": f"{p}t-1", "create_ts": 3_000,
                 "conversation_id": conversation_id,
                 "tool_reses": [{"call_id": "call-1", "name": "weather", "result": "22C, sunny"}]},
                {"role": "assistant", "msg_type": "text", "content": ORIGINAL_TEXT, "msg_id": f"{p}{FINAL_REPLY}",
                 "create_ts": 4_000, "conversation_id": conversation_id},
            ]},
        },
    ]  # fmt: skip


def import_lines(store: Store, path: Path, lines: list[dict[str, Any]]) -> Path:
    """Write ``lines`` to ``path`` as JSONL and import the file; returns the path."""
    path.write_text("\n".join(json.dumps(m) for m in lines) + "\n")
    store.import_path(path)
    return path


def seed_store(store: Store, tmp_path: Path) -> Path:
    """Import the conversation and its damaged variant; returns the JSONL written."""
    return import_lines(store, tmp_path / "replay.jsonl", [*conversation(), *conversation(DAMAGED, damaged=True)])
