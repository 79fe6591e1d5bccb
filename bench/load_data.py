"""The load test's store: many everyday conversations and a few very long traces, imported in bulk.

Everything is written as one JSONL file and imported through the store, as ``traceloupe import``
would: one transaction, the importer's own batching. Ids are deterministic, so the load driver
knows every conversation without asking the server, and a store filled once is reused.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.store import Store
from web.devtools.demo_data import long_trace

Json = dict[str, Any]

T0 = 1_767_225_600_000  # 2026-01-01 00:00 UTC, in ms
WORDS = [
    "invoice",
    "churn",
    "latency",
    "shard",
    "replica",
    "deploy",
    "rollback",
    "cache",
    "index",
    "vector",
    "budget",
    "refund",
    "quota",
    "webhook",
    "migration",
    "backup",
    "alert",
    "schema",
    "cursor",
    "retry",
    "timeout",
    "payload",
    "session",
    "token",
    "tenant",
    "region",
]
"""The vocabulary of the generated questions, so every search finds something."""
TOOLS = ("search", "run_sql", "read_file", "lookup_invoice", "run_shell")


def ordinary_id(n: int) -> str:
    return f"load-{n:05d}"


def long_id(n: int) -> str:
    return f"load-long-{n}"


def _msg(cid: str, msg_id: str, ts: int, role: str, msg_type: str | None = None, **fields: Any) -> Json:
    out: Json = {"role": role, "msg_id": msg_id, "conversation_id": cid, "create_ts": ts, **fields}
    if msg_type is not None:
        out["msg_type"] = msg_type
    return out


def ordinary(n: int, rng: random.Random) -> list[Json]:
    """Conversation ``n``: a question answered through one tool call, then a follow-up (two user turns)."""
    cid, ts = ordinary_id(n), T0 + n * 60_000
    topic = " ".join(rng.choices(WORDS, k=3))
    tool = rng.choice(TOOLS)
    call = {"id": f"call-{n}", "name": tool, "arguments": json.dumps({"q": topic})}
    result = f"{rng.randint(1, 900)} rows about {topic}: " + " ".join(rng.choices(WORDS, k=rng.randint(10, 120)))
    trace = [
        _msg(cid, f"{cid}-a1", ts + 1, "assistant", "text", content="", tool_calls=[call]),
        _msg(cid, f"{cid}-t1", ts + 2, "tool", tool_reses=[{"call_id": f"call-{n}", "name": tool, "result": result}]),
        _msg(cid, f"{cid}-a2", ts + 3, "assistant", "text", content=f"Found it: {topic} explains the change."),
    ]
    return [
        _msg(cid, f"{cid}-s", ts - 1, "system", content="You are a careful operations assistant."),
        _msg(cid, f"{cid}-u1", ts, "user", "text", content=f"What happened with {topic}?",
             intermediate_trace={"records": trace}),
        _msg(cid, f"{cid}-u2", ts + 4, "user", "text", content="Thanks.",
             intermediate_trace={"records": [_msg(cid, f"{cid}-a3", ts + 5, "assistant", "text", content="Welcome.")]}),
    ]  # fmt: skip


def long(n: int, records: int) -> list[Json]:
    """Long trace ``n``: the demo's research loop with ``records`` records, under its own ids."""
    cid = long_id(n)
    text = json.dumps(long_trace(records, seed=n))
    old_cid = json.loads(text)[0]["conversation_id"]
    renamed: list[Json] = json.loads(text.replace(f'"{old_cid}"', f'"{cid}"').replace('"lt-', f'"{cid}-'))
    return renamed


def lines(conversations: int, large: int, records: int, seed: int = 5) -> Iterator[str]:
    rng = random.Random(seed)
    for n in range(conversations):
        for message in ordinary(n, rng):
            yield json.dumps(message)
    for n in range(large):
        for message in long(n, records):
            yield json.dumps(message)


def stored(store: Store) -> int:
    """How many conversations the store holds (it counts them as it imports)."""
    return store.counts()["conversations"]


def fill(store: Store, *, conversations: int, large: int, records: int) -> bool:
    """Import the load test's conversations unless the store already holds them; True when it imported."""
    if stored(store) >= conversations + large:
        return False
    with tempfile.TemporaryDirectory(prefix="traceloupe-load-") as folder:
        path = Path(folder) / "load.jsonl"
        with path.open("w") as out:
            for line in lines(conversations, large, records):
                out.write(line + "\n")
        store.import_path(path)
    return True
