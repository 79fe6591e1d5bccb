"""A stored turn of three tool steps and a final answer (the third step two parallel calls), for step replays.

The recorded tool results hold the bytes a careless re-encoding would change: quotes, a newline,
non-ASCII, a JSON-looking text. Also a damaged variant (the second assistant record lost its type).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from core.store import Store
from tests.replay.replay_data import import_lines
from web.devtools.stub_provider import StubServer

STEPS_CONVERSATION = "conv-steps"
STEPS_DAMAGED = "conv-steps-damaged"
TURN = "su-1"
RESULTS = {
    "rec-1": 'Found 3 flights: "TP123" 08:10, "TP125" 12:40\nall direct — Lisboa ✈',
    "rec-2": '{"booking": "B-77", "seats": 2, "note": "aisle \\u00e9"}',
    "rec-3a": "22°C, sunny; wind 5 km/h",
    "rec-3b": "Hotel Avenida: 3 nights, €420\ttotal",
}
FINAL_TEXT = "Booked TP123 for two; Hotel Avenida for three nights; Lisbon will be sunny, 22 degrees."

CALLS: list[list[dict[str, Any]]] = [
    [{"name": "search_flights", "arguments": {"to": "LIS", "date": "2026-05-02", "passengers": 2}}],
    [{"name": "book", "arguments": {"flight": "TP123", "seats": 2, "extras": {"bags": 1, "insurance": False}}}],
    [
        {"name": "weather", "arguments": {"city": "Lisbon"}},
        {"name": "hotel", "arguments": {"city": "Lisbon", "nights": 3}},
    ],
]
"""The recorded calls of steps 1-3, in the stub's script format."""
RECORDED_IDS = [["rec-1"], ["rec-2"], ["rec-3a", "rec-3b"]]
STEP_MSG_IDS = ["sa-1", "sa-2", "sa-3", "sa-4"]


def steps_conversation(conversation_id: str = STEPS_CONVERSATION, *, damaged: bool = False) -> list[dict[str, Any]]:
    """System prompt, then one user turn whose trace holds the three tool steps and the final answer."""
    p = "" if conversation_id == STEPS_CONVERSATION else f"{conversation_id}-"
    records: list[dict[str, Any]] = []
    ts = 2_000
    for step, (calls, ids) in enumerate(zip(CALLS, RECORDED_IDS, strict=True)):
        pairs = list(zip(ids, calls, strict=True))
        assistant: dict[str, Any] = {
            "role": "assistant", "msg_type": "text", "content": "", "msg_id": f"{p}{STEP_MSG_IDS[step]}",
            "create_ts": ts, "conversation_id": conversation_id,
            "tool_calls": [
                {"id": i, "name": c["name"], "arguments": json.dumps(c["arguments"])} for i, c in pairs
            ],
        }  # fmt: skip
        if damaged and step == 1:
            del assistant["msg_type"]
        records.append(assistant)
        records.append({
            "role": "tool", "content": "", "msg_id": f"{p}st-{step + 1}", "create_ts": ts + 100,
            "conversation_id": conversation_id,
            "tool_reses": [{"call_id": i, "name": c["name"], "result": RESULTS[i]} for i, c in pairs],
        })  # fmt: skip
        ts += 1_000
    records.append({
        "role": "assistant", "msg_type": "text", "content": FINAL_TEXT, "msg_id": f"{p}{STEP_MSG_IDS[3]}",
        "create_ts": ts, "conversation_id": conversation_id,
    })  # fmt: skip
    return [
        {"role": "system", "content": "You are a travel agent.", "msg_id": f"{p}ss", "create_ts": 500,
         "conversation_id": conversation_id},
        {"role": "user", "msg_type": "text", "content": "Book me Lisbon for two in May.", "msg_id": f"{p}{TURN}",
         "create_ts": 1_000, "conversation_id": conversation_id, "intermediate_trace": {"records": records}},
    ]  # fmt: skip


def seed_steps(store: Store, tmp_path: Path) -> None:
    """Import the turn and its damaged variant."""
    lines = [*steps_conversation(), *steps_conversation(STEPS_DAMAGED, damaged=True)]
    import_lines(store, tmp_path / "steps.jsonl", lines)


def script(stub: StubServer, model: str, steps: list[dict[str, Any]]) -> None:
    """Queue a step script through the stub's HTTP endpoint, as the demo does."""
    answer = httpx.post(f"{stub.base_url}/__stub/script", json={"model": model, "steps": steps})
    assert answer.status_code == 200


def identical_steps() -> list[dict[str, Any]]:
    """A step script that makes the recorded calls, then gives the recorded final answer."""
    return [*({"text": "", "tool_calls": calls} for calls in CALLS), {"text": FINAL_TEXT}]
