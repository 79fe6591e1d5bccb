"""Two dialects' bodies compared: the changes (``core.providers.diffing``), each given the cause it most likely has.

A cause is inferred, in this order, from:

1. the place and the shape of the change: a key or a block ``type`` that only one
   concern uses (``system``/``systemInstruction``, ``tool_calls``/``tool_use``/
   ``functionResponse``, ``thinking``/``reasoning_content``, ``image_url``/``inlineData``...),
   or a turn whose ``role`` is ``system`` or ``tool``;
2. the adapters' own warnings: the msg_id that became the changed node (the
   provenance map) and what either side warned about that message;
3. turn structure: a change inside a turn that holds more than one message on either
   side (adjacent same-role messages merged), or a whole turn added or removed.

What is left is ``format``: the same content in each provider's own shape.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from core.providers import Degradation, RequestResult
from core.providers.diffing import Change, format_change, structural_diff
from web.jsonview import Mark

Cause = Literal["system", "tools", "reasoning", "modality", "roles", "format"]

CAUSES: dict[Cause, tuple[str, str]] = {
    "system": (
        "System placement",
        "Providers put the system prompt in different places: a system message in the list (OpenAI chat, Zhipu, "
        "Doubao), a top-level field (Anthropic system, Gemini systemInstruction, Responses instructions). A system "
        "message after the first turn becomes user text where the provider has no place for it.",
    ),
    "tools": (
        "Tool pairing",
        "Tool calls and their results take each provider's shape (tool_calls + tool messages, tool_use + "
        "tool_result blocks, functionCall + functionResponse parts, function_call items); results are paired with "
        "their calls, orphans dropped and unanswered calls answered with an error result, with a warning each.",
    ),
    "reasoning": (
        "Reasoning dropped",
        "Reasoning survives only where the provider accepts it back: signed thinking blocks for Anthropic, "
        "reasoning_content for the providers that take it; elsewhere it is dropped with a warning.",
    ),
    "modality": (
        "Modality degraded",
        "Media a provider cannot take (audio, video, files, paths outside the attachments root) are sent as text "
        "describing them; the warnings name each message.",
    ),
    "roles": (
        "Roles merged",
        "Providers that need alternating user/assistant turns merge adjacent messages of the same role into one "
        "turn (and insert a placeholder when a history starts with the assistant), so turns shift.",
    ),
    "format": (
        "Format",
        "The same content in each provider's own shape: field names, nesting, parameters such as max_tokens.",
    ),
}

_KEY_CAUSES: dict[str, Cause] = {
    **dict.fromkeys(("system", "systemInstruction", "instructions"), "system"),
    **dict.fromkeys(
        (
            "tool_calls",
            "tool_call_id",
            "tool_use",
            "tool_result",
            "tool_use_id",
            "functionCall",
            "functionResponse",
            "function_call",
            "function_call_output",
            "call_id",
        ),
        "tools",
    ),
    **dict.fromkeys(
        ("reasoning_content", "thinking", "redacted_thinking", "thought", "thoughtSignature", "reasoning", "signature"),
        "reasoning",
    ),
    **dict.fromkeys(
        (
            "image_url",
            "input_image",
            "image",
            "inlineData",
            "fileData",
            "input_audio",
            "audio",
            "document",
            "input_file",
            "file",
            "video_url",
        ),
        "modality",
    ),
}
_ROLE_CAUSES: dict[str, Cause] = {"system": "system", "developer": "system", "tool": "tools", "function": "tools"}
_ELEMENT_CAUSES: dict[str, Cause] = {
    "system": "system",
    "tool_result": "tools",
    "tool_call": "tools",
    "function_result": "tools",
    "tool_call.arguments": "tools",
    "reasoning": "reasoning",
    "history": "roles",
    **dict.fromkeys(("image", "audio", "video", "file", "document"), "modality"),
}
ORDER: tuple[Cause, ...] = ("system", "tools", "reasoning", "modality", "roles", "format")
_TURN_LISTS = frozenset({"messages", "contents", "input"})


def warning_cause(warning: Degradation) -> Cause | None:
    """The cause a warning of the adapters stands for (None for empty-turn placeholders and the like)."""
    return _ELEMENT_CAUSES.get(warning.element)


@dataclass(slots=True)
class Side:
    """One dialect's request as the classifier reads it: where each message went and what was warned."""

    result: RequestResult
    owner_at: dict[str, str] = field(default_factory=dict)
    causes: dict[str, set[Cause]] = field(default_factory=dict)
    merged: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, result: RequestResult) -> Side:
        side = cls(result)
        pairs = sorted((p, m) for m, ptrs in result.provenance.items() for p in ptrs)
        side.owner_at = dict(pairs)
        for warning in result.warnings:
            cause = warning_cause(warning)
            if cause is not None and warning.msg_id is not None:
                side.causes.setdefault(warning.msg_id, set()).add(cause)
        turns: dict[str, set[str]] = {}
        for pointer, owner in pairs:
            turn = _turn_of(pointer)
            if turn is not None:
                turns.setdefault(turn, set()).add(owner)
        side.merged = {turn for turn, owners in turns.items() if len(owners) > 1}
        return side

    def owner(self, pointer: str) -> str | None:
        """The msg_id whose node holds ``pointer`` (the innermost tagged node at or above it)."""
        parts = pointer.split("/")
        for end in range(len(parts), 0, -1):
            owner = self.owner_at.get("/".join(parts[:end]))
            if owner is not None:
                return owner
        return None


def _turn_of(pointer: str) -> str | None:
    """``/messages/3`` for anything at or under it (likewise ``contents`` and ``input``)."""
    parts = pointer.split("/")
    if len(parts) >= 3 and parts[1] in _TURN_LISTS and parts[2].isdigit():
        return "/".join(parts[:3])
    return None


def _shape(value: Any, out: set[str], budget: list[int], depth: int = 0) -> None:
    """Keys, block types and roles inside a value (a few levels, a bounded number of nodes)."""
    if depth > 3 or budget[0] <= 0:
        return
    budget[0] -= 1
    if isinstance(value, dict):
        for key, item in value.items():
            out.add(str(key))
            if key in ("type", "role") and isinstance(item, str):
                out.add(f"{key}={item}")
            _shape(item, out, budget, depth + 1)
    elif isinstance(value, list):
        for item in value[:20]:
            _shape(item, out, budget, depth + 1)


def _tokens(*pointers: str | None) -> Iterable[str]:
    for pointer in pointers:
        if pointer:
            yield from pointer.split("/")[1:]


def classify(change: Change, left: Side, right: Side) -> Cause:
    """The most likely cause of one change (see the module docstring for the order of the evidence)."""
    found: set[str] = set(_tokens(change.pointer, change.pointer_right))
    _shape(change.left, found, [60])
    _shape(change.right, found, [60])
    hinted: set[Cause] = set()
    for token in found:
        if token.startswith("role="):
            cause = _ROLE_CAUSES.get(token[5:])
        else:
            cause = _KEY_CAUSES.get(token.removeprefix("type="))
        if cause is not None:
            hinted.add(cause)
    for cause in ORDER:  # a fixed priority: a set's order would change between runs
        if cause in hinted:
            return cause
    owners = [left.owner(change.pointer) if change.op != "add" else None]
    if change.op != "remove":
        owners.append(right.owner(change.pointer_right or change.pointer))
    for cause in ORDER:
        for owner in owners:
            if owner is not None and (cause in left.causes.get(owner, ()) or cause in right.causes.get(owner, ())):
                return cause
    left_turn, right_turn = _turn_of(change.pointer), _turn_of(change.pointer_right or "")
    if (left_turn in left.merged and change.op != "add") or (right_turn in right.merged and change.op != "remove"):
        return "roles"
    if change.op in ("add", "remove") and (left_turn == change.pointer or right_turn == change.pointer):
        return "roles"
    return "format"


@dataclass(frozen=True, slots=True)
class ClassifiedChange:
    """One change with its number (for the marks in both panes) and its cause."""

    number: int
    change: Change
    cause: Cause

    @property
    def line(self) -> str:
        """The change on one line, as ``traceloupe diff`` prints it."""
        return format_change(self.change, 140)


@dataclass(frozen=True, slots=True)
class Group:
    """The changes of one cause, with its explanation and the warnings that speak of it."""

    cause: Cause
    title: str
    explanation: str
    changes: tuple[ClassifiedChange, ...]
    warnings: tuple[tuple[str, Degradation], ...]


@dataclass(frozen=True, slots=True)
class Comparison:
    """The diff of two requests: every change classified, the groups, and the marks for each pane."""

    changes: tuple[ClassifiedChange, ...]
    groups: tuple[Group, ...]
    left_marks: dict[str, Mark]
    right_marks: dict[str, Mark]


def _turn_list(body: Any) -> str | None:
    """The key of the body's list of turns (``messages``, ``contents`` or ``input``), if it has one."""
    if isinstance(body, dict):
        for key in ("messages", "contents", "input"):
            if isinstance(body.get(key), list):
                return key
    return None


def _turn_owners(side: Side, key: str, count: int) -> list[set[str]]:
    owners: list[set[str]] = [set() for _ in range(count)]
    prefix = f"/{key}/"
    for pointer, owner in side.owner_at.items():
        if pointer.startswith(prefix):
            index = pointer[len(prefix) :].split("/", 1)[0]
            if index.isdigit() and int(index) < count:
                owners[int(index)].add(owner)
    return owners


def aligned_diff(left: RequestResult, right: RequestResult, lside: Side, rside: Side) -> list[Change]:
    """The changes between two bodies, with turns aligned by the messages they came from.

    Two dialects rarely put a message at the same index (a system message in the list or not, tool results
    merged into one turn or not), so comparing turn ``i`` with turn ``i`` pairs unrelated messages. Turns are
    paired instead when they hold the same message (the provenance map), in order; a turn without a partner
    is an addition or a removal; everything else in the body is compared key by key.
    """
    lkey, rkey = _turn_list(left.body), _turn_list(right.body)
    if lkey is None or rkey is None:
        return structural_diff(left.body, right.body)
    lturns, rturns = left.body[lkey], right.body[rkey]
    rest_left = {k: v for k, v in left.body.items() if k != lkey}
    rest_right = {k: v for k, v in right.body.items() if k != rkey}
    changes = structural_diff(rest_left, rest_right)
    lown, rown = _turn_owners(lside, lkey, len(lturns)), _turn_owners(rside, rkey, len(rturns))
    j = 0  # the first right turn not yet paired or added
    for i, turn in enumerate(lturns):
        match = next((k for k in range(j, len(rturns)) if lown[i] & rown[k]), None) if lown[i] else None
        if match is None and not lown[i] and j < len(rturns) and not rown[j]:
            match = j  # two untagged turns (placeholders) at the same place
        if match is None:
            changes.append(Change("remove", f"/{lkey}/{i}", turn))
            continue
        changes.extend(Change("add", f"/{rkey}/{k}", right=rturns[k]) for k in range(j, match))
        changes.extend(structural_diff(turn, rturns[match], f"/{lkey}/{i}", f"/{rkey}/{match}"))
        j = match + 1
    changes.extend(Change("add", f"/{rkey}/{k}", right=rturns[k]) for k in range(j, len(rturns)))
    return changes


def compare(
    left: RequestResult, right: RequestResult, left_cards: dict[str, str], right_cards: dict[str, str]
) -> Comparison:
    """Diff two requests' bodies; ``*_cards`` map each side's pointers to card anchors (kept on the marks)."""
    lside, rside = Side.of(left), Side.of(right)
    changes = tuple(
        ClassifiedChange(i, change, classify(change, lside, rside))
        for i, change in enumerate(aligned_diff(left, right, lside, rside))
    )
    left_marks: dict[str, Mark] = {p: Mark(card=a) for p, a in left_cards.items()}
    right_marks: dict[str, Mark] = {p: Mark(card=a) for p, a in right_cards.items()}
    for item in changes:
        change = item.change
        if change.op != "add":
            card = left_cards.get(change.pointer)
            left_marks[change.pointer] = Mark(card, change.op, f"L{item.number}", item.number)
        if change.op != "remove":
            pointer = change.pointer_right or change.pointer
            card = right_cards.get(pointer)
            right_marks[pointer] = Mark(card, change.op, f"R{item.number}", item.number)
    groups: list[Group] = []
    for cause in ORDER:
        members = tuple(c for c in changes if c.cause == cause)
        # The same provider on both sides warns the same things once, not once a side.
        sides = (
            ((left.dialect, left), (right.dialect, right)) if left.dialect != right.dialect else ((left.dialect, left),)
        )
        warned = tuple((side, w) for side, result in sides for w in result.warnings if warning_cause(w) == cause)
        if members or warned:
            title, explanation = CAUSES[cause]
            groups.append(Group(cause, title, explanation, members, warned))
    return Comparison(changes, tuple(groups), left_marks, right_marks)
