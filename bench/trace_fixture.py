"""The benchmark trace: one user message whose trace holds N records, fixed seed.

Records alternate: an assistant turn with reasoning and one tool call, then a tool
result of 0.1-4 KB. Shared by the core and provider benchmarks.
"""

from __future__ import annotations

import random
import string

from core import AssistantTextMessage, BaseMessage, IntermediateTrace, TextMessage, ToolCall, ToolReturn


def build_trace_message(records: int = 10_000, seed: int = 299) -> TextMessage:
    """A TextMessage carrying ``records`` trace records, deterministic for a given seed."""
    rng = random.Random(seed)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(2, 9))) for _ in range(500)]

    def text(size: int) -> str:
        out: list[str] = []
        length = 0
        while length < size:
            word = rng.choice(words)
            out.append(word)
            length += len(word) + 1
        return " ".join(out)[:size]

    items: list[AssistantTextMessage | BaseMessage] = []
    ts = 1_700_000_000_000
    for i in range(records // 2):
        call_id = f"call_{i:05d}"
        items.append(
            AssistantTextMessage(
                msg_id=f"a{i:05d}",
                conversation_id="bench",
                create_ts=ts + 2 * i + 1,
                content=text(rng.randint(0, 200)),
                reasoning_content=text(rng.randint(50, 400)),
                tool_calls=[ToolCall(id=call_id, name="search", arguments=f'{{"query": "{text(30)}", "k": {i % 7}}}')],
            )
        )
        items.append(
            BaseMessage(
                role="tool",
                msg_id=f"t{i:05d}",
                conversation_id="bench",
                create_ts=ts + 2 * i + 2,
                tool_reses=[ToolReturn(call_id=call_id, name="search", result=text(rng.randint(100, 4096)))],
            )
        )
    return TextMessage(
        msg_id="u0",
        conversation_id="bench",
        create_ts=ts,
        content="find everything",
        intermediate_trace=IntermediateTrace(records=items),
    )
