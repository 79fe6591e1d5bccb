"""ChatLLM: the seed's request assembly, one named and inspectable step per phase.

::

    construct_request_params
      ├─ construct_prompt_context     history expansion: each user message's trace placed by create_ts
      ├─ _configure_api_params        dialect hook: model, limits, reasoning switches
      ├─ format_to_request_msgs       to_llm_request() on every message (a damaged record raises here)
      ├─ to_list                      flatten and merge: tool calls paired, orphans settled
      ├─ reformat_request_msg_to_api  dialect hook: neutral messages -> provider messages
      └─ _assemble_api_request        dialect hook: the final body with tools and parameters

Each phase's output is kept on the :class:`RequestResult` (as JSON on demand, so the hot
path pays nothing for it), with the degradation warnings and a map from msg_id to the
JSON pointers of the body nodes it became.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.context import Conversation, PromptContext
from core.errors import UnknownNameError
from core.llm.messages import LLMMessage
from core.messages.base import BaseMessage
from core.messages.union import Message
from core.messages.user import UserMessage
from core.providers.base import JSON, Degradation, Dialect, RequestContext, RequestOptions
from core.providers.jsonable import llm_message_json, provenance_map
from core.providers.pairing import to_list
from core.providers.registry import get_dialect

Formatted = LLMMessage | list[LLMMessage]
"""What ``to_llm_request`` returns for one stored message."""

PHASES: tuple[str, ...] = (
    "construct_prompt_context",
    "_configure_api_params",
    "format_to_request_msgs",
    "to_list",
    "reformat_request_msg_to_api",
    "_assemble_api_request",
)
"""The phase names, in order; the keys of :attr:`RequestResult.phases`."""


@dataclass(frozen=True, slots=True)
class Placed:
    """A message of the expanded history and where it came from (``top``, ``pre``/``post`` a user turn, or
    ``intermediate``: the current chain's records)."""

    message: Message
    placement: str
    of: str | None = None


def expand_trace_for_msg(msg: Message) -> tuple[list[Placed], list[Placed]]:
    """Split a user message's trace records into those before it and those after it, by ``create_ts``.

    Records are ordered by ``create_ts`` (stable: equal stamps keep their stored order); a record
    stamped earlier than the user message goes before it, every other one after it (the seed's
    ``_expand_trace_for_msg``).
    """
    if not isinstance(msg, UserMessage) or not msg.intermediate_trace.records:
        return [], []
    records = sorted(msg.intermediate_trace.records, key=_create_ts)
    pre = [Placed(r, "pre", msg.msg_id) for r in records if r.create_ts < msg.create_ts]
    post = [Placed(r, "post", msg.msg_id) for r in records if r.create_ts >= msg.create_ts]
    return pre, post


def _create_ts(msg: BaseMessage) -> int:
    return msg.create_ts


class RequestResult:
    """A built request: the body, each phase's output, the warnings, and where each message went."""

    __slots__ = ("_ctx", "_phase_data", "body", "dialect", "model", "warnings")

    def __init__(self, dialect: str, model: str, body: JSON, ctx: RequestContext, phase_data: dict[str, Any]):
        self.dialect = dialect
        self.model = model
        self.body = body
        self.warnings: list[Degradation] = ctx.warnings
        self._ctx = ctx
        self._phase_data = phase_data

    @property
    def phases(self) -> dict[str, Any]:
        """Each phase's output as JSON, by phase name (built on demand)."""
        data = self._phase_data
        placed: list[Placed] = data["construct_prompt_context"]
        formatted: list[tuple[str, Formatted]] = data["format_to_request_msgs"]
        return {
            "construct_prompt_context": [
                {"msg_id": p.message.msg_id, "tag": p.message.tag, "placement": p.placement, "of": p.of} for p in placed
            ],
            "_configure_api_params": data["_configure_api_params"],
            "format_to_request_msgs": [
                {"msg_id": msg_id, "llm": [llm_message_json(m) for m in (out if isinstance(out, list) else [out])]}
                for msg_id, out in formatted
            ],
            "to_list": [llm_message_json(m) for m in data["to_list"]],
            "reformat_request_msg_to_api": data["reformat_request_msg_to_api"],
            "_assemble_api_request": self.body,
        }

    @property
    def provenance(self) -> dict[str, list[str]]:
        """msg_id -> JSON pointers (RFC 6901) of the body nodes that message became."""
        return provenance_map(self.body, self._ctx)

    def warnings_json(self) -> list[JSON]:
        """The warnings as JSON objects."""
        return [w.to_json() for w in self.warnings]


class ChatLLM:
    """Builds one provider's request body from a conversation; the dialect supplies the three hooks."""

    def __init__(self, dialect: str | Dialect, options: RequestOptions | None = None) -> None:
        self.dialect = get_dialect(dialect) if isinstance(dialect, str) else dialect
        self.options = options or RequestOptions()

    # -- phase 1 ---------------------------------------------------------------------------------------------
    def construct_prompt_context(
        self, conversation: Conversation | Sequence[Message], intermediate_msgs: Sequence[Message] | None = None
    ) -> PromptContext:
        """The prompt context: the conversation with every user message's trace expanded around it."""
        msgs = conversation.msgs if isinstance(conversation, Conversation) else list(conversation)
        return PromptContext(
            conversation=Conversation.model_construct(msgs=[p.message for p in self._placed(msgs, intermediate_msgs)]),
            intermediate_msgs=list(intermediate_msgs) if intermediate_msgs is not None else None,
        )

    @staticmethod
    def _placed(msgs: Iterable[Message], intermediate: Sequence[Message] | None = None) -> list[Placed]:
        placed: list[Placed] = []
        for msg in msgs:
            pre, post = expand_trace_for_msg(msg)
            placed.extend(pre)
            placed.append(Placed(msg, "top"))
            placed.extend(post)
        placed.extend(Placed(m, "intermediate") for m in intermediate or ())
        return placed

    # -- phase 2 ---------------------------------------------------------------------------------------------
    def _configure_api_params(self) -> JSON:
        """Provider hook: the request parameters other than messages and tools."""
        return self.dialect.configure_api_params(self.options)

    # -- phase 3 ---------------------------------------------------------------------------------------------
    @staticmethod
    def format_to_request_msgs(msgs: Iterable[Message]) -> list[tuple[str, Formatted]]:
        """``to_llm_request()`` on every message, keyed by msg_id. A damaged record raises ContractError."""
        return [(m.msg_id, m.to_llm_request()) for m in msgs]

    # -- phase 4 ---------------------------------------------------------------------------------------------
    @staticmethod
    def to_list(
        formatted: Iterable[tuple[str, LLMMessage | list[LLMMessage]]], ctx: RequestContext
    ) -> list[LLMMessage]:
        """Flatten and merge (see :mod:`core.providers.pairing`)."""
        return to_list((out for _, out in formatted), ctx)

    # -- phase 5 ---------------------------------------------------------------------------------------------
    def reformat_request_msg_to_api(self, messages: Sequence[LLMMessage], ctx: RequestContext) -> JSON:
        """Provider hook: the neutral messages as the provider's message fragments."""
        return self.dialect.reformat(messages, ctx)

    # -- phase 6 ---------------------------------------------------------------------------------------------
    def _assemble_api_request(self, params: JSON, fragments: JSON, ctx: RequestContext) -> JSON:
        """Provider hook: the final request body."""
        return self.dialect.assemble(params, fragments, ctx)

    def construct_request_params(
        self,
        conversation: Conversation | Sequence[Message],
        intermediate_msgs: Sequence[Message] | None = None,
        *,
        upto: str | None = None,
    ) -> RequestResult:
        """Run every phase and return the body with its phase outputs, warnings and provenance.

        ``upto`` names a message of the expanded history: the request is the one that produced it,
        i.e. built from everything strictly before it (UnknownNameError when no message has that id).
        """
        msgs = conversation.msgs if isinstance(conversation, Conversation) else list(conversation)
        placed = self._placed(msgs, intermediate_msgs)
        if upto is not None:
            placed = placed[: _index_of(placed, upto)]
        ctx = RequestContext(self.options)
        _collect_call_extras(placed, ctx)
        params = self._configure_api_params()
        formatted = self.format_to_request_msgs(p.message for p in placed)
        flat = self.to_list(formatted, ctx)
        fragments = self.reformat_request_msg_to_api(flat, ctx)
        body = self._assemble_api_request(params, fragments, ctx)
        phase_data = {
            "construct_prompt_context": placed,
            "_configure_api_params": params,
            "format_to_request_msgs": formatted,
            "to_list": flat,
            "reformat_request_msg_to_api": fragments,
        }
        model = self.options.model or self.dialect.default_model
        return RequestResult(self.dialect.name, model, body, ctx, phase_data)


def _collect_call_extras(placed: Iterable[Placed], ctx: RequestContext) -> None:
    """Keep the provider fields of stored tool calls (unknown keys survive on ToolCall) for the dialects."""
    extras = ctx.call_extras
    for p in placed:
        calls = p.message.tool_calls
        if calls:
            for call in calls:
                if call.model_extra:
                    extras[call.id] = call.model_extra


def _index_of(placed: list[Placed], msg_id: str) -> int:
    for i, p in enumerate(placed):
        if p.message.msg_id == msg_id:
            return i
    raise UnknownNameError(f"no message with msg_id {msg_id!r} in this conversation")
