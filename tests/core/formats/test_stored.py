"""The stored record written for a neutral message gives that message back through ``to_llm_request``: the
import's writer is the exact inverse of the request builder's reader, kind by kind."""

from __future__ import annotations

import pytest

from core.formats.stored import message_json
from core.llm.messages import (
    LLMAssistantMessage,
    LLMFilePart,
    LLMFunctionCall,
    LLMFunctionMessage,
    LLMImagePart,
    LLMMessage,
    LLMRedactedThinking,
    LLMSystemMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMThinking,
    LLMToolCall,
    LLMToolMessage,
    LLMUserMessage,
)
from core.messages.union import MESSAGE_ADAPTER

MESSAGES: list[LLMMessage] = [
    LLMSystemMessage("Be brief."),
    LLMUserMessage((LLMTextPart("hi"),)),
    LLMUserMessage(
        (
            LLMTextPart("look"),
            LLMImagePart(url="https://example.com/cat.png", media_type="image/png"),
            LLMFilePart(data="JVBERi0=", media_type="application/pdf", filename="a.pdf"),
        )
    ),
    LLMAssistantMessage("ok", "because", (LLMToolCall("c1", "w", '{"a": 1}', {"thought_signature": "x"}),)),
    LLMAssistantMessage("", (LLMThinking("hmm", "sig"), LLMRedactedThinking("enc")), (), LLMFunctionCall("f", "{}")),
    LLMAssistantMessage("scripted", None, (), None, ("plan()",)),
    LLMToolMessage("rainy", "c1", "w", True),
    LLMFunctionMessage("f", "1"),
    LLMTFLMessage("out", "sum", {"k": 1}),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_the_stored_record_of_a_message_gives_it_back(message: LLMMessage) -> None:
    record = MESSAGE_ADAPTER.validate_python({**message_json(message), "msg_id": "m1"})
    back = record.to_llm_request()
    got = back[0] if isinstance(back, list) else back
    assert got == type(message)(**{**{f: getattr(message, f) for f in message.__struct_fields__}, "msg_id": "m1"})
