"""What every dialect shares: request options, degradation warnings, the per-request context, the Dialect hooks.

A dialect is translation only: it turns the neutral list that ``to_list`` produced into
its provider's body fragments and assembles them with the request parameters. It reads
files only through :meth:`RequestContext.resolve` (which reads only under the configured
attachments root) and records everything it could not map as a :class:`Degradation`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

import orjson

from core.jsonio import dumps, loads
from core.llm.messages import (
    LLMAssistantMessage,
    LLMMediaPart,
    LLMMessage,
    LLMTextPart,
    LLMTFLMessage,
    LLMToolCall,
    LLMUserPart,
    parse_arguments,
)
from core.providers.media import MediaReader, ResolvedMedia, fallback_text
from core.providers.media_rules import NO_RULES, MediaRules
from core.providers.profiles import ModelProfile, ToolNameRule, profile_for
from core.providers.sampling import sampling
from core.providers.wire import Wire

if TYPE_CHECKING:
    from core.models.table import FactsChoice
    from core.preflight.findings import Finding

JSON = dict[str, Any]

MiB = 1024 * 1024

# Text sent in place of something a provider refuses to receive empty (Anthropic "text content blocks must
# be non-empty", Gemini "contents.parts must not be empty"; BerriAI/litellm#19061, langchain-ai/langchainjs#9922).
EMPTY_TURN_PLACEHOLDER = "(empty)"
# The user turn inserted when a history starts with the assistant (Anthropic/Bedrock "first message must
# use the user role", anthropics/anthropic-sdk-typescript#622; Gemini: model-first is unsafe, lobehub/lobehub#1601).
FIRST_USER_PLACEHOLDER = "(earlier conversation omitted)"
# Result text synthesised for a tool call that was never answered (interrupted run; BerriAI/litellm#19061).
UNANSWERED_CALL_TEXT = "the tool call was not answered (the run was interrupted)"
# Key that carries tool-call arguments that are not a JSON object to dialects that need an object.
RAW_ARGUMENTS_KEY = "_raw_arguments"
NO_SAMPLING = "this dialect sends no sampling parameters"
TOOL_NAME_RULE = "tool-name-pattern"  # the preflight rule of core/preflight/tools.py a rewritten name answers


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: name, description and a JSON Schema for its arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@dataclass(frozen=True, slots=True)
class NamedToolChoice:
    """A tool choice that forces one tool, by its name."""

    name: str


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice
"""Whether the model may, must not, or must call a tool, or which one it must call (neutral form)."""

ToolsSource = Literal["stored", "given", "inferred", "none"]
"""Where a request's tool definitions came from: the stored request context, a ``--tools`` file or form,
inferred from the recorded calls, or nowhere (the history has no tool calls and none were given)."""


@dataclass(frozen=True, slots=True)
class GenerationParams:
    """The sampling and length parameters a request carried; None leaves the provider's default."""

    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    thinking: bool | None = None
    effort: str | None = None
    """A reasoning effort of :data:`core.models.reasoning.EFFORTS`; it wins over ``thinking`` ("none" is off)."""


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """Everything a request needs besides the messages.

    ``attachments_root`` is the only directory Path attachments are read from; None means
    no file is ever read and every Path attachment degrades to text. ``thinking`` is
    tri-state: None leaves the provider's default, True/False switch reasoning on or off
    where the dialect has such a switch. ``effort`` (``--effort``) asks for a reasoning level and wins over
    ``thinking``: each dialect maps it to its own switch (:meth:`thinking_asked` says on or off).
    """

    model: str | None = None
    max_tokens: int | None = None
    thinking: bool | None = None
    tools: tuple[ToolSpec, ...] = ()
    attachments_root: Path | None = None
    max_attachment_bytes: int = 20 * MiB
    tool_choice: ToolChoice | None = None
    tools_source: ToolsSource = "none"
    temperature: float | None = None
    top_p: float | None = None
    stop: tuple[str, ...] = ()
    effort: str | None = None

    @property
    def thinking_asked(self) -> bool | None:
        """Reasoning switched on (True), off (False) or left to the provider (None), by ``effort`` or ``thinking``."""
        return self.thinking if self.effort is None else self.effort != "none"


class Degradation(NamedTuple):
    """Something of message ``msg_id`` that the provider could not take as it was, and what was sent instead.

    ``rule`` names the preflight rule whose fix this was (the catalogue's id), when the change made a body the
    provider would refuse into one it takes.
    """

    msg_id: str | None
    element: str
    reason: str
    rule: str | None = None

    def to_json(self) -> JSON:
        """This warning as a JSON object (the dashboard shows it beside the card); ``rule`` only when it has one."""
        out: JSON = {"msg_id": self.msg_id, "element": self.element, "reason": self.reason}
        if self.rule is not None:
            out["rule"] = self.rule
        return out

    def __str__(self) -> str:
        return f"{self.msg_id or '-'}: {self.element}: {self.reason}"


class RequestContext:
    """Per-request state shared by the phases: options, warnings, provenance tags and the media reader."""

    __slots__ = (
        "_indexed",
        "_tagged_ids",
        "_tagged_nodes",
        "_tags",
        "_tool_names",
        "facts",
        "media",
        "media_rules",
        "options",
        "warnings",
    )

    def __init__(
        self, options: RequestOptions, media_rules: MediaRules = NO_RULES, facts: FactsChoice | None = None
    ) -> None:
        self.options = options
        self.media_rules = media_rules
        self.facts = facts  # the model table's facts for options.model (None: looked up on first use)
        # Plain (msg_id, element, reason, rule) tuples: there may be one per record, so they become Degradation
        # objects only when read (RequestResult.warnings).
        self.warnings: list[tuple[str | None, str, str, str | None]] = []
        # Tagged nodes and their msg_ids, in tagging order: two appends per node on the hot path, nothing
        # allocated. The id(node) -> msg_id map is built from them only when a tag is read (provenance, a
        # dialect asking whose a turn is). Holding the nodes keeps every id alive while the request lives: a
        # node dropped from the body after tagging cannot pass its id on to a new node.
        self._tagged_nodes: list[object] = []
        self._tagged_ids: list[str | None] = []
        self._tags: dict[int, str | None] = {}
        self._indexed = 0
        self._tool_names: dict[str, str] = {}  # tool name -> the name sent, for this request's provider
        self.media = MediaReader(options.attachments_root, options.max_attachment_bytes)

    def warn(self, msg_id: str | None, element: str, reason: str, rule: str | None = None) -> None:
        """Record that part of ``msg_id`` was degraded, moved or dropped (``rule``: the preflight rule it fixes)."""
        self.warnings.append((msg_id, element, reason, rule))

    def tool_name(self, name: str, rule: ToolNameRule, msg_id: str | None) -> str:
        """The name to send for tool ``name``: itself when ``rule`` accepts it, else one rewrite, the same in the
        tool definition, every call and every result of the request, noted once."""
        sent = self._tool_names.get(name)
        if sent is None:
            sent = self._tool_names[name] = rule.rewrite(name)
            if sent != name:
                self.warn(
                    msg_id,
                    "tool_name",
                    f"tool name {name!r} breaks the rule of {rule.evidence}; sent as {sent!r}",
                    TOOL_NAME_RULE,
                )
        return sent

    def tag(self, node: JSON, msg_id: str | None) -> JSON:
        """Mark a body node (a message, a block, a part) as coming from ``msg_id``; returns the node."""
        self._tagged_nodes.append(node)
        self._tagged_ids.append(msg_id)
        return node

    def tag_of(self, node: object) -> str | bool | None:
        """The msg_id a node was tagged with (the last tag wins), or False when it was not tagged."""
        nodes = self._tagged_nodes
        start = self._indexed
        if start < len(nodes):
            self._tags.update(zip(map(id, nodes[start:]), self._tagged_ids[start:], strict=True))
            self._indexed = len(nodes)
        return self._tags.get(id(node), False)

    def resolve(self, part: LLMMediaPart, msg_id: str | None) -> ResolvedMedia | str:
        """The bytes or URL of a media part; when it cannot be sent, a warning and the text that replaces it."""
        resolved = self.media.resolve(part)
        if isinstance(resolved, str):
            return self.degrade(part, msg_id, resolved)
        refusal = self.media_rules.refusal(resolved)
        if refusal is not None:
            return self.degrade(part, msg_id, refusal)
        for note in resolved.notes:
            self.warn(msg_id, part.kind, note)
        return resolved

    def file_text(self, part: LLMMediaPart, media: ResolvedMedia, msg_id: str | None) -> str | None:
        """A text file (``text/*``, inline, UTF-8) as text, for dialects without a document part; else None.

        Extracting the text is the degradation docs/providers.md suggests for Chat-style APIs; it keeps the content.
        """
        if media.data is None or not (media.media_type or "").startswith("text/"):
            return None
        try:
            text = media.raw_bytes().decode("utf-8")
        except (UnicodeDecodeError, ValueError):
            return None
        self.warn(msg_id, part.kind, f"no document part for {media.media_type}; its text was sent inline")
        return f"[file: {part.filename or media.filename or 'attachment'}]\n{text}"

    def degrade(self, part: LLMMediaPart, msg_id: str | None, reason: str) -> str:
        """Record a degraded media part and return the text that replaces it."""
        self.warn(msg_id, part.kind, f"{reason}; sent as text")
        return fallback_text(part)


class Dialect:
    """One provider: its request format (the three hooks) and every fact about it (the class constants).

    The dialect module is the provider's one home; registries, replay, preflight and the pages read these
    facts from the dialect object and never branch on its name.
    """

    name: ClassVar[str]
    default_model: ClassVar[str]
    description: ClassVar[str] = ""
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
    inline_image_limit: ClassVar[int | None] = None
    """The most base64 characters one inline image may have; a larger one is sent as text (None: no limit)."""
    max_image_side: ClassVar[int | None] = None
    """The most pixels an inline image may have on a side; a larger one is sent as text (None: no limit)."""
    sdk_types: ClassVar[str]
    rules_module: ClassVar[str] = ""
    """The ``core.preflight`` module whose ``RULES`` are this provider's request-time rules (its catalogue)."""
    reasoning_flag_complete: ClassVar[bool] = True
    """Whether the model table's silence on ``supports_reasoning`` means a model of this provider does not reason."""
    """The distribution whose request types preflight checks a body against (named in its findings)."""

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

    def check_model_rules(self, body: JSON, choice: FactsChoice) -> Iterator[Finding]:
        """The rules ``body`` breaks that the model table decides (effort levels, thinking, system prompt)."""
        return iter(())

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
        sampling(ctx, temperature_max=0.0, temperature_refused=NO_SAMPLING, top_p_refused=NO_SAMPLING,
                 stop_refused=NO_SAMPLING)  # fmt: skip

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
            ctx.warn(None, "tool_choice", f"tool choice {choice_label(choice)} not sent: the request has no tools")
        return None
    if isinstance(choice, NamedToolChoice):
        if all(tool.name != choice.name for tool in options.tools):
            ctx.warn(None, "tool_choice", f"tool choice {choice_label(choice)} not sent: no tool has that name")
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


def arguments_object(call: LLMToolCall, msg_id: str | None, ctx: RequestContext) -> dict[str, Any]:
    """Tool-call arguments as an object for dialects that want one (Anthropic ``input``, Gemini ``args``).

    Text that is not a JSON object is kept, not lost: it travels under ``_raw_arguments`` with a warning.
    """
    text = call.arguments
    # The exact reader (integers past 64 bits stay ints, not orjson's floats); what it refuses (NaN, empty
    # text) is decided by the stdlib parser the core uses, so the answer is the same as ``parse_arguments``.
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        parsed = _finite_arguments(call, msg_id, ctx)
        if parsed is None:
            parsed = parse_arguments(text)
    else:
        # orjson alone is exact unless it made a float of a long integer, and a flat object without floats
        # shows it did not: the common arguments skip the exact reader's digit scan (a third of the parse).
        # The check is inline, not a helper: this runs once per tool call of every request.
        if type(parsed) is dict:
            for item in parsed.values():
                kind = type(item)
                if kind is float or kind is dict or kind is list:
                    parsed = loads(text)
                    break
        else:
            parsed = loads(text)
    if type(parsed) is dict:
        return parsed
    ctx.warn(
        msg_id,
        "tool_call.arguments",
        f"call {call.id}: arguments are not a JSON object; sent under {RAW_ARGUMENTS_KEY!r}",
    )
    return {RAW_ARGUMENTS_KEY: call.arguments}


NON_FINITE_LITERALS = frozenset({"NaN", "Infinity", "-Infinity"})
"""What Python's and JavaScript's encoders write for non-finite numbers; not JSON (RFC 8259 section 6)."""


def _finite_arguments(call: LLMToolCall, msg_id: str | None, ctx: RequestContext) -> dict[str, Any] | None:
    """Arguments holding NaN or Infinity as an object with each such number as the string it was written as
    (a body must be JSON, and a provider answers 400 to one that is not); None when there is none."""
    seen: list[str] = []

    def constant(literal: str) -> str:
        seen.append(literal)
        return literal

    try:
        parsed = json.loads(call.arguments, parse_constant=constant)
    except (ValueError, RecursionError):
        return None
    if not seen or type(parsed) is not dict:
        return None
    ctx.warn(
        msg_id,
        "tool_call.arguments",
        f"call {call.id}: {', '.join(sorted(set(seen)))} in the arguments is not JSON; sent as a string",
    )
    return parsed


def check_arguments_text(call: LLMToolCall, msg_id: str | None, ctx: RequestContext) -> str:
    """Tool-call arguments as text for dialects that want a string: the model's text, verbatim.

    Invalid JSON is sent as it was produced (re-serialising would change what the model said) and noted.
    """
    text = call.arguments
    try:  # the hot path, as in arguments_object
        if type(orjson.loads(text)) is dict:
            return text
    except orjson.JSONDecodeError:
        finite = _finite_arguments(call, msg_id, ctx)
        if finite is not None:
            return dumps(finite).decode()
    if parse_arguments(text) is None:
        ctx.warn(msg_id, "tool_call.arguments", f"call {call.id}: arguments are not a JSON object; sent verbatim")
    elif not text.strip():
        return "{}"
    return text
