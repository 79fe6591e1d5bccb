"""Command-line flags read through ``core.fields`` rules: a value out of range is argparse's one line and exit 2.

Without a range an integer flag reached the database as it was typed (``--max-steps 2147483648`` is past
PostgreSQL's INTEGER) and came back as "internal error".
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from core.errors import MisuseError
from core.fields import MAX_INT32, FloatRule, IntRule, TextRule
from core.models.reasoning import EFFORTS

if TYPE_CHECKING:
    from core.providers.base import GenerationParams, ToolChoice, ToolSpec

_N = TypeVar("_N", int, float)


def ranged_int(rule: IntRule) -> Callable[[str], int]:
    """An argparse ``type`` reading a whole number within ``rule``."""
    return _ranged(rule.parse, f"{rule.name} needs a whole number", "whole number")


def ranged_float(rule: FloatRule) -> Callable[[str], float]:
    """An argparse ``type`` reading a finite number within ``rule``."""
    return _ranged(rule.parse, f"{rule.name} needs a number", "number")


def _ranged(read: Callable[[str], _N | None], blank: str, noun: str) -> Callable[[str], _N]:
    def parse(text: str) -> _N:
        try:
            value = read(text)
        except MisuseError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if value is None:
            raise argparse.ArgumentTypeError(blank)
        return value

    parse.__name__ = noun  # argparse names the type in its message
    return parse


def checked_text(rule: TextRule) -> Callable[[str], str]:
    """An argparse ``type`` for a name or id within ``rule`` (length, no control character)."""

    def parse(text: str) -> str:
        try:
            return rule.check(text)
        except MisuseError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = "text"
    return parse


def provider_limit(text: str) -> str:
    """An argparse ``type`` for ``--provider-limit P=N[,Q=M]``: each N within ``core.jobs.queue.MAX_LIMIT``."""
    from core.jobs.queue import parse_limits  # the queue's modules load only for the commands that need them

    try:
        parse_limits(text)
    except MisuseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


LIMIT = ranged_int(IntRule("--limit", 1, MAX_INT32))
PORT = ranged_int(IntRule("--port", 0, 65_535))
SECONDS = ranged_float(FloatRule("seconds", 0.001, 86_400.0))
MAX_STEPS = ranged_int(IntRule("--max-steps", 1, 10_000))
MAX_COST = ranged_float(FloatRule("--max-cost (US dollars)", 0.0, 1_000_000.0))
MAX_TOKENS = ranged_int(IntRule("--max-tokens", 1, MAX_INT32))
# The stored request context's ranges (core/request_context/stored.py): every provider's range lies within them,
# and the builder clamps a value inside them to the model's own.
TEMPERATURE = ranged_float(FloatRule("--temperature", 0.0, 2.0))
TOP_P = ranged_float(FloatRule("--top-p", 0.0, 1.0))
WIDTH = ranged_int(IntRule("--width", 0, 1_000_000))
MIB = ranged_int(IntRule("MiB", 1, 1_048_576))
CONCURRENCY = ranged_int(IntRule("--concurrency", 1, 64))
WORKERS = ranged_int(IntRule("--workers", 1, 64))
ATTEMPTS = ranged_int(IntRule("--max-attempts", 1, 100))
WAIT = ranged_float(FloatRule("seconds", 0.0, 86_400.0))
COUNT = ranged_int(IntRule("count", 1, 100_000))
MODEL = checked_text(TextRule("--model", 200))
PROVIDER = checked_text(TextRule("--provider", 40))
ID = checked_text(TextRule("an id", 512))


def tools_file(path: str) -> tuple[ToolSpec, ...]:
    """An argparse ``type`` for ``--tools FILE``: a JSON tool list in any provider's shape, read neutral."""
    from core.request_context import tools_of_json
    from core.request_context.shapes import MAX_TOOLS_FILE_BYTES

    try:
        with Path(path).open("rb") as file:
            data = file.read(MAX_TOOLS_FILE_BYTES + 1)  # one byte past: an oversized file is refused unparsed
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return tools_of_json(data, path)
    except MisuseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def tool_choice(text: str) -> ToolChoice:
    """An argparse ``type`` for ``--tool-choice auto|none|required|NAME`` (NAME forces that tool)."""
    from core.providers.base import NamedToolChoice

    if text in TOOL_CHOICE_WORDS:
        return text  # type: ignore[return-value]  # one of the Literal's words, checked just above
    try:
        return NamedToolChoice(TOOL_NAME.check(text))
    except MisuseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_tool_arguments(parser: argparse.ArgumentParser) -> None:
    """``--tools FILE`` and ``--tool-choice``: the request's tools and tool choice, set or overriding the stored."""
    parser.add_argument(
        "--tools",
        type=tools_file,
        metavar="FILE",
        help="JSON tool list (neutral, OpenAI, Responses, Anthropic or Gemini shape) sent instead of the stored tools",
    )
    parser.add_argument(
        "--tool-choice",
        type=tool_choice,
        metavar="CHOICE",
        help="auto, none, required, or a tool's name to force it (instead of the stored tool choice)",
    )


TOOL_CHOICE_WORDS = ("auto", "none", "required")
TOOL_NAME = TextRule("--tool-choice", 200)


STOP_RULE = TextRule("--stop", 1000, multiline=True)  # a stop sequence is often a line break
MAX_STOP_SEQUENCES = 16  # the stored context's limit (core/request_context/stored.py)


def stop_sequence(text: str) -> str:
    """An argparse ``type`` for one ``--stop SEQ``: non-empty text, line breaks allowed."""
    if not text:
        raise argparse.ArgumentTypeError("--stop needs a non-empty sequence")
    try:
        return STOP_RULE.check(text)
    except MisuseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


stop_sequence.__name__ = "stop sequence"


class _AppendStop(argparse.Action):
    """``--stop`` repeated, refused past ``MAX_STOP_SEQUENCES`` as argparse's one line."""

    def __call__(
        self, parser: argparse.ArgumentParser, ns: argparse.Namespace, value: object, option: object = None
    ) -> None:
        given: list[str] = list(getattr(ns, self.dest) or ())
        if len(given) >= MAX_STOP_SEQUENCES:
            raise argparse.ArgumentError(self, f"at most {MAX_STOP_SEQUENCES} stop sequences")
        setattr(ns, self.dest, [*given, value])


def add_generation_arguments(parser: argparse.ArgumentParser) -> None:
    """``--max-tokens``, ``--temperature``, ``--top-p``, ``--stop`` and ``--thinking``: set or override the stored."""
    parser.add_argument("--max-tokens", type=MAX_TOKENS, metavar="N", help="output token limit")
    parser.add_argument("--temperature", type=TEMPERATURE, metavar="X", help="sampling temperature, 0 to 2")
    parser.add_argument("--top-p", type=TOP_P, metavar="X", help="nucleus sampling mass, 0 to 1")
    parser.add_argument(
        "--stop",
        type=stop_sequence,
        action=_AppendStop,
        metavar="SEQ",
        help=f"a stop sequence (repeat for more, at most {MAX_STOP_SEQUENCES})",
    )
    parser.add_argument("--thinking", choices=("on", "off"), help="switch provider reasoning on or off")
    parser.add_argument(
        "--effort",
        choices=EFFORTS,
        help="reasoning effort (wins over --thinking; none is off); checked against the model table for the model",
    )


def generation_params(ns: argparse.Namespace) -> GenerationParams:
    """The parameters the flags of ``add_generation_arguments`` give (None or empty where a flag is absent)."""
    from core.providers.base import GenerationParams

    return GenerationParams(
        max_tokens=ns.max_tokens,
        temperature=ns.temperature,
        top_p=ns.top_p,
        stop=tuple(ns.stop or ()),
        thinking=None if ns.thinking is None else ns.thinking == "on",
        effort=ns.effort,
    )
