"""A small agent, run through the real provider SDKs against the stub provider and recorded by the real
instrumentations: the OpenTelemetry GenAI ones (opentelemetry-python-contrib's, with the agent and tool spans
of its ``opentelemetry-util-genai`` handler, as agent frameworks record them), OpenLLMetry's (the same GenAI
attributes, under the same util-genai agent and tool spans) and the OpenInference ones (with its ``OITracer``
agent and tool spans and ``using_session``).

One turn: the user asks for the weather, the model asks for the ``weather`` tool, the tool answers, the model
answers. The stub is scripted per conversation (the conversation's marker is in the question), so one stub
can serve several agents.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import anthropic
import openai
import pytest
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.sdk.trace import TracerProvider

from web.devtools.stub_provider import StubServer

Sdk = Literal["openai", "openai-responses", "anthropic"]
"""The SDK call the agent makes: OpenAI's chat completions or Responses API, Anthropic's messages."""

MODELS: dict[Sdk, str] = {"openai": "gpt-4o-mini", "openai-responses": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}
SYSTEM = "Answer in one sentence."
TOOL_NAME = "weather"
TOOL_DESCRIPTION = "The weather in a city"
TOOL_SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
CITIES = ("Paris", "Lyon")
PREAMBLE = "Let me look both up."
MAX_TOKENS = 200


def questions(conversation: str) -> tuple[str, str]:
    """The user's two turns (the conversation's marker in each, so the stub tells conversations apart)."""
    return f"Weather in Paris and Lyon? ({conversation})", f"And should I take an umbrella? ({conversation})"


def weather(city: str, conversation: str) -> str:
    """The tool's result."""
    return f"sunny, 21 C in {city} ({conversation})"


def failure(city: str) -> str:
    """What the tool raises for a city it fails on."""
    return f"no weather station in {city}"


def failure_result(city: str) -> str:
    """The result the agent sends the model for a failed run."""
    return f"error: {failure(city)}"


def answers(conversation: str) -> tuple[str, str]:
    """The model's final answer of each turn."""
    return f"Sunny in both ({conversation}).", f"No umbrella needed ({conversation})."


def call_ids(conversation: str) -> tuple[str, ...]:
    return tuple(f"call_{conversation.replace('-', '_')}_{city.lower()}" for city in CITIES)


@dataclass(frozen=True, slots=True)
class Instrumentation:
    """One instrumentation package: the SDK it instruments and the convention its spans follow."""

    name: str
    """Short: the family and the SDK (``genai-openai``, ``openllmetry-anthropic``)."""
    package: str
    sdk: Sdk
    convention: Literal["genai", "openinference"]
    instrumentor: Callable[[], BaseInstrumentor]
    names_conversation: bool = True
    """Whether its model-call spans carry the agent's conversation id (util-genai's ambient one, OpenInference's
    ``session.id``); OpenLLMetry's carry none, so their conversation is named as keyless calls are."""

    def __str__(self) -> str:
        return self.name

    @property
    def provider(self) -> str:
        """The provider its calls go to."""
        return "anthropic" if self.sdk == "anthropic" else "openai"


def _genai_openai() -> BaseInstrumentor:
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()  # type: ignore[no-untyped-call]


def _genai_anthropic() -> BaseInstrumentor:
    from opentelemetry.instrumentation.genai.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()  # type: ignore[no-untyped-call]


def _openllmetry_openai() -> BaseInstrumentor:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    with warnings.catch_warnings():  # its Responses wrapper declares a pydantic v1 ``class Config`` when imported
        warnings.simplefilter("ignore", DeprecationWarning)
        import opentelemetry.instrumentation.openai.v1.responses_wrappers  # noqa: F401
    return OpenAIInstrumentor()


def _openllmetry_anthropic() -> BaseInstrumentor:
    from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


def _openinference_openai() -> BaseInstrumentor:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    return OpenAIInstrumentor()


def _openinference_anthropic() -> BaseInstrumentor:
    from openinference.instrumentation.anthropic import AnthropicInstrumentor

    return AnthropicInstrumentor()


_CONTRIB = "opentelemetry-instrumentation-genai-"
_OPENLLMETRY = "opentelemetry-instrumentation-"
_OPENINFERENCE = "openinference-instrumentation-"
INSTRUMENTATIONS = (
    Instrumentation("genai-openai", f"{_CONTRIB}openai", "openai", "genai", _genai_openai),
    Instrumentation("genai-openai-responses", f"{_CONTRIB}openai", "openai-responses", "genai", _genai_openai),
    Instrumentation("genai-anthropic", f"{_CONTRIB}anthropic", "anthropic", "genai", _genai_anthropic),
    Instrumentation("openllmetry-openai", f"{_OPENLLMETRY}openai", "openai", "genai", _openllmetry_openai, False),
    Instrumentation(
        "openllmetry-anthropic", f"{_OPENLLMETRY}anthropic", "anthropic", "genai", _openllmetry_anthropic, False
    ),
    Instrumentation(
        "openinference-openai", f"{_OPENINFERENCE}openai", "openai", "openinference", _openinference_openai
    ),
    Instrumentation(
        "openinference-openai-responses",
        f"{_OPENINFERENCE}openai",
        "openai-responses",
        "openinference",
        _openinference_openai,
    ),
    Instrumentation(
        "openinference-anthropic", f"{_OPENINFERENCE}anthropic", "anthropic", "openinference", _openinference_anthropic
    ),
)


def script(stub: StubServer, conversation: str) -> None:
    """The stub's answers for this conversation: a text and two tool calls, then each turn's final text."""
    calls = [{"name": TOOL_NAME, "arguments": {"city": city}} for city in CITIES]
    first, second = answers(conversation)
    steps = [
        {"text": PREAMBLE, "tool_calls": calls, "call_ids": list(call_ids(conversation))},
        {"text": first},
        {"text": second},
    ]
    stub.state.script_steps("", steps, match=f"({conversation})")


Call = dict[str, Any]
"""A tool call the model made: ``id``, ``name``, ``arguments``."""


class _Agent:
    """The loop's provider side, over one SDK: ``ask`` sends the history, ``answer`` appends tool results."""

    def __init__(self, sdk: Sdk, stub: StubServer) -> None:
        self.sdk = sdk
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}] if sdk == "openai" else []
        """The history as the SDK takes it (the Responses API's input items; its system text is ``instructions``)."""
        if sdk == "anthropic":
            self.anthropic = anthropic.Anthropic(api_key="sk-test", base_url=stub.base_url, max_retries=0)
        else:
            self.openai = openai.OpenAI(api_key="sk-test", base_url=f"{stub.base_url}/v1", max_retries=0)

    def ask(self) -> tuple[str, list[Call]]:
        """Send the history; the answer's text and the tool calls it made."""
        if self.sdk == "openai":
            return self._chat()
        if self.sdk == "openai-responses":
            return self._responses()
        return self._messages()

    def _chat(self) -> tuple[str, list[Call]]:
        tool = {"type": "function", "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                                                 "parameters": TOOL_SCHEMA}}  # fmt: skip
        completion = self.openai.chat.completions.create(
            model=MODELS[self.sdk],
            messages=self.messages,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
            max_tokens=MAX_TOKENS,
            temperature=0.3,
        )
        message = completion.choices[0].message
        self.messages.append(message.model_dump(exclude_none=True))
        calls = [
            {"id": c.id, "name": c.function.name, "arguments": json.loads(c.function.arguments)}
            for c in message.tool_calls or []
            if c.type == "function"
        ]
        return message.content or "", calls

    def _responses(self) -> tuple[str, list[Call]]:
        tool = {"type": "function", "name": TOOL_NAME, "description": TOOL_DESCRIPTION, "parameters": TOOL_SCHEMA}
        response = self.openai.responses.create(
            model=MODELS[self.sdk],
            instructions=SYSTEM,
            input=self.messages,  # type: ignore[arg-type]
            tools=[tool],  # type: ignore[list-item]
            max_output_tokens=MAX_TOKENS,
            temperature=0.3,
        )
        self.messages += [item.model_dump(exclude_none=True) for item in response.output]
        calls = [
            {"id": item.call_id, "name": item.name, "arguments": json.loads(item.arguments)}
            for item in response.output
            if item.type == "function_call"
        ]
        return response.output_text, calls

    def _messages(self) -> tuple[str, list[Call]]:
        tools = [{"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "input_schema": TOOL_SCHEMA}]
        reply = self.anthropic.messages.create(
            model=MODELS[self.sdk],
            system=SYSTEM,
            messages=self.messages,  # type: ignore[arg-type]
            tools=tools,  # type: ignore[arg-type]
            max_tokens=MAX_TOKENS,
        )
        self.messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
        calls = [{"id": b.id, "name": b.name, "arguments": b.input} for b in reply.content if b.type == "tool_use"]
        return "".join(b.text for b in reply.content if b.type == "text"), calls

    def close(self) -> None:
        """Close the SDK's connections (a socket left to the garbage collector is a ResourceWarning)."""
        (self.anthropic if self.sdk == "anthropic" else self.openai).close()

    def say(self, text: str) -> None:
        self.messages.append({"role": "user", "content": text})

    def answer(self, results: list[tuple[Call, str | None]]) -> None:
        """Send each call's result, or for a failed run (None) the error text, flagged where the API can."""
        texts = [(c, r if r is not None else failure_result(c["arguments"]["city"])) for c, r in results]
        if self.sdk == "openai":
            self.messages += [{"role": "tool", "tool_call_id": c["id"], "content": text} for c, text in texts]
            return
        if self.sdk == "openai-responses":
            self.messages += [{"type": "function_call_output", "call_id": c["id"], "output": text} for c, text in texts]
            return
        blocks = [
            {
                "type": "tool_result",
                "tool_use_id": c["id"],
                "content": text,
                **({"is_error": True} if r is None else {}),
            }
            for (c, text), (_, r) in zip(texts, results, strict=True)
        ]
        self.messages.append({"role": "user", "content": blocks})


ToolRunner = Callable[[Call], str]
"""Runs one tool call inside the instrumentation's tool span; its result (raises ``LookupError`` if it fails)."""


def _turns(agent: _Agent, conversation: str, run_tool: ToolRunner) -> list[str]:
    """Each user turn, asking again while the model calls tools; the final answers."""
    finals = []
    for text in questions(conversation):
        agent.say(text)
        reply, calls = agent.ask()
        while calls:
            agent.answer([(call, _result(run_tool, call)) for call in calls])
            reply, calls = agent.ask()
        finals.append(reply)
    return finals


def _result(run_tool: ToolRunner, call: Call) -> str | None:
    try:
        return run_tool(call)
    except LookupError:
        return None


def _weather_tool(city: str, conversation: str, failing: str | None) -> str:
    if city == failing:
        raise LookupError(failure(city))
    return weather(city, conversation)


def _genai_run(agent: _Agent, provider: TracerProvider, conversation: str, failing: str | None) -> list[str]:
    from opentelemetry.util.genai.handler import TelemetryHandler

    handler = TelemetryHandler(tracer_provider=provider)

    def run_tool(call: Call) -> str:
        with handler.tool(TOOL_NAME) as tool:
            tool.tool_call_id = call["id"]
            tool.tool_call_arguments = call["arguments"]
            tool.tool_call_result = result = _weather_tool(call["arguments"]["city"], conversation, failing)
        return result

    with handler.invoke_local_agent(
        agent_name="weather-agent", request_model=MODELS[agent.sdk], conversation_id=conversation
    ):
        return _turns(agent, conversation, run_tool)


def _openinference_run(agent: _Agent, provider: TracerProvider, conversation: str, failing: str | None) -> list[str]:
    from openinference.instrumentation import OITracer, TraceConfig, using_session

    tracer = OITracer(provider.get_tracer("weather-agent"), TraceConfig())

    def run_tool(call: Call) -> str:
        with tracer.start_as_current_span(TOOL_NAME, openinference_span_kind="tool") as tool:
            tool.set_tool(name=TOOL_NAME, description=TOOL_DESCRIPTION, parameters=TOOL_SCHEMA)
            tool.set_attribute("tool.id", call["id"])
            tool.set_input(json.dumps(call["arguments"]), mime_type="application/json")
            result = _weather_tool(call["arguments"]["city"], conversation, failing)
            tool.set_output(result)
        return result

    with (
        using_session(conversation),
        tracer.start_as_current_span("weather-agent", openinference_span_kind="agent") as span,
    ):
        span.set_input(questions(conversation)[0])
        finals = _turns(agent, conversation, run_tool)
        span.set_output(finals[-1])
    return finals


@contextmanager
def instrumented(
    instrumentation: Instrumentation, provider: TracerProvider, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """``instrumentation`` recording into ``provider``, with message content captured on the spans."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "span_only")
    instrumentor = instrumentation.instrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield
    finally:
        instrumentor.uninstrument()


def run_agent(
    instrumentation: Instrumentation,
    stub: StubServer,
    provider: TracerProvider,
    conversation: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    failing: str | None = None,
) -> list[str]:
    """Two turns of the agent for ``conversation``, recorded by ``instrumentation`` into ``provider``; the
    model's final answers. The tool fails for the city ``failing`` (the agent sends the model the error)."""
    script(stub, conversation)
    agent = _Agent(instrumentation.sdk, stub)
    run = _genai_run if instrumentation.convention == "genai" else _openinference_run
    try:
        with instrumented(instrumentation, provider, monkeypatch):
            return run(agent, provider, conversation, failing)
    finally:
        agent.close()
