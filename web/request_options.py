"""The request options a page or a Re-run form sets over the recorded request: one spec, read and checked once.

``OPTIONS`` lists them: max tokens, temperature, top_p, stop sequences, thinking, and which tools go. The payload
and diff pages' GET form and the Re-run form render their fields from it, and :func:`read_options` reads a query
or a form post through it: each value in its type and in the range the stored request context allows
(``core.request_context.stored``), max tokens within the output limit the model table states for the model
(``core.models``). A value out of range is an :class:`OptionError` naming the field, the range and the model,
shown beside the field. What is given wins over the recorded request, as the CLI's flags do (``GenerationParams``
over the stored, ``core.replay.sent_tools.over``); a new option is one entry here and one field of
``GenerationParams``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from litestar import Request

from core.errors import MisuseError
from core.fields import TextRule
from core.models import facts_for
from core.models.reasoning import EFFORTS, effort_refusal
from core.providers import GenerationParams, RequestOptions, provider_named
from core.replay.sent_tools import GivenTools, given_tools_of_text
from core.request_context.stored import MAX_STOP_SEQUENCES, MAX_TOKENS_LIMIT, TEMPERATURE_RANGE, TOP_P_RANGE

Kind = Literal["int", "float", "lines", "choice"]
ToolsMode = Literal["stored", "inferred", "none"]
"""Which tools a request sends: the recorded request's (``core.providers.ToolsSource``), inferred, or none."""


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One option: its field name (query and form alike), label, kind, range or choices, and where it goes."""

    name: str
    label: str
    kind: Kind
    help: str
    param: str | None = None
    """The ``GenerationParams`` (and ``RequestOptions``) field it sets; None for the tools choice."""
    flag: str | None = None
    """The CLI flag that sets the same, for the command a page names when it runs out of time."""
    low: float = 0.0
    high: float = 0.0
    model_limit: bool = False
    """The range's top is the model's output limit, where the model table knows it."""
    choices: tuple[tuple[str, str], ...] = ()
    """(value, label) of a choice; a blank value is always "as recorded"."""


TOOLS_CHOICES: tuple[tuple[str, str], ...] = (
    ("stored", "as recorded"),
    ("inferred", "inferred from the recorded calls"),
    ("none", "none"),
)

OPTIONS: tuple[OptionSpec, ...] = (
    OptionSpec("max_tokens", "max tokens", "int", "output token limit", "max_tokens", "--max-tokens",
               1, MAX_TOKENS_LIMIT, model_limit=True),
    OptionSpec("temperature", "temperature", "float", "sampling temperature (a provider with a narrower range "
               "gets it clamped, with a warning)", "temperature", "--temperature", *TEMPERATURE_RANGE),
    OptionSpec("top_p", "top_p", "float", "nucleus sampling mass", "top_p", "--top-p", *TOP_P_RANGE),
    OptionSpec("stop", "stop sequences", "lines", f"one per line, at most {MAX_STOP_SEQUENCES}; \\n is a line break",
               "stop", "--stop"),
    OptionSpec("thinking", "thinking", "choice", "switch the provider's reasoning on or off", "thinking",
               "--thinking", choices=(("on", "on"), ("off", "off"))),
    OptionSpec("effort", "effort", "choice", "the reasoning level asked (wins over thinking; none switches it off); "
               "checked against the levels the model table gives the model", "effort", "--effort",
               choices=tuple((level, level) for level in EFFORTS)),
    OptionSpec("tools_source", "tools sent", "choice", "the recorded request's tools (inferred from the calls when "
               "it has none), tools inferred from the recorded calls, or no tools", choices=TOOLS_CHOICES),
)  # fmt: skip
"""Every option, in the order the forms show them."""

NAMES = frozenset(spec.name for spec in OPTIONS)
MAX_FIELD_CHARS = 20_000
"""A field's text is refused past this many characters (sixteen stop sequences of 1,000 fit)."""
STOP_RULE = TextRule("a stop sequence", 1000, multiline=True)


@dataclass(frozen=True, slots=True)
class ModelLimit:
    """What the model table says bounds a request to one model: its output limit (None: unknown)."""

    provider: str
    model: str
    max_output_tokens: int | None
    source: str

    @property
    def text(self) -> str:
        """The limit as a field shows it beside itself."""
        if self.max_output_tokens is None:
            return f"{self.model}: not in the model table"
        return f"max {self.max_output_tokens:,} for {self.model}"


def model_limit(provider: str, model: str | None) -> ModelLimit:
    """The output limit of ``model`` (None: the provider's default) as the model table states it; an unknown model,
    whose stand-in facts say nothing about it, has none (``core.models.limits.fit_to_model`` reads it the same)."""
    dialect = provider_named(provider)
    choice = facts_for(dialect, model)
    known = choice.facts is not None and choice.match != "dialect"
    limit = choice.facts.max_output_tokens if known and choice.facts is not None else None
    source = choice.facts.source if choice.facts is not None else ""
    return ModelLimit(provider, model or dialect.default_model, limit, source)


@dataclass(frozen=True, slots=True)
class OptionError:
    """Why one field's value was refused: the field and the message the page shows beside it."""

    name: str
    message: str


@dataclass(frozen=True, slots=True)
class AskedOptions:
    """The options asked for: the texts as given (kept to show them again), the parameters read, the tools choice,
    and the fields refused. Only options without an error are ``applied``."""

    texts: tuple[tuple[str, str], ...] = ()
    """(name, text) of every non-blank field, in ``OPTIONS`` order: the query that asks for them again."""
    params: GenerationParams = field(default_factory=GenerationParams)
    tools: ToolsMode | None = None
    errors: tuple[OptionError, ...] = ()

    @property
    def given(self) -> bool:
        return bool(self.texts)

    @property
    def applied(self) -> bool:
        """Whether a body is built with these options (some are given, none is refused)."""
        return self.given and not self.errors

    @property
    def key(self) -> tuple[tuple[str, str], ...]:
        """What a build with these options is cached under besides the request (empty: the plain build)."""
        return self.texts if self.applied else ()

    def text(self, name: str) -> str:
        return dict(self.texts).get(name, "")

    def error(self, name: str) -> str | None:
        return next((e.message for e in self.errors if e.name == name), None)

    def over(self, options: RequestOptions) -> RequestOptions:
        """``options`` with every parameter given set (the stored context then fills the others: ``to_options``)."""
        if not self.applied:
            return options
        return replace(options, **self.params.over(options.params).by_name())

    def tools_over(self, options: RequestOptions) -> RequestOptions:
        """``options`` (the stored context applied) with the tools choice: inferred drops the stored tools so the
        builder infers them from the calls, none sends no tools and no tool choice."""
        if not self.applied or self.tools in (None, "stored"):
            return options
        if self.tools == "inferred":
            if options.tools_source != "stored":
                return options
            return replace(options, tools=(), tools_source="none", tool_choice=None)
        return replace(options, tools=(), tools_source="given", tool_choice=None)

    def cli_args(self) -> list[str]:
        """The CLI flags that ask for the same parameters (the tools choice has no flag of its own)."""
        out: list[str] = []
        if not self.applied:
            return out
        for spec in OPTIONS:
            value = getattr(self.params, spec.param) if spec.param is not None else None
            if spec.flag is None or value is None or value == ():
                continue
            if isinstance(value, tuple):
                out += [item for stop in value for item in (spec.flag, stop)]
            elif isinstance(value, bool):
                out += [spec.flag, "on" if value else "off"]
            else:
                out += [spec.flag, str(value)]
        return out


def read_options(
    values: Mapping[str, str] | Callable[[str], str | None], limits: Sequence[ModelLimit] = ()
) -> AskedOptions:
    """The options ``values`` (a query or a form: name -> text) hold, each checked; ``limits`` bound max tokens."""
    get = values if callable(values) else values.get
    texts: list[tuple[str, str]] = []
    params: dict[str, Any] = {}
    tools: ToolsMode | None = None
    errors: list[OptionError] = []
    for spec in OPTIONS:
        text = (get(spec.name) or "").strip() if spec.kind != "lines" else (get(spec.name) or "").strip("\r\n ")
        if not text:
            continue
        texts.append((spec.name, text))
        try:
            value = _read(spec, text, limits)
        except MisuseError as exc:
            errors.append(OptionError(spec.name, f"{spec.label}: {exc}"))
            continue
        if spec.param is None:
            tools = value
        else:
            params[spec.param] = value
    return AskedOptions(tuple(texts), GenerationParams(**params), tools, tuple(errors))


def _read(spec: OptionSpec, text: str, limits: Sequence[ModelLimit]) -> Any:
    if len(text) > MAX_FIELD_CHARS:
        raise MisuseError(f"at most {MAX_FIELD_CHARS:,} characters")
    if spec.kind == "int":
        return _whole(spec, text, limits)
    if spec.kind == "float":
        return _number(spec, text)
    if spec.kind == "lines":
        return _lines(text)
    words = [value for value, _ in spec.choices]
    if text not in words:
        raise MisuseError(f"one of {', '.join(words)} (blank: as recorded)")
    if spec.param == "effort":
        for limit in limits:
            refusal = effort_refusal(provider_named(limit.provider), limit.model, text)
            if refusal is not None:
                raise MisuseError(refusal)
    return text == "on" if spec.param == "thinking" else text


def _whole(spec: OptionSpec, text: str, limits: Sequence[ModelLimit]) -> int:
    low, high = int(spec.low), int(spec.high)
    if len(text) > 21 or not re.fullmatch(r"[+-]?[0-9]+", text):
        raise MisuseError(f"a whole number from {low:,} to {high:,}")
    value = int(text)
    if not low <= value <= high:
        raise MisuseError(f"{value:,} is out of range ({low:,} to {high:,})")
    if spec.model_limit:
        for limit in limits:
            top = limit.max_output_tokens
            if top is not None and value > top:
                where = f" ({limit.provider})" if len(limits) > 1 else ""
                raise MisuseError(
                    f"{value:,} is above {top:,}, the output limit of {limit.model}{where} "
                    f"(range {low:,} to {top:,}, {limit.source})"
                )
    return value


def _number(spec: OptionSpec, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or len(text) > 40:
        raise MisuseError(f"a number from {spec.low:g} to {spec.high:g}")
    if not spec.low <= value <= spec.high:
        raise MisuseError(f"{text} is out of range ({spec.low:g} to {spec.high:g})")
    return value


def _lines(text: str) -> tuple[str, ...]:
    stops = tuple(line.replace("\\n", "\n") for line in text.replace("\r\n", "\n").split("\n") if line)
    if len(stops) > MAX_STOP_SEQUENCES:
        raise MisuseError(f"at most {MAX_STOP_SEQUENCES} stop sequences, not {len(stops)}")
    for stop in stops:
        STOP_RULE.check(stop)
    return stops


@dataclass(frozen=True, slots=True)
class FieldView:
    """One field of an options form: what it holds, what the recorded request holds, its limit, its error."""

    spec: OptionSpec
    value: str
    recorded: str
    """The recorded request's value as text ('' when it holds none)."""
    limit: str
    """The model's limit beside the field ('' when none applies)."""
    error: str | None
    max: int | None = None
    """The highest value the browser lets be typed (the model's limit, where known)."""


@dataclass(frozen=True, slots=True)
class OptionsForm:
    """An options form's fields, built from ``OPTIONS``; ``given`` when some field is set."""

    fields: tuple[FieldView, ...]
    given: bool
    applied: bool
    errors: tuple[OptionError, ...] = ()


def options_form(
    asked: AskedOptions, recorded: GenerationParams | None = None, limits: Sequence[ModelLimit] = ()
) -> OptionsForm:
    """The fields of a form showing ``asked``, the recorded request's parameters and the models' limits."""
    recorded = recorded or GenerationParams()
    fields = []
    for spec in OPTIONS:
        stored = getattr(recorded, spec.param) if spec.param is not None else None
        tops = [limit.max_output_tokens for limit in limits if limit.max_output_tokens is not None]
        limit = "; ".join(lim.text for lim in limits) if spec.model_limit else ""
        fields.append(
            FieldView(
                spec,
                asked.text(spec.name),
                recorded_text(stored),
                limit,
                asked.error(spec.name),
                min(tops) if spec.model_limit and tops else None,
            )
        )
    return OptionsForm(tuple(fields), asked.given, asked.applied, asked.errors)


def recorded_text(value: object) -> str:
    """A recorded parameter as its field would hold it."""
    if value is None or value == ():
        return ""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return "\n".join(str(v).replace("\n", "\\n") for v in value)
    return f"{value:,}" if isinstance(value, int) else str(value)


def body_parameters(body: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The parameters a sent body carries besides its messages and tools, as (dotted name, JSON text): numbers,
    switches, short words and short lists of them, one nested object deep (a thinking or generation config)."""
    out: list[tuple[str, str]] = []
    for name, value in body.items():
        out.extend(_flat(name, value, depth=0))
    return out


def _flat(name: str, value: Any, depth: int) -> Iterable[tuple[str, str]]:
    if name in ("model", "stream"):
        return
    if isinstance(value, bool | int | float):
        yield name, json.dumps(value)
    elif isinstance(value, str) and len(value) <= 40 and depth > 0:
        yield name, json.dumps(value, ensure_ascii=False)
    elif isinstance(value, list) and name.rsplit(".", 1)[-1].startswith("stop") and len(value) <= MAX_STOP_SEQUENCES:
        if all(isinstance(v, str) for v in value):
            yield name, json.dumps(value, ensure_ascii=False)
    elif isinstance(value, str) and name.startswith("stop"):
        yield name, json.dumps(value, ensure_ascii=False)
    elif isinstance(value, Mapping) and depth < 2:
        for key, inner in value.items():
            yield from _flat(f"{name}.{key}", inner, depth + 1)


async def posted_options(request: Request[Any, Any, Any]) -> dict[str, str]:
    """The option fields of a form post, as text (a dependency: the form's other fields are the handler's data)."""
    form = await request.form()
    return {name: str(form.get(name) or "") for name in NAMES}


def replay_tools(given: GivenTools | None, asked: AskedOptions) -> GivenTools | None:
    """What a Re-run form gives a replay: its tool list and tool choice (``given``) with the options' parameters and
    tools choice, as the CLI's flags give them (``GivenTools.params``); MisuseError naming each field refused."""
    if asked.errors:
        raise MisuseError("; ".join(error.message for error in asked.errors))
    if not asked.given:
        return given
    base = given or GivenTools()
    if asked.tools in ("inferred", "none") and base.tools is not None:
        raise MisuseError(f"tools sent: {asked.tools} with a tool list given; clear one of the two")
    tools = () if asked.tools == "none" else base.tools
    return replace(base, tools=tools, params=asked.params, infer=asked.tools == "inferred")


def posted_tools(
    provider: str, model: str, tools: str, tool_choice: str, posted: Mapping[str, str]
) -> GivenTools | None:
    """What a replay form gives a replay: its tool list and tool choice, with the request options posted beside them
    (checked against the model's output limit) over them; MisuseError naming each field refused."""
    asked = read_options(posted, (model_limit(provider, model),)) if any(posted.values()) else None
    given = given_tools_of_text(tools, tool_choice)
    return replay_tools(given, asked) if asked is not None else given
