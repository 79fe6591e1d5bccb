"""What one request carries besides its messages: the tools, the options, and the per-request context.

The context is where the phases record what a provider could not take (:class:`Degradation`) and the only
way a dialect reads a file (:meth:`RequestContext.resolve`, under the configured attachments root).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from core.llm.messages import LLMMediaPart
from core.providers.media import MediaReader, ResolvedMedia, fallback_text
from core.providers.media_rules import NO_RULES, MediaRules, MediaTally
from core.providers.profiles import ToolNameRule

if TYPE_CHECKING:
    from core.models.table import FactsChoice

JSON = dict[str, Any]

MiB = 1024 * 1024

TOOL_NAME_RULE = "tool-name-pattern"  # the preflight rule of core/preflight/tools.py a rewritten name answers
CHOICE_NEEDS_TOOLS_RULE = "tool-choice-needs-tools"  # the rules of core/preflight/tools.py a dropped choice answers
FORCED_TOOL_DEFINED_RULE = "forced-tool-defined"


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

    def by_name(self) -> dict[str, Any]:
        """Every parameter under its name, which is also the name of its ``RequestOptions`` field."""
        return {name: getattr(self, name) for name in PARAM_NAMES}

    def over(self, stored: GenerationParams) -> GenerationParams:
        """``stored`` with each parameter set here in its place (None and an empty stop list are not set)."""
        return replace(stored, **{k: v for k, v in self.by_name().items() if v is not None and v != ()})


PARAM_NAMES = ("max_tokens", "temperature", "top_p", "stop", "thinking", "effort")
"""The fields of :class:`GenerationParams`, in the order a stored request context lists them."""


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
    def params(self) -> GenerationParams:
        """The generation parameters these options ask for."""
        return GenerationParams(**{name: getattr(self, name) for name in PARAM_NAMES})

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
        "sent_media",
        "warnings",
    )

    def __init__(
        self, options: RequestOptions, media_rules: MediaRules = NO_RULES, facts: FactsChoice | None = None
    ) -> None:
        self.options = options
        self.media_rules = media_rules
        self.sent_media = MediaTally()  # the images and inline bytes resolved so far, for the per-request limits
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
        refusal = self.media_rules.refusal(resolved, self.sent_media)
        if refusal is not None:
            rule, reason = refusal
            return self.degrade(part, msg_id, reason, rule)
        self.sent_media.add(resolved)
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

    def degrade(self, part: LLMMediaPart, msg_id: str | None, reason: str, rule: str | None = None) -> str:
        """Record a degraded media part (``rule``: the preflight rule the fallback answers) and return the text
        that replaces it."""
        self.warn(msg_id, part.kind, f"{reason}; sent as text", rule)
        return fallback_text(part)
