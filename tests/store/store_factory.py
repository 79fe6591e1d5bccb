"""Seeded synthetic conversations for the store tests, the torture workers and the benchmark.

Every message kind of FORMAT.md appears: the nine user kinds, assistant replies with
reasoning and tool calls, tool / console / system / function records, damaged
(bare) user and assistant records at any depth, and keys the parser does not know.
"""

from __future__ import annotations

import random
from typing import Any

import orjson

from core.reader import read_bytes
from core.store import Store

USER_KINDS = ("text", "image", "audio", "video", "attachment", "url", "contact", "history", "multipart")


def _user_content(rng: random.Random, kind: str, text: str) -> Any:
    match kind:
        case "text":
            return text
        case "image" | "audio" | "video" | "attachment":
            return rng.choice([f"uploads/{kind}-{rng.randrange(999)}.bin", f"https://example.com/{kind}.bin"])
        case "url":
            return "https://example.com/page"
        case "contact":
            return {"uid": f"u{rng.randrange(999)}", "name": "Li Lei"}
        case "history":
            return [
                {
                    "role": "user",
                    "msg_type": "text",
                    "content": f"forwarded {text}",
                    "create_ts": 1,
                    "msg_id": f"h{rng.random()}",
                },
                {
                    "role": "assistant",
                    "content": "bare assistant in a history",
                    "create_ts": 1,
                    "msg_id": f"h{rng.random()}",
                },
            ]
        case "multipart":
            return [{"type": "text", "text": text}, {"type": "image", "url": "https://example.com/x.png"}]
    raise AssertionError(kind)


def trace_records(rng: random.Random, prefix: str, ts: int, n: int) -> list[dict[str, Any]]:
    """``n`` intermediate records: assistant with a tool call, tool result, console, and some damage."""
    out: list[dict[str, Any]] = []
    for i in range(n):
        mid = f"{prefix}-r{i}"
        choice = i % 5
        if choice == 0:
            out.append(
                {
                    "role": "assistant",
                    "msg_type": "text",
                    "content": f"thinking about step {i}",
                    "reasoning_content": "because reasons",
                    "tool_calls": [{"id": f"{mid}-c", "name": "search", "arguments": '{"q": "cats"}'}],
                    "create_ts": ts + i + 1,
                    "msg_id": mid,
                }
            )
        elif choice == 1:
            out.append(
                {
                    "role": "tool",
                    "tool_reses": [{"call_id": f"{mid}-c", "result": f"tool output {i}", "is_error": False}],
                    "create_ts": ts + i + 1,
                    "msg_id": mid,
                }
            )
        elif choice == 2:
            out.append(
                {
                    "role": "console",
                    "console_reses": [{"result": "42", "summary_result": "the answer", "meta": {"k": i}}],
                    "create_ts": ts + i + 1,
                    "msg_id": mid,
                }
            )
        elif choice == 3:
            # A damaged record: the pre-fix schema dropped msg_type.
            out.append({"role": "assistant", "content": f"lost type {i}", "create_ts": ts + i + 1, "msg_id": mid})
        else:
            out.append({"role": "system", "content": "be brief", "create_ts": ts + i + 1, "msg_id": mid})
    return out


def conversation(
    rng: random.Random, conversation_id: str, *, turns: int = 3, records: int = 4, text: str | None = None
) -> list[dict[str, Any]]:
    """One conversation as top-level messages: user turns (with traces) and assistant replies."""
    out: list[dict[str, Any]] = []
    ts = rng.randrange(1_600_000_000_000, 1_700_000_000_000)
    for t in range(turns):
        kind = USER_KINDS[(t + rng.randrange(len(USER_KINDS))) % len(USER_KINDS)] if t else "text"
        base = f"{conversation_id}-t{t}"
        body = text if text is not None else f"question {rng.randrange(10**6)} about {conversation_id}"
        out.append(
            {
                "role": "user",
                "msg_type": kind,
                "content": _user_content(rng, kind, body),
                "create_ts": ts,
                "msg_id": f"{base}-u",
                "conversation_id": conversation_id,
                "creator": {"uid": "u1", "name": "Han Meimei"},
                "intermediate_trace": {"records": trace_records(rng, base, ts, records)},
                "x_agent_extra": {"kept": [1, "two", None]},
            }
        )
        out.append(
            {
                "role": "assistant",
                "msg_type": "text",
                "content": f"answer {t}",
                "create_ts": ts + records + 1,
                "msg_id": f"{base}-a",
                "conversation_id": conversation_id,
            }
        )
        ts += records + 10
    return out


def dataset(seed: int, conversations: int, **kwargs: Any) -> list[dict[str, Any]]:
    """Messages of several conversations, interleaved the way an agent's log file interleaves them."""
    rng = random.Random(seed)
    convs = [conversation(rng, f"s{seed}-c{i}", **kwargs) for i in range(conversations)]
    out: list[dict[str, Any]] = []
    while any(convs):
        pick = rng.choice([c for c in convs if c])
        out.append(pick.pop(0))
    return out


def count_nested(message: dict[str, Any]) -> tuple[int, int]:
    """(nested messages, damaged records at any depth incl. itself) of a message dict: the test oracle."""
    nested = 0
    damaged = 0
    stack = [(message, True)]
    while stack:
        m, top = stack.pop()
        if not top:
            nested += 1
        if m.get("role") in ("user", "assistant") and "msg_type" not in m:
            damaged += 1
        kids = list(m.get("intermediate_trace", {}).get("records", [])) if "msg_type" in m else []
        content = m.get("content")
        if isinstance(content, list) and content and isinstance(content[0], dict) and "role" in content[0]:
            kids.extend(content)
        stack.extend((k, False) for k in kids)
    return nested, damaged


def import_texts(store: Store, texts: dict[str, str]) -> None:
    """Import one user text message per conversation id (``{conversation id: its text}``)."""
    lines = [
        {"role": "user", "msg_type": "text", "content": text, "create_ts": n, "msg_id": f"m{n}", "conversation_id": cid}
        for n, (cid, text) in enumerate(texts.items(), 1)
    ]
    store.import_records(read_bytes(b"".join(orjson.dumps(m) + b"\n" for m in lines), source="s"), source="s")
