"""The provider-log round trip: a recorded request read back, rebuilt with our dialect, and compared.

A request a real provider accepted is the strictest oracle there is. For each one, the dialect of the same
provider reads it into neutral messages and context (``Dialect.read_request``), builds a body from them for the
same model (the phases of ``ChatLLM`` after the stored messages became neutral ones), and the two bodies are
compared as JSON: every difference is either a documented normalisation or a bug in the builder (or reader).

Normalisations that hold for every dialect are in :data:`COMMON`; a provider's own are its dialect's
``normalisations`` (in its reader module, beside the shape they describe). Key order is never a difference:
bodies are compared as JSON objects. Lists are aligned (an item inserted or dropped shows as one difference,
not as every item after it changed).
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from core.errors import InputError
from core.formats.events import ModelCall
from core.jsonio import dumps
from core.models.table import facts_for
from core.providers.base import (
    JSON,
    Degradation,
    Dialect,
    DiffKind,
    Normalisation,
    ReadBody,
    RequestContext,
    RequestOptions,
)
from core.providers.media_rules import media_rules
from core.providers.pairing import to_list
from core.providers.registry import all_providers, provider_named

UNMODELLED = Normalisation(
    "unmodelled field",
    "a field the neutral request has no place for (metadata, a provider's built-in tool, response "
    "format, ...): the reader keeps it in the call's extra, the builder does not send it",
    re.compile(r".*"),
    frozenset({"removed"}),
)
STREAMED = Normalisation(
    "streamed call",
    "stream and stream_options ask for the answer as events; the builder asks for one answer (an import folds "
    "a recorded stream into that one answer, so the messages are the same)",
    re.compile(r"/stream(_options(/.*)?)?"),
    frozenset({"removed"}),
)
COMMON: tuple[Normalisation, ...] = (
    STREAMED,
    Normalisation(
        "empty tool description",
        "an empty description says nothing; the builder omits the key (tool_spec)",
        re.compile(r"/tools/\d+(/function|/functionDeclarations/\d+)?/description"),
        frozenset({"removed"}),
        lambda recorded, built, body: recorded in ("", None),
    ),
    Normalisation(
        "empty tool list",
        "an empty tools list offers nothing; the builder leaves the key out",
        re.compile(r"/tools"),
        frozenset({"removed"}),
        lambda recorded, built, body: recorded == [],
    ),
    Normalisation(
        "tool choice without function tools",
        "with no function tool the builder sends no tool choice ('auto' is what a request without tools does)",
        re.compile(r"/tool_choice"),
        frozenset({"removed"}),
        lambda recorded, built, body: recorded == "auto" or recorded == {"type": "auto"},
    ),
    Normalisation(
        "tool flags",
        "the neutral tool is a name, a description and a schema: strict (the builder sends the provider's "
        "default), defer_loading and cache_control are not carried",
        re.compile(r"/tools/\d+(/function)?/(strict|defer_loading|cache_control)"),
    ),
    Normalisation(
        "cache breakpoints",
        "cache_control marks where a provider may cache the prompt: a price hint, not content; the neutral "
        "messages do not carry it",
        re.compile(r"(/[^/]+)*/cache_control"),
        frozenset({"removed"}),
    ),
)


@dataclass(frozen=True, slots=True)
class Difference:
    """One place where the built body differs from the recorded one, and what explains it (None: a bug)."""

    path: str
    kind: DiffKind
    recorded: Any
    built: Any
    normalisation: Normalisation | None

    def explain(self) -> str:
        """One line for a terminal."""
        why = f"normalisation: {self.normalisation.name}" if self.normalisation else "NOT A NORMALISATION"
        values = {
            "added": f"built {_short(self.built)}",
            "removed": f"recorded {_short(self.recorded)}",
            "changed": f"recorded {_short(self.recorded)} -> built {_short(self.built)}",
        }[self.kind]
        return f"{self.kind} {self.path or '/'}: {values} ({why})"


@dataclass(frozen=True, slots=True)
class RoundTrip:
    """A recorded request, the body rebuilt from its read-back, and every difference between them."""

    recorded: JSON
    built: JSON
    differences: tuple[Difference, ...]
    warnings: tuple[str, ...]

    @property
    def bugs(self) -> tuple[Difference, ...]:
        """The differences no documented normalisation explains."""
        return tuple(d for d in self.differences if d.normalisation is None)


def rebuild(dialect: Dialect, read: ReadBody) -> tuple[JSON, tuple[str, ...]]:
    """The body our dialect builds for the read-back messages and context, and the warnings it gave.

    The phases of ``ChatLLM`` from the neutral messages on (to_list, reformat, assemble), for the recorded
    model; the model's limits are not applied, as the recording's own limits were accepted.
    """
    options = RequestOptions(
        model=read.model,
        tools=read.tools,
        tools_source="stored" if read.tools else "none",
        tool_choice=read.tool_choice,
        **read.params.by_name(),
    )
    ctx = RequestContext(options, media_rules(dialect, facts_for(dialect, read.model)))
    api_params = dialect.configure_api_params(options, ctx)
    fragments = dialect.reformat(to_list(read.messages, ctx), ctx)
    body = dialect.assemble(api_params, fragments, ctx)
    return body, tuple(str(Degradation._make(warning)) for warning in ctx.warnings)


def round_trip(dialect: Dialect, recorded: JSON, model: str | None = None) -> RoundTrip:
    """Read ``recorded`` back with ``dialect``, rebuild it, and classify every difference.

    ``model`` names the model when the body does not (Gemini's is in the URL)."""
    read = dialect.read_request(recorded)
    if model is not None and read.model is None:
        read = ReadBody(read.messages, model, read.tools, read.tool_choice, read.params, read.extra)
    built, warnings = rebuild(dialect, read)
    if model is not None and "model" not in recorded:
        built = {k: v for k, v in built.items() if k != "model"}
    return RoundTrip(recorded, built, _classified(dialect, recorded, built, read.extra), warnings)


def compare_bodies(dialect: Dialect, recorded: JSON, built: JSON) -> tuple[Difference, ...]:
    """Every difference between a recorded body and one built elsewhere (the payload page's, from the stored
    messages), each with the documented normalisation that explains it; a model the recorded body names only in
    its URL (Gemini's) is not a difference."""
    if "model" not in recorded:
        built = {k: v for k, v in built.items() if k != "model"}
    return _classified(dialect, recorded, built, dialect.read_request(recorded).extra)


def _classified(dialect: Dialect, recorded: JSON, built: JSON, extra: Mapping[str, Any]) -> tuple[Difference, ...]:
    comparable, unmodelled = _without_unmodelled(recorded, extra)
    table = (*COMMON, *dialect.normalisations)
    found = [Difference(path, "removed", value, None, _kept_aside(path, value, recorded)) for path, value in unmodelled]
    for rule in table:
        if rule.drop is not None:
            found += [Difference(path, "removed", value, None, rule) for path, value in _drop(comparable, rule.drop)]
    for path, kind, old, new in diff(comparable, built):
        explained = next((n for n in table if n.covers(path, kind, old, new, recorded)), None)
        found.append(Difference(path, kind, old, new, explained))
    return tuple(found)


def _kept_aside(path: str, value: Any, recorded: JSON) -> Normalisation:
    """What explains a field the reader kept aside: the streaming switch has its own name, the rest are unmodelled."""
    return STREAMED if STREAMED.covers(path, "removed", value, None, recorded) else UNMODELLED


# Keys of ReadBody.extra that hold what the reader skipped inside the body, by the reader's path.
_SKIPPED_KEYS = ("unread_blocks", "unread_items", "unread_parts", "unread_fields")


def _without_unmodelled(recorded: JSON, extra: Mapping[str, Any]) -> tuple[JSON, list[tuple[str, Any]]]:
    """The recorded body without what the reader kept in ``extra`` (compared apart), and those paths."""
    body: JSON = _copy(recorded)
    removed: list[tuple[str, Any]] = []
    paths: list[list[str | int]] = []
    for key, value in extra.items():
        if key in _SKIPPED_KEYS:
            paths += [_segments(path) for path in value]
        elif key == "tools" and isinstance(recorded.get("tools"), list):
            paths += [["tools", i] for i, tool in enumerate(recorded["tools"]) if any(tool is b for b in value)]
        elif key in recorded and not isinstance(recorded[key], Mapping):
            paths.append([key])
        elif isinstance(value, Mapping) and isinstance(recorded.get(key), Mapping):
            paths += [[key, sub] for sub in value if sub in recorded[key]]
        elif key in recorded:
            paths.append([key])
    # Deepest and last first, so that removing an item does not move the ones still to remove.
    for segments in sorted(paths, key=lambda s: [(-1, x) if isinstance(x, int) else (0, x) for x in s], reverse=True):
        parent: Any = body
        for step in segments[:-1]:
            parent = parent[step]
        removed.append(("".join(f"/{_escape(str(s))}" for s in segments), parent[segments[-1]]))
        del parent[segments[-1]]
    for key in [k for k, v in body.items() if isinstance(v, dict | list) and not v and recorded.get(k)]:
        del body[key]  # a parent emptied by the removals (tools that were all built-in ones)
    return body, sorted(removed)


def _drop(value: Any, dropped: Callable[[Any], bool], path: str = "") -> list[tuple[str, Any]]:
    """Take every list item ``dropped`` accepts out of ``value`` (in place); their paths and values."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out += _drop(item, dropped, f"{path}/{_escape(str(key))}")
    elif isinstance(value, list):
        kept = []
        for i, item in enumerate(value):
            if dropped(item):
                out.append((f"{path}/{i}", item))
            else:
                out += _drop(item, dropped, f"{path}/{i}")
                kept.append(item)
        value[:] = kept
    return out


_SEGMENT = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def _segments(path: str) -> list[str | int]:
    """``messages[3].content[2]`` as ``["messages", 3, "content", 2]``."""
    return [int(index) if index else key for key, index in _SEGMENT.findall(path)]


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def diff(recorded: Any, built: Any, path: str = "") -> Iterator[tuple[str, DiffKind, Any, Any]]:
    """Every (JSON pointer, kind, recorded value, built value) where the two JSON values differ; objects by key
    (order ignored), arrays aligned on their items."""
    if isinstance(recorded, Mapping) and isinstance(built, Mapping):
        for key in recorded:
            at = f"{path}/{_escape(str(key))}"
            if key not in built:
                yield at, "removed", recorded[key], None
            else:
                yield from diff(recorded[key], built[key], at)
        for key in built:
            if key not in recorded:
                yield f"{path}/{_escape(str(key))}", "added", None, built[key]
    elif isinstance(recorded, list) and isinstance(built, list):
        yield from _diff_lists(recorded, built, path)
    elif recorded != built or _json_type(recorded) != _json_type(built):
        yield path, "changed", recorded, built


def _json_type(value: Any) -> str:
    """JSON's type of a value: a number is a number, whether Python holds it as an int or a float (0 == 0.0)."""
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, int | float) else type(value).__name__


def _diff_lists(recorded: list[Any], built: list[Any], path: str) -> Iterator[tuple[str, DiffKind, Any, Any]]:
    keys_a = [dumps(v, sort_keys=True) for v in recorded]
    keys_b = [dumps(v, sort_keys=True) for v in built]
    matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            continue
        common = min(a1 - a0, b1 - b0)
        alike = 0  # items at the same place and of the same kind are compared inside; others added and removed
        while alike < common and _kind(recorded[a0 + alike]) == _kind(built[b0 + alike]):
            yield from diff(recorded[a0 + alike], built[b0 + alike], f"{path}/{a0 + alike}")
            alike += 1
        for k in range(a0 + alike, a1):
            yield f"{path}/{k}", "removed", recorded[k], None
        for k in range(b0 + alike, b1):
            yield f"{path}/{k}", "added", None, built[k]


def _kind(value: Any) -> Any:
    """What an item is, for aligning lists: its type and role when it is an object, else its JSON type."""
    if isinstance(value, Mapping):  # an item with a role and no type is a message (Responses' default type)
        return (value.get("type") or ("message" if "role" in value else None), value.get("role"))
    return type(value).__name__


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def _short(value: Any) -> str:
    text = dumps(value).decode() if not isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def verify(calls: Iterable[ModelCall]) -> Iterator[tuple[ModelCall, RoundTrip]]:
    """The round trip of every call that kept its recorded body, by the dialect that read it."""
    for call in calls:
        if call.recorded_body is None or call.request is None or call.request.provider is None:
            continue
        dialect = provider_named(call.request.provider)
        yield call, round_trip(dialect, call.recorded_body, call.request.model)


def print_differences(calls: Iterable[ModelCall], out: TextIO, *, every: bool = False) -> int:
    """Print each call's differences (``every``: the normalisations too, else only the bugs); the bug count."""
    bugs = 0
    for call, trip in verify(calls):
        shown = trip.differences if every else trip.bugs
        bugs += len(trip.bugs)
        if not shown:
            continue
        where = call.source.source_id or f"line {call.source.line}"
        out.write(f"{call.source.path} {where} ({call.request.provider if call.request else '?'}):\n")
        for difference in shown:
            out.write(f"  {difference.explain()}\n")
    return bugs


def documented() -> list[tuple[str, Normalisation]]:
    """Every documented normalisation with the dialects it holds for (``*``: all), in table order: the list a
    closing note or ``--verify``'s help shows."""
    out: list[tuple[str, Normalisation]] = [("*", UNMODELLED), *(("*", n) for n in COMMON)]
    owners: dict[int, list[str]] = {}
    rules: dict[int, Normalisation] = {}
    for dialect in all_providers():
        for rule in dialect.normalisations:
            owners.setdefault(id(rule), []).append(dialect.name)
            rules[id(rule)] = rule
    out += [(", ".join(owners[key]), rule) for key, rule in rules.items()]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m core.formats.roundtrip [--all] FILE...``: the differences of every recorded request; exit 1
    when one is not a documented normalisation. ``--list``: the documented normalisations."""
    from core.formats.provider_logs import calls_of

    args = list(sys.argv[1:] if argv is None else argv)
    if "--list" in args:
        for owner, rule in documented():
            sys.stdout.write(f"{owner}: {rule.name}: {rule.reason}\n")
        return 0
    every = "--all" in args
    paths = [Path(a) for a in args if a != "--all"]
    bugs = unread = 0
    for path in paths:
        try:
            bugs += print_differences(calls_of([path]), sys.stdout, every=every)
        except InputError as exc:
            unread += 1
            sys.stdout.write(f"{exc}\n")
    sys.stdout.write(f"{bugs} difference(s) that are not a documented normalisation; {unread} file(s) not read\n")
    return 1 if bugs or unread else 0


if __name__ == "__main__":
    raise SystemExit(main())
