"""Writes ``pydantic_ai_tools.pb``: the spans pydantic-ai's own OpenTelemetry instrumentation makes for an agent
run with one tool call, encoded by the OpenTelemetry SDK's OTLP exporter serializer (what an OTLP/HTTP
exporter posts as ``application/x-protobuf``).

The model is pydantic-ai's ``FunctionModel`` (no network): it asks for the tool, then answers. Nothing of the
spans is written here: pydantic-ai's ``InstrumentationSettings`` makes them, ``encode_spans`` serializes them.
Not a test dependency; run it in a throwaway environment, from this folder:

    python -m venv /tmp/gen && /tmp/gen/bin/pip install pydantic-ai-slim==2.78.0 \\
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2
    /tmp/gen/bin/python make_pydantic_ai_protobuf.py
"""

from __future__ import annotations

from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returned = [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart)]
    if not returned:
        return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_paris")])
    return ModelResponse(parts=[TextPart(f"It is {returned[0].content} in Paris.")])


def main() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    agent = Agent(
        FunctionModel(_model, model_name="function-weather"),
        system_prompt="You answer questions about the weather.",
    )
    agent.instrument = InstrumentationSettings(tracer_provider=provider, include_content=True)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "18C and sunny"

    agent.run_sync("What is the weather in Paris?")
    request = encode_spans(exporter.get_finished_spans())
    (Path(__file__).parent / "pydantic_ai_tools.pb").write_bytes(request.SerializeToString())


if __name__ == "__main__":
    main()
