"""What every dialect shares: the Dialect hooks and facts, and the helpers the dialects' translations use.

A dialect is translation only: it turns the neutral list that ``to_list`` produced into
its provider's body fragments and assembles them with the request parameters. It reads
files only through :meth:`RequestContext.resolve` (which reads only under the configured
attachments root) and records everything it could not map as a :class:`Degradation`.
The request's own types live in :mod:`core.providers.request`, the arguments' handling in
:mod:`core.providers.arguments`; both are re-exported here, where the dialects import them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

from core.llm.messages import LLMAssistantMessage, LLMMediaPart, LLMMessage, LLMTextPart, LLMTFLMessage, LLMUserPart
from core.providers.arguments import RAW_ARGUMENTS_KEY, arguments_object, check_arguments_text
from core.providers.profiles import ModelProfile, ToolNameRule, profile_for
from core.providers.readback import DiffKind, Normalisation, ReadBody
from core.providers.request import (
    CHOICE_NEEDS_TOOLS_RULE,
    FORCED_TOOL_DEFINED_RULE,
    JSON,
    TOOL_NAME_RULE,
    Degradation,
    GenerationParams,
    NamedToolChoice,
    RequestContext,
    RequestOptions,
    ToolChoice,
    ToolSpec,
    ToolsSource,
)
from core.providers.sampling import SamplingRanges, sampling
from core.providers.wire import Wire

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding

__all__ = [
    "EMPTY_TURN_PLACEHOLDER",
    "FIRST_USER_PLACEHOLDER",
    "JSON",
    "NO_SAMPLING",
    "RAW_ARGUMENTS_KEY",
    "TOOL_NAME_RULE",
    "UNANSWERED_CALL_TEXT",
    "Degradation",
    "Dialect",
    "DiffKind",
    "GenerationParams",
    "MediaMapper",
    "NamedToolChoice",
    "Normalisation",
    "ReadBody",
    "RequestContext",
    "RequestOptions",
    "ToolChoice",
    "ToolSpec",
    "ToolsSource",
    "arguments_object",
    "assistant_text",
    "attachments_header",
    "check_arguments_text",
    "choice_label",
    "console_text",
    "map_parts",
    "sendable_choice",
    "tool_spec",
]

# Text sent in place of something a provider refuses to receive empty (Anthropic "text content blocks must
# be non-empty", Gemini "contents.parts must not be empty"; BerriAI/litellm#19061, langchain-ai/langchainjs#9922).
EMPTY_TURN_PLACEHOLDER = "(empty)"
# The user turn inserted when a history starts with the assistant (Anthropic/Bedrock "first message must
# use the user role", anthropics/anthropic-sdk-typescript#622; Gemini: model-first is unsafe, lobehub/lobehub#1601).
FIRST_USER_PLACEHOLDER = "(earlier conversation omitted)"
# Result text synthesised for a tool call that was never answered (interrupted run; BerriAI/litellm#19061).
UNANSWERED_CALL_TEXT = "the tool call was not answered (the run was interrupted)"
NO_SAMPLING = "this dialect sends no sampling parameters"


class Dialect:
    """One provider: its request format (the three hooks) and every fact about it (the class constants).

    The dialect module is the provider's one home; registries, replay, preflight and the pages read these
    facts from the dialect object and never branch on its name.
    """

    name: ClassVar[str]
    default_model: ClassVar[str]
    description: ClassVar[str] = ""
    other_names: ClassVar[tuple[str, ...]] = ()
    """Names other tools give this provider in their traces (LangChain's ``ls_provider``), lower case."""
    key_var: ClassVar[str]
    """The environment variable holding the API key (read at the moment of sending, never stored)."""
    base_url_var: ClassVar[str]
    """The environment variable that points the SDK elsewhere (a proxy, a stub)."""
    default_base_url: ClassVar[str | None] = None
    """The endpoint when the variable is unset; None: the SDK's own default."""
    wire: ClassVar[Wire]
    """The API its send speaks: its own, or the one it is compatible with."""
    price_id: ClassVar[str | None] = None
    """genai-prices' provider id; None when the price table has none."""
    profiles: ClassVar[tuple[tuple[str, ModelProfile], ...]] = ()
    """Model-name patterns (searched, first match wins) and what those models accept."""
    conservative: ClassVar[ModelProfile]
    """The profile of a model no pattern matches."""
    suggested_models: ClassVar[tuple[str, ...]] = ()
    """The payload page's model suggestions: one model of each profile."""
    model_families: ClassVar[tuple[str, ...]] = ()
    """Model-name prefixes of this provider; the Re-run form refuses others unless sent as typed."""
    model_table_slice: ClassVar[tuple[str, ...]] = ()
    """LiteLLM's provider ids whose models are this provider's, its own first (see :mod:`core.models.table`)."""
    model_table_extra: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    """Hand-verified entries, in the model map's shape with a ``source``, for models no dataset lists."""
    model_table_corrections: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    """Flags (``supports_*``) of a listed model that the provider's own answers contradict, by bare model id, each
    with the ``source_note`` of that answer: they win over the dataset's."""
    inline_image_limit: ClassVar[int | None] = None
    """The most base64 characters one inline image may have; a larger one is sent as text (None: no limit)."""
    max_image_side: ClassVar[int | None] = None
    """The most pixels an inline image may have on a side; a larger one is sent as text (None: no limit)."""
    max_images_per_request: ClassVar[int | None] = None
    """The most images one request may hold; later ones are sent as text (None: no limit)."""
    many_images: ClassVar[tuple[int, int] | None] = None
    """``(count, side)``: a request with more than ``count`` images takes none over ``side`` pixels a side."""
    inline_request_limit: ClassVar[int | None] = None
    """The most base64 characters of inline media one request may carry; media past it are sent as text."""
    sampling_ranges: ClassVar[SamplingRanges | None] = None
    """What the provider takes of temperature, top_p and stop sequences (None: it is sent none of them)."""
    sdk_types: ClassVar[str]
    """The distribution whose request types preflight checks a body against (named in its findings)."""
    rules_module: ClassVar[str] = ""
    """The ``core.preflight`` module whose ``RULES`` are this provider's request-time rules (its catalogue)."""
    reasoning_flag_complete: ClassVar[bool] = True
    """Whether the model table's silence on ``supports_reasoning`` means a model of this provider does not reason."""
    normalisations: ClassVar[tuple[Normalisation, ...]] = ()
    """How a body rebuilt from its read-back differs from the recorded one by design (the round trip's table)."""

    def claims(self, url: str | None, request: JSON, response: JSON | None) -> int:
        """How surely a recorded exchange (its URL when known, its bodies) is this provider's: 0 not at all, 1 by
        its path or its bodies' shape, 2 by the provider's own host (a vendor speaking another's shape)."""
        return 0

    def model_of(self, url: str) -> str | None:
        """The model a recorded URL names, for a provider whose body does not (None: the body names it)."""
        return None

    def read_request(self, body: JSON) -> ReadBody:
        """A request body of this provider read back into neutral messages and request context (the builder's
        inverse, modulo the normalisations its reader module documents); InputError naming the field it refuses."""
        raise NotImplementedError

    def read_response(self, body: JSON) -> ReadBody:
        """An answer of this provider read back into the assistant message(s) it holds, usage in ``extra``."""
        raise NotImplementedError

    def fold_stream(self, events: Sequence[JSON | str]) -> JSON:
        """A streamed answer's events (each data as JSON, or its text when not JSON) folded into the one answer
        :meth:`read_response` takes; RequestFieldError naming the event (``events[i]``) when it cannot be."""
        raise NotImplementedError

    def validate_types(self, body: JSON) -> None:
        """Check ``body`` strictly against the SDK's request types; BodyTypeError on any mistake."""
        raise NotImplementedError

    def check_rules(self, body: JSON, profile: ModelProfile) -> Iterator[Finding]:
        """Every request-time rule of the provider that ``body`` breaks for a model of ``profile``."""
        raise NotImplementedError

    def configure_api_params(self, options: RequestOptions, ctx: RequestContext) -> JSON:
        """Phase 2 hook: the request parameters other than messages and tools (model, limits, reasoning).

        What the model accepts is in its profile (:meth:`profile`); a switch it cannot honour is a warning.
        """
        return {"model": options.model or self.default_model}

    def facts(self, ctx: RequestContext) -> FactsChoice:
        """The model table's facts for the request's model (looked up once per request)."""
        if ctx.facts is None:
            from core.models.table import facts_for

            ctx.facts = facts_for(self, ctx.options.model)
        return ctx.facts

    def max_images(self, choice: FactsChoice) -> int | None:
        """The most images one request to the model ``choice`` found may hold (None: no limit)."""
        return self.max_images_per_request

    def check_model_rules(self, body: JSON, choice: FactsChoice) -> Iterator[Finding]:
        """The rules ``body`` breaks that the model table decides (effort levels, thinking, system prompt)."""
        return iter(())

    def table_profile(self, profile: ModelProfile, choice: FactsChoice) -> ModelProfile:
        """``profile`` with what the model table states about the model's reasoning in its place (``choice`` holds
        the model's own facts, an alias's or its family's). A dialect whose reasoning no dataset describes keeps it."""
        return profile

    def profile(self, options: RequestOptions) -> ModelProfile:
        """The profile of the model ``options`` name (the default model when none): what it accepts."""
        return profile_for(self, options.model or self.default_model).profile

    def reformat(self, messages: Sequence[LLMMessage], ctx: RequestContext) -> JSON:
        """Phase 5 hook: the neutral messages as this provider's body fragments (messages, system, ...)."""
        raise NotImplementedError

    def format_tools(self, tools: Sequence[ToolSpec]) -> list[JSON]:
        """The tool definitions in this provider's shape."""
        raise NotImplementedError

    def tool_schema(self, tool: ToolSpec, ctx: RequestContext) -> ToolSpec:
        """A tool as this provider accepts its schema (a dialect that takes a subset converts, with a warning)."""
        return tool

    def place_tool_choice(self, body: JSON, choice: ToolChoice, ctx: RequestContext) -> None:
        """Put ``choice`` into ``body`` in this provider's form (a named choice holds the name as sent).

        A dialect without the hook sends none, and says so."""
        ctx.warn(None, "tool_choice", f"{self.name} has no tool choice; {choice_label(choice)} not sent")

    def place_sampling(self, body: JSON, ctx: RequestContext) -> None:
        """Put temperature, top_p and the stop sequences into ``body`` within this provider's ranges.

        A dialect without the hook sends none of them, and says so for each that was set."""
        none = SamplingRanges(0.0, NO_SAMPLING)
        sampling(ctx, none, temperature_refused=NO_SAMPLING, top_p_refused=NO_SAMPLING, stop_refused=NO_SAMPLING)

    def assemble(self, params: JSON, fragments: JSON, ctx: RequestContext) -> JSON:
        """Phase 6 hook: the final body from the parameters, the message fragments, the tools and tool choice,
        and the sampling parameters."""
        body = {**params, **fragments}
        tools = ctx.options.tools
        if tools:
            rule = self.profile(ctx.options).tool_names
            sent = [self.tool_schema(replace(tool, name=ctx.tool_name(tool.name, rule, None)), ctx) for tool in tools]
            formatted = self.format_tools(sent)
            if formatted:
                body["tools"] = formatted
        choice = sendable_choice(ctx, self.profile(ctx.options).tool_names)
        if choice is not None:
            self.place_tool_choice(body, choice, ctx)
        self.place_sampling(body, ctx)
        return body


def choice_label(choice: ToolChoice) -> str:
    """A tool choice as a warning names it."""
    return f"naming {choice.name!r}" if isinstance(choice, NamedToolChoice) else repr(choice)


def sendable_choice(ctx: RequestContext, rule: ToolNameRule) -> ToolChoice | None:
    """The request's tool choice as it can be sent: a named one under the tool's sent name; None when there is
    none, or when it cannot be sent (no tools; a name no tool has), which is a warning where it changes anything.

    OpenAI answers 400 to a tool choice without tools ("'tool_choice' is only allowed when 'tools' are
    specified"), Anthropic to a forced tool it was not given (litellm#10307).
    """
    options = ctx.options
    choice = options.tool_choice
    if choice is None:
        return None
    if not options.tools:
        if choice not in ("auto", "none"):  # those two say what a request without tools does anyway
            reason = f"tool choice {choice_label(choice)} not sent: the request has no tools"
            ctx.warn(None, "tool_choice", reason, CHOICE_NEEDS_TOOLS_RULE)
        return None
    if isinstance(choice, NamedToolChoice):
        if all(tool.name != choice.name for tool in options.tools):
            reason = f"tool choice {choice_label(choice)} not sent: no tool has that name"
            ctx.warn(None, "tool_choice", reason, FORCED_TOOL_DEFINED_RULE)
            return None
        return NamedToolChoice(ctx.tool_name(choice.name, rule, None))
    return choice


def tool_spec(tool: ToolSpec, schema_key: str) -> JSON:
    """A tool's name, description (when it has one) and JSON Schema under the key its provider names it."""
    spec: JSON = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec[schema_key] = dict(tool.parameters)
    return spec


MediaMapper = Callable[[LLMMediaPart, "str | None", "RequestContext"], JSON]


def map_parts(
    parts: Sequence[LLMUserPart],
    msg_id: str | None,
    ctx: RequestContext,
    text: Callable[[str], JSON],
    media: MediaMapper,
) -> list[JSON]:
    """A turn's parts in a dialect's shape: empty text dropped (no provider takes it), media through ``media``."""
    out: list[JSON] = []
    for part in parts:
        if type(part) is LLMTextPart:
            if part.text:
                out.append(text(part.text))
        else:
            assert not isinstance(part, LLMTextPart)
            out.append(media(part, msg_id, ctx))
    return out


def assistant_text(msg: LLMAssistantMessage) -> str:
    """The assistant's visible text: its content, then each TFL script as a fenced block (seed: scripts are
    the assistant's product, consumed later by the interpreter, so they stay in the assistant turn)."""
    if not msg.tfl_scripts:
        return msg.content
    scripts = "\n\n".join(f"```tfl\n{script}\n```" for script in msg.tfl_scripts)
    return f"{msg.content}\n\n{scripts}" if msg.content else scripts


def attachments_header(attachment_of: str) -> str:
    """The text that introduces a tool or console result's attachments in their own user turn."""
    if attachment_of == "console":
        return "Attachments of the TFL console output:"
    return f"Attachments of the tool result for call {attachment_of}:"


def console_text(msg: LLMTFLMessage) -> str:
    """Console output of the TFL interpreter as user text (no provider has a console role; seed's table)."""
    text = f"[TFL console]\n{msg.content}"
    if msg.summary:
        text += f"\n[summary] {msg.summary}"
    return text
