"""The tools the demo's agents offered, stored beside their conversations as request contexts (``core/FORMAT.md``).

Each agent conversation gets one ``traceloupe_request`` line: the tools its calls use, with the schemas the
agent sent, the tool choice and the parameters, so its step runs send what a real model would have been
offered. ``WITHOUT_TOOLS`` is left without one on purpose: a step replay of it infers the tools from the
recorded calls and says so. The hostile conversation has none either: its tool names are attacks, not tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from web.devtools.demo_data import AGENT_STEPS, AGENT_TURN, EVERY_KIND, INCIDENT, LONG

Json = dict[str, Any]

WITHOUT_TOOLS = "demo-support"
"""The agent conversation stored without its tools: its step runs send tools inferred from its calls."""
WITHOUT_TOOLS_TURN = "support-u1"


def _tool(name: str, description: str, required: tuple[str, ...] = (), **properties: Json) -> Json:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(required)},
    }


_TEXT: Json = {"type": "string"}
TOOLS: dict[str, Json] = {
    tool["name"]: tool
    for tool in (
        _tool("lookup_order", "Find a web-shop order by its id: status, total, items.", ("order_id",),
              order_id={"type": "string", "description": "e.g. A-1042"}),
        _tool("refund", "Refund an order, in whole or in part.", ("order_id", "amount_eur", "reason"),
              order_id=_TEXT, amount_eur={"type": "number"}, reason=_TEXT),
        _tool("send_email", "Send a templated email to a customer.", ("to", "template"),
              to=_TEXT, template=_TEXT, refund_id=_TEXT),
        _tool("search_flights", "Search flights between two airports in a month.", ("origin", "destination"),
              origin={"type": "string", "description": "IATA code"}, destination={"type": "string"}, month=_TEXT),
        _tool("weather", "Typical weather of a city in a month.", ("city",), city=_TEXT, month=_TEXT),
        _tool("search_hotels", "Search hotels in a city.", ("city",), city=_TEXT, nights={"type": "integer"}),
        _tool("get_exchange_rate", "The exchange rate between two currencies.", ("from", "to"),
              **{"from": _TEXT, "to": _TEXT}),
        _tool("search", "Search the metrics and incident notes.", ("q",), q=_TEXT, k={"type": "integer"}),
        _tool("read_file", "Read a file of the repository.", (), q=_TEXT, k={"type": "integer"}, input=_TEXT),
        _tool("run_sql", "Run a read-only SQL query.", (), q=_TEXT, k={"type": "integer"}, input=_TEXT),
        _tool("run_shell", "Run a shell command on the host.", ("input",), input=_TEXT),
        _tool("translate", "Translate a text into English.", ("input",), input=_TEXT),
        _tool("calendar_move", "Move a calendar event.", ("input",), input=_TEXT),
        _tool("draft_email", "Draft an email.", ("input",), input=_TEXT),
    )
}  # fmt: skip
"""Every tool a demo agent offered, by name, in the neutral shape."""

_OFFERED: tuple[tuple[str, str | None, str, str, tuple[str, ...]], ...] = (
    (AGENT_STEPS, AGENT_TURN, "openai", "gpt-4.1", ("lookup_order", "refund", "send_email")),
    (EVERY_KIND, None, "anthropic", "claude-sonnet-4-5",
     ("search_flights", "weather", "search_hotels", "get_exchange_rate")),
    (INCIDENT, None, "openai", "gpt-4.1", ("lookup_order", "refund")),
    (LONG, None, "anthropic", "claude-sonnet-4-5", ("search", "read_file", "run_sql")),
    ("demo-sql", None, "openai", "gpt-4.1", ("run_sql",)),
    ("demo-code", None, "openai", "gpt-4.1", ("read_file",)),
    ("demo-research", None, "gemini", "gemini-2.5-flash", ("search",)),
    ("demo-ops", None, "openai", "gpt-4.1", ("run_shell",)),
    ("demo-translate", None, "openai", "gpt-4.1", ("translate",)),
    ("demo-calendar", None, "anthropic", "claude-sonnet-4-5", ("calendar_move",)),
    ("demo-email", None, "openai", "gpt-4.1", ("draft_email",)),
)  # fmt: skip
"""(conversation, turn or None for the whole conversation, provider, model, tools offered)."""


def request_lines(conversations: Iterable[str]) -> list[Json]:
    """The request context lines of those of ``conversations`` that are agent conversations, but ``WITHOUT_TOOLS``
    (and the hostile one): a context line may name only a conversation of its file."""
    present = set(conversations)
    return [
        {
            "traceloupe_request": {
                "conversation_id": conversation, "turn": turn, "provider": provider, "model": model,
                "tools": [TOOLS[name] for name in names], "tool_choice": "auto",
                "params": {"max_tokens": 1024, "temperature": 0.2},
            }
        }
        for conversation, turn, provider, model, names in _OFFERED
        if conversation in present
    ]  # fmt: skip
