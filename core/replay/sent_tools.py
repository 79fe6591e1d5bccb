"""The tools, tool choice and parameters a replay sends, and where the tools came from.

::

    sent_tools(stored, given, recorded)   given tools, else the stored context's, else inferred, else none

A replay sends what the agent offered when it ran: the turn's stored request context (or the
conversation's). ``--tools`` / ``--tool-choice`` (or the form's fields) override it. With neither, a
step replay infers the tools from every recorded call of the conversation, the turn's own steps
included: step 1's history holds none of the calls the turn is about to make, and a model calls only
tools it was given. The same tools go with every step, so a step's request never depends on what the
replay itself did. An inferred schema is a guess (it can change what a model does): the run says so.
A re-run of one reply passes no ``recorded`` and leaves inference to ChatLLM, so its body is the
payload page's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import MisuseError
from core.messages.union import Message
from core.providers import (
    GenerationParams,
    NamedToolChoice,
    RequestOptions,
    ToolChoice,
    ToolSpec,
    ToolsSource,
)
from core.request_context import StoredRequest, tool_choice_json, tool_json
from core.store import Store


@dataclass(frozen=True, slots=True)
class GivenTools:
    """Tools or a tool choice given for one replay (``--tools FILE``, ``--tool-choice``, a form): over the stored."""

    tools: tuple[ToolSpec, ...] | None = None
    """None keeps the stored (or inferred) tools; a tuple, even empty, replaces them."""
    tool_choice: ToolChoice | None = None
    """None keeps the stored tool choice."""
    params: GenerationParams = field(default_factory=GenerationParams)
    """Parameters given for the replay (``--max-tokens`` and the like): each one set wins over the stored one."""
    infer: bool = False
    """Leave the stored tools and tool choice aside: the tools are inferred from the recorded calls (a form's
    "tools sent: inferred"); ``tools`` and ``tool_choice``, when given, still win."""


@dataclass(frozen=True, slots=True)
class SentTools:
    """The tools every request of a replay carries, the tool choice, the parameters, and the tools' source."""

    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice | None = None
    source: ToolsSource = "none"
    params: GenerationParams = field(default_factory=GenerationParams)
    inferred_from: int = 0
    """How many recorded calls the inferred tools were read from (0 unless ``source`` is ``inferred``)."""

    def options(self, model: str, **more: Any) -> RequestOptions:
        """The request options of a replay to ``model`` that sends these tools and parameters."""
        return RequestOptions(
            model=model, tools=self.tools, tool_choice=self.tool_choice, tools_source=self.source,
            **self.params.by_name(), **more,
        )  # fmt: skip

    def tools_json(self) -> list[dict[str, Any]]:
        """The tools as stored with a step run: neutral ``{"name", "description", "parameters"}`` objects."""
        return [tool_json(t) for t in self.tools]

    def tool_choice_json(self) -> str | dict[str, Any] | None:
        """The tool choice as stored with a step run: a word, ``{"name": ...}``, or None."""
        return None if self.tool_choice is None else tool_choice_json(self.tool_choice)

    @property
    def note(self) -> str | None:
        """The warning an inferred tool list earns (None otherwise): a verdict line carries it."""
        if self.source != "inferred":
            return None
        names = ", ".join(t.name for t in self.tools)
        calls = "call" if self.inferred_from == 1 else "calls"
        return f"tools inferred from {self.inferred_from} recorded {calls} ({names}): no stored tool definitions"


def stored_request(store: Store, conversation_id: str, turn: str | None) -> StoredRequest | None:
    """The request context stored for ``turn`` of the conversation, else for the whole conversation, else None."""
    return store.request_context(conversation_id, turn)


SOURCE_WORDS: Mapping[str, str] = {
    "stored": "the stored request context",
    "given": "given for this replay",
    "inferred": "inferred from the recorded calls",
}
INFERRED_WARNING = "tools inferred from the recorded calls: an inferred schema can change what a model does"
"""What a step replay whose tools were inferred says beside its verdict."""


def tools_said(source: str | None, names: Sequence[str], choice: Any = None) -> str:
    """One line saying which tools a replay sent and where they came from (the CLI's and the run page's)."""
    if source is None:
        return "tools sent: not recorded"
    if not names:
        return "no tools sent"
    listed = ", ".join(names)
    chosen = "" if choice is None else f"; tool choice {choice['name'] if isinstance(choice, dict) else choice}"
    return f"tools sent ({SOURCE_WORDS.get(source, source)}): {listed}{chosen}"


def params_said(params: Mapping[str, Any] | None) -> str | None:
    """One line naming the parameters given over the stored request (the CLI's and the run page's); None for none."""
    if not params:
        return None
    said = ", ".join(f"{name} {_param_text(value)}" for name, value in params.items())
    return f"parameters given: {said}"


def _param_text(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, list):
        return " | ".join(repr(item) for item in value)
    return str(value)


MAX_TOOLS_FIELD_CHARS = 1_000_000
"""A form's tools field holds at most this many characters (a tool list is kilobytes)."""


def given_tools_of_text(tools: str, tool_choice: str) -> GivenTools | None:
    """A form's tools (a JSON tool list in any provider's shape) and tool choice (``auto``, ``none``, ``required`` or
    a tool's name), as a replay takes them; None when both are blank. MisuseError naming the field otherwise."""
    from core.request_context import tools_of_json

    tools, tool_choice = tools.strip(), tool_choice.strip()
    if not tools and not tool_choice:
        return None
    if len(tools) > MAX_TOOLS_FIELD_CHARS:
        raise MisuseError(f"the tools field holds at most {MAX_TOOLS_FIELD_CHARS:,} characters")
    given = tools_of_json(tools.encode("utf-8", "surrogatepass"), "the tools field") if tools else None
    if not tool_choice:
        return GivenTools(given)
    if tool_choice in ("auto", "none", "required"):
        return GivenTools(given, tool_choice)  # type: ignore[arg-type]  # one of the Literal's words
    return GivenTools(given, NamedToolChoice(tool_choice[:200]))


def given_of_run(
    source: str | None, tools: Sequence[Any] | None, tool_choice: Any, params: Mapping[str, Any] | None = None
) -> GivenTools | None:
    """What a recorded step run was given (its tools when given, its tool choice, its parameters, whether its tools
    were inferred), so a worker sends it again."""
    from core.request_context import read_params, read_tool_choice, read_tools

    given = read_tools(list(tools or ())) if source == "given" else None
    choice = None if tool_choice is None else read_tool_choice(tool_choice)
    asked = read_params(dict(params or {}))
    infer = source == "inferred"
    if given is None and choice is None and asked == GenerationParams() and not infer:
        return None
    return GivenTools(given, choice, asked, infer)


def sent_tools(
    stored: StoredRequest | None, given: GivenTools | None, recorded: Sequence[Message] | None = None
) -> SentTools:
    """What a replay sends: the given tools, else the stored, else those ``recorded`` calls (None: no inference).

    MisuseError (nothing is sent) for a tool choice that forces a tool the replay does not send.
    """
    given = given or GivenTools()
    params = given.params.over(stored.params if stored is not None else GenerationParams())
    tools_stored = stored if not given.infer else None
    choice = given.tool_choice if given.tool_choice is not None else tools_stored.tool_choice if tools_stored else None
    if given.tools is not None:
        sent = SentTools(given.tools, choice, "given", params)
    elif tools_stored is not None and tools_stored.tools:
        sent = SentTools(tuple(tools_stored.tools), choice, "stored", params)
    else:
        tools, calls = inferred_tools(recorded) if recorded is not None else ((), 0)
        sent = SentTools(tools, choice, "inferred" if tools else "none", params, calls)
    if isinstance(choice, NamedToolChoice) and all(t.name != choice.name for t in sent.tools):
        whose = "the given tool choice" if given.tool_choice is not None else "the stored tool choice"
        names = ", ".join(t.name for t in sent.tools) or "none"
        raise MisuseError(f"{whose} forces tool {choice.name!r}, which this replay does not send (sent: {names})")
    return sent


def inferred_tools(history: Sequence[Message]) -> tuple[tuple[ToolSpec, ...], int]:
    """One tool per name called in ``history`` (trace records included), as ChatLLM infers them for a body
    (``core.providers.inferred_tools``), and how many calls they were read from."""
    from core.providers.inferred_tools import infer_tools, recorded_calls
    from core.replay.run import expanded_history  # run imports this module

    inferred = infer_tools(recorded_calls(expanded_history(history)))
    return tuple(tool.spec for tool in inferred), sum(tool.calls for tool in inferred)
