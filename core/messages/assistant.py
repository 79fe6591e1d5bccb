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
from core.messages.objects import FunctionCall, ReasoningBlock, ThinkingBlock, ToolCall


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
        # Positional and branch-light: this runs once per assistant record on every request build. Fields are
        # read from the instance dicts, as BaseMessage.to_llm_request explains.
        fields = self.__dict__
        calls: list[ToolCall] | None = fields["tool_calls"]
        reasoning: str | list[ReasoningBlock] | None = fields["reasoning_content"]
        function_call: FunctionCall | None = fields["function_call"]
        scripts: list[str] | None = fields["tfl_scripts"]
        llm_calls: tuple[LLMToolCall, ...] = ()
        if calls:
            if len(calls) == 1:  # the usual turn, built here: one tuple, no call, no list on the way
                c = calls[0]
                call = c.__dict__
                llm_calls = (LLMToolCall(call["id"], call["name"], call["arguments"], c.__pydantic_extra__ or None),)
            else:
                llm_calls = _llm_calls(calls)
        return LLMAssistantMessage(
            fields["content"],
            reasoning if reasoning is None or type(reasoning) is str else _llm_reasoning(reasoning),
            llm_calls,
            None if function_call is None else LLMFunctionCall(function_call.name, function_call.arguments),
            tuple(scripts) if scripts else (),
            fields["msg_id"],
        )


def _llm_calls(calls: list[ToolCall]) -> tuple[LLMToolCall, ...]:
    """The calls in the neutral format, each with the provider fields it carried (unknown keys on ToolCall)."""
    return tuple([LLMToolCall(c.id, c.name, c.arguments, c.__pydantic_extra__ or None) for c in calls])


def _llm_reasoning(reasoning: str | list[ReasoningBlock]) -> str | tuple[LLMReasoningBlock, ...]:
    """Reasoning in the neutral format: a string as it is, signed and redacted blocks as blocks."""
    if isinstance(reasoning, str):
        return reasoning
    return tuple(
        LLMThinking(b.thinking, b.signature) if isinstance(b, ThinkingBlock) else LLMRedactedThinking(b.data)
        for b in reasoning
    )
