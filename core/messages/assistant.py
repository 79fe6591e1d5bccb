"""The assistant message family: today only AssistantTextMessage."""

from __future__ import annotations

from typing import Literal

from core.llm.messages import (
    LLMAssistantMessage,
    LLMFunctionCall,
    LLMReasoningBlock,
    LLMRedactedThinking,
    LLMThinking,
    LLMToolCall,
)
from core.messages.base import BaseMessage
from core.messages.objects import ReasoningBlock, ThinkingBlock


class AssistantMessage(BaseMessage):
    """What every assistant message shares."""

    role: Literal["assistant"] = "assistant"
    msg_type: Literal["text"]


class AssistantTextMessage(AssistantMessage):
    """A model reply: text, reasoning (DeepSeek string or Anthropic blocks) and tool calls."""

    msg_type: Literal["text"] = "text"
    content: str = ""
    reasoning_content: str | list[ReasoningBlock] | None = None

    def to_llm_request(self) -> LLMAssistantMessage:
        """This reply in the neutral format; TFL scripts stay part of this assistant turn."""
        return LLMAssistantMessage(
            content=self.content,
            reasoning_content=self._llm_reasoning(),
            tool_calls=tuple(LLMToolCall(id=c.id, name=c.name, arguments=c.arguments) for c in self.tool_calls or ()),
            function_call=(
                LLMFunctionCall(name=self.function_call.name, arguments=self.function_call.arguments)
                if self.function_call is not None
                else None
            ),
            tfl_scripts=tuple(self.tfl_scripts or ()),
            msg_id=self.msg_id,
        )

    def _llm_reasoning(self) -> str | tuple[LLMReasoningBlock, ...] | None:
        reasoning = self.reasoning_content
        if reasoning is None or isinstance(reasoning, str):
            return reasoning
        return tuple(
            LLMThinking(thinking=b.thinking, signature=b.signature)
            if isinstance(b, ThinkingBlock)
            else LLMRedactedThinking(data=b.data)
            for b in reasoning
        )
