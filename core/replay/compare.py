"""Compare one replayed assistant step with the recorded one: same calls, same final answer, or where it left.

Calls match when their tool names are equal and their arguments are equal as JSON values
(``{"a": 1, "b": 2}`` equals ``{"b": 2, "a": 1}``; ``1`` equals ``1.0``; ``true`` does not equal ``1``).
Parallel calls match in any order. When they do not match, the reason is decided on the tool
names first, then on the arguments:

=============================  =====================================================================
``answered_instead_of_calling``  the reply has no tool call, the recorded step had some
``called_instead_of_answering``  the reply calls tools where the recorded step was the final answer
``different_arguments``          the same tool names (as a multiset), some arguments differ (with a diff)
``extra_calls``                  every recorded call's name is there, and more calls besides
``missing_calls``                every replayed call's name is recorded, and recorded calls are missing
``different_tool``               anything else: a tool the recorded step did not call
``different_answer``             both are final answers, and the chosen comparison (``core.replay.answers``)
                                 finds them different (with the word diff and the score)
=============================  =====================================================================
"""

from __future__ import annotations

import difflib
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

from core.messages.objects import ToolCall

if TYPE_CHECKING:
    from core.messages.union import Message
    from core.replay.answers import AnswerJudge

Verdict = Literal["same", "same_final", "diverged"]
Reason = Literal[
    "different_tool",
    "different_arguments",
    "extra_calls",
    "missing_calls",
    "answered_instead_of_calling",
    "called_instead_of_answering",
    "different_answer",
]
REASONS: tuple[Reason, ...] = get_args(Reason)


@dataclass(frozen=True, slots=True)
class Comparison:
    """The verdict for one step, why it diverged, the evidence, and recorded call id -> replayed call id."""

    verdict: Verdict
    reason: Reason | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    call_ids: dict[str, str] = field(default_factory=dict)


def compare_step(
    replayed_calls: Sequence[ToolCall],
    replayed_text: str,
    recorded_calls: Sequence[ToolCall],
    recorded_text: str,
    *,
    answers: AnswerJudge | None = None,
) -> Comparison:
    """The verdict of one replayed step against the recorded step at the same position.

    Two final answers are judged by ``answers`` (the comparison the run chose; default ``similar`` at its
    default threshold); it may raise ``core.replay.answers.JudgeFailed``.
    """
    if not replayed_calls and not recorded_calls:
        if answers is None:
            from core.replay.answers import DEFAULT_COMPARISON, plain_judge  # it builds on this module

            answers = plain_judge(DEFAULT_COMPARISON)
        verdict = answers(recorded_text, replayed_text)
        if verdict.same:
            return Comparison("same_final", detail=verdict.detail)
        return Comparison("diverged", "different_answer", verdict.detail)
    if not replayed_calls:
        return Comparison("diverged", "answered_instead_of_calling", {"recorded_calls": _calls_json(recorded_calls)})
    if not recorded_calls:
        return Comparison("diverged", "called_instead_of_answering", {"replayed_calls": _calls_json(replayed_calls)})
    pairs, left_replayed, left_recorded = _match(replayed_calls, recorded_calls)
    if not left_replayed and not left_recorded:
        return Comparison("same", call_ids={rec.id: rep.id for rep, rec in pairs})
    return _divergence(replayed_calls, recorded_calls, left_replayed, left_recorded)


def compare_messages(replayed: Message, recorded: Message, *, answers: AnswerJudge | None = None) -> Comparison:
    """:func:`compare_step` of two stored messages: their tool calls, and their text when it is a string."""
    return compare_step(
        replayed.tool_calls or [], _text(replayed), recorded.tool_calls or [], _text(recorded), answers=answers
    )


def _text(message: Message) -> str:
    return message.content if isinstance(message.content, str) else ""


def arguments_value(call: ToolCall) -> Any:
    """A call's arguments as a JSON value; the raw text when it is not JSON (compared as a string then)."""
    try:
        return json.loads(call.arguments) if call.arguments.strip() else {}
    except ValueError:
        return call.arguments


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: key order ignored, ``1 == 1.0``, but a boolean is never a number."""
    return bool(_canonical(a) == _canonical(b))


def json_diff(recorded: Any, replayed: Any, path: str = "") -> list[dict[str, Any]]:
    """Where two JSON values differ, as ``{"path" (RFC 6901), "op", "recorded", "replayed"}`` entries."""
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        out: list[dict[str, Any]] = []
        for key in sorted(set(recorded) | set(replayed)):
            sub = f"{path}/{str(key).replace('~', '~0').replace('/', '~1')}"
            if key not in replayed:
                out.append({"path": sub, "op": "removed", "recorded": recorded[key], "replayed": None})
            elif key not in recorded:
                out.append({"path": sub, "op": "added", "recorded": None, "replayed": replayed[key]})
            else:
                out += json_diff(recorded[key], replayed[key], sub)
        return out
    if isinstance(recorded, list) and isinstance(replayed, list) and len(recorded) == len(replayed):
        return [
            d for i, (a, b) in enumerate(zip(recorded, replayed, strict=True)) for d in json_diff(a, b, f"{path}/{i}")
        ]
    if json_equal(recorded, replayed):
        return []
    return [{"path": path, "op": "changed", "recorded": recorded, "replayed": replayed}]


def text_diff(recorded: str, replayed: str) -> dict[str, Any]:
    """A word diff of two answers and their similarity (difflib's ratio over words, 0 to 1)."""
    a, b = recorded.split(), replayed.split()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    ops = [
        {"op": tag, "recorded": " ".join(a[i1:i2]), "replayed": " ".join(b[j1:j2])}
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
    ]
    return {"similarity": round(matcher.ratio(), 4), "word_diff": ops}


def _canonical(value: Any) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if isinstance(value, int | float):
        return ("number", float(value))
    if isinstance(value, dict):
        return ("object", tuple(sorted((str(k), _canonical(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("array", tuple(_canonical(v) for v in value))
    return ("other", repr(value))


def _match(
    replayed: Sequence[ToolCall], recorded: Sequence[ToolCall]
) -> tuple[list[tuple[ToolCall, ToolCall]], list[ToolCall], list[ToolCall]]:
    """Pair equal calls in any order; returns the pairs and what is left on each side (in order)."""
    left = list(recorded)
    pairs: list[tuple[ToolCall, ToolCall]] = []
    unmatched: list[ToolCall] = []
    for call in replayed:
        value = arguments_value(call)
        found = next(
            (r for r in left if r.name == call.name and json_equal(arguments_value(r), value)),
            None,
        )
        if found is None:
            unmatched.append(call)
        else:
            left.remove(found)
            pairs.append((call, found))
    return pairs, unmatched, left


def _divergence(
    replayed: Sequence[ToolCall],
    recorded: Sequence[ToolCall],
    left_replayed: list[ToolCall],
    left_recorded: list[ToolCall],
) -> Comparison:
    names_rep, names_rec = Counter(c.name for c in replayed), Counter(c.name for c in recorded)
    detail: dict[str, Any] = {
        "replayed_calls": _calls_json(left_replayed),
        "recorded_calls": _calls_json(left_recorded),
    }
    if names_rep == names_rec:
        diffs = []
        for rep in left_replayed:
            rec = next(r for r in left_recorded if r.name == rep.name)
            left_recorded = [r for r in left_recorded if r is not rec]
            diffs.append({"name": rep.name, "diff": json_diff(arguments_value(rec), arguments_value(rep))})
        return Comparison("diverged", "different_arguments", {**detail, "arguments_diff": diffs})
    if not names_rec - names_rep:
        return Comparison("diverged", "extra_calls", detail)
    if not names_rep - names_rec:
        return Comparison("diverged", "missing_calls", detail)
    return Comparison("diverged", "different_tool", detail)


def _calls_json(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"name": c.name, "arguments": arguments_value(c)} for c in calls]
