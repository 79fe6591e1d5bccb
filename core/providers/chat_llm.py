"""ChatLLM: the seed's request assembly, one named and inspectable step per phase.

::

    construct_request_params
      ├─ construct_prompt_context     history expansion: each user message's trace placed by create_ts
      ├─ _configure_api_params        dialect hook: model, limits, reasoning switches
      ├─ format_to_request_msgs       to_llm_request() on every message (a damaged record raises here)
      ├─ to_list                      flatten and merge: tool calls paired, orphans settled
      │   └─ infer_tools              no tools given and calls recorded: tools inferred from the calls
      ├─ reformat_request_msg_to_api  dialect hook: neutral messages -> provider messages
      └─ _assemble_api_request        dialect hook: the final body with tools and parameters

Each phase's output is kept on the :class:`RequestResult` (as JSON on demand, so the hot
path pays nothing for it), with the degradation warnings and a map from msg_id to the
JSON pointers of the body nodes it became.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.context import Conversation, PromptContext
from core.errors import UnknownNameError
from core.llm.messages import LLMMessage
from core.messages.door import gc_paused
from core.messages.placement import Side, place_messages
from core.messages.union import Message
from core.models.limits import MAX_OUTPUT_RULE, fit_to_model
from core.models.table import facts_for
from core.providers.base import JSON, Degradation, Dialect, RequestContext, RequestOptions, ToolSpec, ToolsSource
from core.providers.inferred_tools import InferredTool, infer_tools, recorded_calls
from core.providers.jsonable import llm_message_json, provenance_map
from core.providers.media_rules import media_rules
from core.providers.pairing import to_list
from core.providers.profiles import ModelProfile, profile_for

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


_SEGMENT: dict[Side, str] = {"before": "pre", "after": "post"}
"""The label of a trace record's side in ``Expanded.segments``."""


@dataclass(slots=True)
class Expanded:
    """The expanded history: the messages in order, and where each run of them came from.

    ``segments`` holds ``(start, end, placement, of)``: ``top`` for a conversation message,
    ``pre``/``post`` for trace records placed before/after user message ``of``, ``intermediate`` for
    the current chain's records. Runs, not per-message objects, so expanding 10,000 records costs a sort.
    """

    messages: list[Message]
    segments: list[tuple[int, int, str, str | None]]

    def cut(self, end: int) -> Expanded:
        """The history before index ``end``."""
        kept = [(a, min(b, end), p, of) for a, b, p, of in self.segments if a < end]
        return Expanded(self.messages[:end], kept)

    def to_prompt_context(self) -> PromptContext:
        """The seed's PromptContext: a conversation of the expanded messages, the chain's records apart."""
        intermediate = [m for a, b, p, _ in self.segments if p == "intermediate" for m in self.messages[a:b]]
        top = [m for a, b, p, _ in self.segments if p != "intermediate" for m in self.messages[a:b]]
        return PromptContext(
            conversation=Conversation.model_construct(msgs=top), intermediate_msgs=intermediate or None
        )

    def to_json(self) -> list[JSON]:
        """One entry per message: its msg_id, tag, placement and the user message it was placed around."""
        msgs = self.messages
        return [
            {"msg_id": msgs[i].msg_id, "tag": msgs[i].tag, "placement": placement, "of": of}
            for start, end, placement, of in self.segments
            for i in range(start, end)
        ]


class RequestResult:
    """A built request: the body, each phase's output, the warnings, and where each message went."""

    __slots__ = (
        "_ctx",
        "_phase_data",
        "_warnings",
        "body",
        "dialect",
        "inferred_calls",
        "model",
        "profile",
        "provider",
    )

    def __init__(
        self,
        provider: Dialect,
        model: str,
        body: JSON,
        ctx: RequestContext,
        phase_data: dict[str, Any],
        profile: ModelProfile,
        inferred_calls: int = 0,
    ):
        self.provider = provider
        self.dialect = provider.name  # the provider's name, as pages, diffs and stored runs show it
        self.model = model
        self.profile = profile  # what the model accepts, chosen by name (core.providers.profiles)
        self.body = body
        self._warnings: list[Degradation] | None = None
        self._ctx = ctx
        self._phase_data = phase_data
        self.inferred_calls = inferred_calls
        """How many recorded calls the tools were inferred from (0 unless ``tools_source`` is "inferred")."""

    @property
    def tools(self) -> tuple[ToolSpec, ...]:
        """The tools the body carries (as given or inferred, before the provider's name and schema rules)."""
        return self._ctx.options.tools

    @property
    def tools_source(self) -> ToolsSource:
        """Where the tools came from: stored, given, inferred, or none."""
        return self._ctx.options.tools_source

    @property
    def phases(self) -> dict[str, Any]:
        """Each phase's output as JSON, by phase name (built on demand)."""
        data = self._phase_data
        expanded: Expanded = data["construct_prompt_context"]
        formatted: list[Formatted] = data["format_to_request_msgs"]
        return {
            "construct_prompt_context": expanded.to_json(),
            "_configure_api_params": data["_configure_api_params"],
            "format_to_request_msgs": [
                {"msg_id": msg.msg_id, "llm": [llm_message_json(m) for m in (out if isinstance(out, list) else [out])]}
                for msg, out in zip(expanded.messages, formatted, strict=True)
            ],
            "to_list": [llm_message_json(m) for m in data["to_list"]],
            "reformat_request_msg_to_api": data["reformat_request_msg_to_api"],
            "_assemble_api_request": self.body,
        }

    @property
    def provenance(self) -> dict[str, list[str]]:
        """msg_id -> JSON pointers (RFC 6901) of the body nodes that message became."""
        return provenance_map(self.body, self._ctx)

    @property
    def warnings(self) -> list[Degradation]:
        """What was degraded, moved or dropped, each naming its msg_id, in the order it happened."""
        if self._warnings is None:
            self._warnings = [Degradation._make(w) for w in self._ctx.warnings]
        return self._warnings

    def warnings_json(self) -> list[JSON]:
        """The warnings as JSON objects."""
        return [w.to_json() for w in self.warnings]


class ChatLLM:
    """Builds one provider's request body from a conversation; the dialect supplies the three hooks."""

    def __init__(self, dialect: Dialect, options: RequestOptions | None = None) -> None:
        self.dialect = dialect
        self.options = options or RequestOptions()

    # -- phase 1 ---------------------------------------------------------------------------------------------
    def construct_prompt_context(
        self, conversation: Conversation | Sequence[Message], intermediate_msgs: Sequence[Message] | None = None
    ) -> Expanded:
        """The conversation with every user message's trace expanded around it, then the chain's records.

        Returned as runs of messages (cheap on a 10,000-record trace); ``.to_prompt_context()`` gives the
        seed's PromptContext.
        """
        msgs = conversation.msgs if isinstance(conversation, Conversation) else conversation
        out: list[Message] = []
        segments: list[tuple[int, int, str, str | None]] = []
        # One level: a record's own trace is part of that record, as the seed expands it.
        for run in place_messages(msgs, max_depth=1):
            at = len(out)
            if run.side == "top":  # a segment per conversation message: a turn starts at one
                segments.extend((i, i + 1, "top", None) for i in range(at, at + len(run.nodes)))
            else:
                segments.append((at, at + len(run.nodes), _SEGMENT[run.side], run.parent))
            out.extend(run.nodes)
        if intermediate_msgs:
            segments.append((len(out), len(out) + len(intermediate_msgs), "intermediate", None))
            out.extend(intermediate_msgs)
        return Expanded(out, segments)

    # -- phase 2 ---------------------------------------------------------------------------------------------
    def _configure_api_params(self, ctx: RequestContext) -> JSON:
        """Provider hook: the request parameters other than messages and tools."""
        return self.dialect.configure_api_params(ctx.options, ctx)

    # -- phase 3 ---------------------------------------------------------------------------------------------
    @staticmethod
    def format_to_request_msgs(msgs: Iterable[Message]) -> list[Formatted]:
        """``to_llm_request()`` on every message, in order (one entry per message: the phase view pairs them
        by position, so the hot path builds no pairs). A damaged record raises ContractError."""
        return [m.to_llm_request() for m in msgs]

    # -- phase 4 ---------------------------------------------------------------------------------------------
    @staticmethod
    def to_list(formatted: Iterable[Formatted], ctx: RequestContext) -> list[LLMMessage]:
        """Flatten and merge (see :mod:`core.providers.pairing`)."""
        return to_list(formatted, ctx)

    @staticmethod
    def infer_tools(flat: Sequence[LLMMessage], ctx: RequestContext, later: Sequence[Message] = ()) -> int:
        """With no tools given, the tools the history calls, inferred from its calls into ``ctx.options`` (each a
        warning); how many calls they were inferred from (0 when tools were given or nothing was called).

        ``later`` is the rest of the conversation after an ``upto`` cut: its calls count too, so the request
        for a recorded step offers the tools the recording went on to call. Tools a caller inferred from a
        wider history (``tools_source`` "inferred", a step replay's turn) are kept, and each still a warning.
        """
        options = ctx.options
        # Given tools, even none (a replay's or a page's "no tools"), are what the caller asked to send.
        if options.tools_source == "given" or (options.tools and options.tools_source != "inferred"):
            return 0
        inferred = infer_tools([*flat, *recorded_calls(later)] if later and not options.tools else flat)
        if options.tools:
            seen = {tool.spec.name: tool for tool in inferred}
            inferred = [seen.get(spec.name) or InferredTool(spec, 0, None) for spec in options.tools]
        if not inferred:
            return 0
        for tool in inferred:
            keys = ", ".join(tool.spec.parameters["properties"]) or "none"
            source = f"{tool.calls} recorded call(s)" if tool.calls else "the calls recorded later in the turn"
            ctx.warn(
                tool.first_msg_id,
                "inferred_tool",
                f"no tool definitions: {tool.spec.name!r} inferred from {source} with a permissive schema "
                f"(arguments seen: {keys}); a model may call it differently than with its own",
            )
        ctx.options = replace(ctx.options, tools=tuple(t.spec for t in inferred), tools_source="inferred")
        return sum(t.calls for t in inferred)

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
        # Like the message door: a build allocates a few objects per record and none form cycles, so
        # the cyclic collector would only rescan the growing heap, several times over on a long trace.
        with gc_paused():
            return self._construct(conversation, intermediate_msgs, upto)

    def _construct(
        self,
        conversation: Conversation | Sequence[Message],
        intermediate_msgs: Sequence[Message] | None,
        upto: str | None,
    ) -> RequestResult:
        expanded = self.construct_prompt_context(conversation, intermediate_msgs)
        later: Sequence[Message] = ()
        if upto is not None:
            end = _index_of(expanded.messages, upto)
            later = expanded.messages[end:]
            expanded = expanded.cut(end)
        facts = facts_for(self.dialect, self.options.model)
        options, limited = fit_to_model(self.options, facts)
        ctx = RequestContext(options, media_rules(self.dialect, facts), facts)
        choice = profile_for(self.dialect, options.model or self.dialect.default_model)
        if choice.warning:
            ctx.warn(None, "model", choice.warning)
        for warning in limited:
            ctx.warn(None, "max_tokens", warning, MAX_OUTPUT_RULE)
        params = self._configure_api_params(ctx)
        formatted = self.format_to_request_msgs(expanded.messages)
        flat = self.to_list(formatted, ctx)
        ctx.media_rules = ctx.media_rules.for_request(flat)
        inferred_calls = self.infer_tools(flat, ctx, later)
        fragments = self.reformat_request_msg_to_api(flat, ctx)
        body = self._assemble_api_request(params, fragments, ctx)
        phase_data = {
            "construct_prompt_context": expanded,
            "_configure_api_params": params,
            "format_to_request_msgs": formatted,
            "to_list": flat,
            "reformat_request_msg_to_api": fragments,
        }
        return RequestResult(self.dialect, choice.model, body, ctx, phase_data, choice.profile, inferred_calls)


def _index_of(msgs: list[Message], msg_id: str) -> int:
    for i, msg in enumerate(msgs):
        if msg.msg_id == msg_id:
            return i
    raise UnknownNameError(f"no message with msg_id {msg_id!r} in this conversation")
