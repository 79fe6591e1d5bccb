"""Writes ``langchain_agent_ingest.json`` and ``langchain_agent_run_tree.json``: the runs LangChain's tracers make
for a two-turn tool-calling agent of one ``thread_id``.

The chat model is ``langchain_core``'s ``FakeMessagesListChatModel`` (no network), the tool a ``@tool``; nothing
of the runs is written here. ``langchain_agent_ingest.json`` holds the bodies ``LangChainTracer`` posts to
LangSmith (``POST /runs``, ``PATCH /runs/{id}``), caught at the HTTP adapter of the langsmith client's session,
as ``{"post": [...], "patch": [...]}``; ``langchain_agent_run_tree.json`` the root runs of each trace, with their
``child_runs``, as that tracer holds them (each ``Run``'s JSON). Not a test dependency; run it in a throwaway
environment, from this folder:

    python -m venv /tmp/gen && /tmp/gen/bin/pip install langchain-core==1.8.3 langsmith==0.15.1
    /tmp/gen/bin/python make_langchain_agent_runs.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import requests
import requests.adapters
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig, chain
from langchain_core.tools import tool
from langchain_core.tracers.langchain import LangChainTracer, wait_for_all_tracers
from langchain_core.tracers.schemas import Run
from langsmith import Client

HERE = Path(__file__).parent
THREAD = "thread-weather-7"


class _Caught(requests.adapters.HTTPAdapter):
    """Answers every request with 200 and keeps the run bodies sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: dict[str, list[Any]] = {"post": [], "patch": []}

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        path = request.path_url.split("?")[0]
        if request.body and path.startswith("/runs") and request.method in ("POST", "PATCH"):
            body = request.body if isinstance(request.body, bytes) else str(request.body).encode()
            self.sent[request.method.lower()].append(json.loads(body))
        response = requests.Response()
        response.status_code, response._content, response.url = 200, b"{}", request.url or ""
        response.headers["Content-Type"] = "application/json"
        return response


class _Tracer(LangChainTracer):
    """LangSmith's tracer, keeping each finished root run with its child runs too (it keeps only the latest
    root, without them); a class list, as LangChain copies a tracer per run with its metadata."""

    roots: ClassVar[list[Run]] = []

    def _persist_run(self, run: Run) -> None:
        super()._persist_run(run)
        _Tracer.roots.append(run)


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return {"Paris": "18C and sunny", "Lyon": "21C, light rain"}[city]


MODEL = FakeMessagesListChatModel(
    responses=[
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}, "id": "call_paris"}]),
        AIMessage("It is 18C and sunny in Paris."),
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Lyon"}, "id": "call_lyon"}]),
        AIMessage("Lyon has 21C and light rain."),
    ]
)


@chain
def agent(messages: list[BaseMessage], config: RunnableConfig) -> list[BaseMessage]:
    """Call the model until it answers without a tool call, running the tools it asks for."""
    messages = list(messages)
    while True:
        reply = MODEL.invoke(messages, config)
        messages.append(reply)
        if not isinstance(reply, AIMessage) or not reply.tool_calls:
            return messages
        messages.extend(get_weather.invoke(call, config) for call in reply.tool_calls)


def _tree(run: Run) -> dict[str, Any]:
    """A run with its child runs nested (``RunTree`` leaves them out of its own JSON)."""
    return {**json.loads(run.model_dump_json()), "child_runs": [_tree(child) for child in run.child_runs]}


def main() -> None:
    adapter = _Caught()
    client = Client(api_url="http://langsmith.invalid", api_key="not-a-key", auto_batch_tracing=False)
    client.session.mount("http://", adapter)  # after the client mounted its own retrying adapter
    tracer = _Tracer(client=client, project_name="weather")
    config: RunnableConfig = {
        "callbacks": [tracer],
        "metadata": {"thread_id": THREAD},
    }
    history = agent.invoke([SystemMessage("You answer about the weather."), HumanMessage("Weather in Paris?")], config)
    agent.invoke([*history, HumanMessage("And in Lyon?")], config)
    wait_for_all_tracers()
    (HERE / "langchain_agent_ingest.json").write_text(json.dumps(adapter.sent, indent=2) + "\n")
    roots = [_tree(root) for root in tracer.roots]
    (HERE / "langchain_agent_run_tree.json").write_text(json.dumps(roots, indent=2) + "\n")


if __name__ == "__main__":
    main()
