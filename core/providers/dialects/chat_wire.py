"""The openai SDK's wire: its client and errors, shared by Chat Completions and Responses, and Chat Completions'
answer read back."""

from __future__ import annotations

from collections.abc import Callable

from core.messages.objects import ToolCall
from core.providers.base import JSON
from core.providers.wire import ReplyFields, StepUsage, Usage, Wire, int_or_none, posting, sdk_client, sdk_errors

openai_client = sdk_client("openai", "OpenAI")
"""An openai SDK client (Chat Completions and Responses alike)."""
openai_errors = sdk_errors("openai")
"""The openai SDK's exceptions and the outcome each stands for."""


def openai_usage(sent: str, answered: str) -> Callable[[JSON], StepUsage]:
    """The usage reader of an OpenAI API naming the tokens sent and answered so (details: ``<name>_details``)."""

    def usage(response: JSON) -> StepUsage:
        raw = response.get("usage") or {}
        if not isinstance(raw, dict):
            return StepUsage()
        sent_details, answered_details = raw.get(f"{sent}_details") or {}, raw.get(f"{answered}_details") or {}
        return StepUsage(
            int_or_none(raw.get(sent)),
            int_or_none(raw.get(answered)),
            int_or_none(sent_details.get("cached_tokens")),
            int_or_none(answered_details.get("reasoning_tokens")),
        )

    return usage


CHAT_PATH = "/chat/completions"


def parse_reply(data: JSON) -> ReplyFields:
    """A Chat Completions answer's first choice: content, reasoning_content and tool_calls."""
    choice = data["choices"][0]
    msg = choice["message"]
    calls = [
        ToolCall(id=c["id"], name=c["function"]["name"], arguments=c["function"].get("arguments") or "")
        for c in msg.get("tool_calls") or []
    ]
    usage = data.get("usage") or {}
    return (
        {
            "content": msg.get("content") or "",
            "reasoning_content": msg.get("reasoning_content"),
            "tool_calls": calls or None,
        },
        Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"), usage.get("total_tokens")),
        choice.get("finish_reason"),
    )


def openai_wire(name: str, path: str, parse: Callable[[JSON], ReplyFields], sent: str, answered: str) -> Wire:
    """An API the openai SDK speaks (Chat Completions, Responses): its client and errors, ``path`` under ``/v1``,
    its answer read by ``parse`` and its tokens named ``sent`` and ``answered``."""
    return Wire(
        name=name,
        sdk_module="openai",
        logger="openai",
        client=openai_client,
        call=posting(path),
        errors=openai_errors,
        parse=parse,
        usage=openai_usage(sent, answered),
        base_url_suffix="/v1",
    )


CHAT_WIRE = openai_wire("openai", CHAT_PATH, parse_reply, "prompt_tokens", "completion_tokens")
