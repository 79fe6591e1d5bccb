"""What the stub provider refuses in its default (strict) mode: the requests the real APIs answer with a 4xx.

Each refusal carries the provider's status and message, so a test against the stub fails where production
would. The messages are the providers' own, as quoted in public reports:

* Anthropic: "Requests which include `tool_use` or `tool_result` blocks must define tools." (issue 26);
  "unexpected `tool_use_id` found in `tool_result` blocks" (BerriAI/litellm#19061); "`tool_use` ids were found
  without `tool_result` blocks immediately after" (docs/providers.md section 3); "max_tokens: Field required".
* OpenAI: "'tool_choice' is only allowed when 'tools' are specified." (writer/writer-framework#1013);
  "messages with role 'tool' must be a response to a preceeding message with 'tool_calls'" (sic);
  "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'";
  Responses: "No tool call found for function call output with call_id ...".
* Gemini: "Please ensure that function response turn comes immediately after a function call turn."

A tool choice naming an undefined tool is refused by each provider; its wording here is the stub's own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from web.devtools.stub_media import anthropic_media, gemini_file_uris, gemini_media, openai_media

StubDialect = Literal["openai", "openai-responses", "anthropic", "gemini"]
Refusal = tuple[int, str]
"""An HTTP status and the provider's error message."""

BAD_REQUEST = 400
TOOLS_REQUIRED = "Requests which include `tool_use` or `tool_result` blocks must define tools."


def refusal(dialect: StubDialect, body: Any, model: str = "") -> Refusal | None:
    """Why the real API would refuse ``body`` (sent to ``model``: Gemini names it in the path), or None when it
    would take it."""
    if not isinstance(body, dict):
        return BAD_REQUEST, "the request body must be a JSON object"
    refused = CHECKS[dialect](body) or MEDIA_CHECKS[dialect](body)
    return refused or (gemini_file_uris(body, model) if dialect == "gemini" else None)


def tool_names(dialect: StubDialect, body: Any) -> set[str] | None:
    """The names of the tools a request defines (None when it defines none, or forbids calling them)."""
    if not isinstance(body, dict):
        return None
    if dialect == "gemini":
        names = {
            str(d.get("name"))
            for tool in _list(body.get("tools"))
            for d in _list(tool.get("functionDeclarations") if isinstance(tool, dict) else None)
            if isinstance(d, dict)
        }
        mode = ((body.get("toolConfig") or {}).get("functionCallingConfig") or {}).get("mode")
        return names if names and mode != "NONE" else None
    tools = [t for t in _list(body.get("tools")) if isinstance(t, dict)]
    if dialect == "openai":
        names = {str((t.get("function") or {}).get("name")) for t in tools}
    else:
        names = {str(t.get("name")) for t in tools}
    choice = body.get("tool_choice")
    forbidden = choice == "none" or (isinstance(choice, dict) and choice.get("type") == "none")
    return names if names and not forbidden else None


def _anthropic(body: dict[str, Any]) -> Refusal | None:
    for key in ("model", "max_tokens", "messages"):
        if key not in body:
            return BAD_REQUEST, f"{key}: Field required"
    names = tool_names("anthropic", body) or set()
    defined = bool(_list(body.get("tools")))
    asked: set[str] = set()
    turns = _list(body["messages"])
    for i, turn in enumerate(turns):
        blocks = [b for b in _list(turn.get("content") if isinstance(turn, dict) else None) if isinstance(b, dict)]
        kinds = {b.get("type") for b in blocks}
        if not defined and kinds & {"tool_use", "tool_result"}:
            return BAD_REQUEST, TOOLS_REQUIRED
        for j, block in enumerate(blocks):
            if block.get("type") == "tool_result" and block.get("tool_use_id") not in asked:
                return BAD_REQUEST, (
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                    f"{block.get('tool_use_id')}. Each `tool_result` block must have a corresponding `tool_use` "
                    "block in the previous message."
                )
        uses = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
        if uses and i + 1 < len(turns):
            following = turns[i + 1].get("content") if isinstance(turns[i + 1], dict) else None
            answered = {b.get("tool_use_id") for b in _list(following) if isinstance(b, dict)}
            missing = [u for u in uses if u not in answered]
            if missing:
                return BAD_REQUEST, (
                    f"messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                    f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` block "
                    "in the next message."
                )
        asked = set(uses)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool") and not defined:
        return BAD_REQUEST, "tool_choice: a tool choice that forces tool use requires tools"
    if isinstance(choice, dict) and choice.get("type") == "tool" and choice.get("name") not in names:
        return BAD_REQUEST, f"tool_choice.name: tool {choice.get('name')!r} is not among the tools defined"
    return None


def _openai_choice(body: dict[str, Any], names: set[str], nested: bool) -> Refusal | None:
    if "tool_choice" not in body:
        return None
    if not _list(body.get("tools")):
        return BAD_REQUEST, "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified."
    choice = body["tool_choice"]
    if isinstance(choice, dict):
        named = choice.get("function") if nested else choice
        name = named.get("name") if isinstance(named, dict) else None
        if name not in names:
            return BAD_REQUEST, f"Invalid value for 'tool_choice': function {name!r} is not among the 'tools'."
    return None


def _chat(body: dict[str, Any]) -> Refusal | None:
    for key in ("model", "messages"):
        if key not in body:
            return BAD_REQUEST, f"Missing required parameter: '{key}'."
    names = {str((t.get("function") or {}).get("name")) for t in _list(body.get("tools")) if isinstance(t, dict)}
    refused = _openai_choice(body, names, nested=True)
    if refused is not None:
        return refused
    open_calls: list[str] = []
    for msg in _list(body["messages"]):
        if not isinstance(msg, dict):
            continue
        if msg.get("role") == "tool":
            if msg.get("tool_call_id") not in open_calls:
                return BAD_REQUEST, (
                    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
                    "with 'tool_calls'."
                )
            open_calls.remove(msg["tool_call_id"])
            continue
        if open_calls:
            return BAD_REQUEST, _unanswered(open_calls)
        open_calls = [str(c.get("id")) for c in _list(msg.get("tool_calls")) if isinstance(c, dict)]
    if open_calls:
        return BAD_REQUEST, _unanswered(open_calls)
    return None


def _unanswered(ids: list[str]) -> str:
    return (
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
        f"'tool_call_id'. The following tool_call_ids did not have response messages: {', '.join(ids)}"
    )


def _responses(body: dict[str, Any]) -> Refusal | None:
    if "model" not in body:
        return BAD_REQUEST, "Missing required parameter: 'model'."
    names = {str(t.get("name")) for t in _list(body.get("tools")) if isinstance(t, dict)}
    refused = _openai_choice(body, names, nested=False)
    if refused is not None:
        return refused
    calls: set[str] = set()
    for item in _list(body.get("input")):
        if not isinstance(item, dict):
            continue
        if item.get("type") == "function_call":
            calls.add(str(item.get("call_id")))
        elif item.get("type") == "function_call_output" and str(item.get("call_id")) not in calls:
            return BAD_REQUEST, f"No tool call found for function call output with call_id {item.get('call_id')}."
    return None


def _gemini(body: dict[str, Any]) -> Refusal | None:
    contents = _list(body.get("contents"))
    if not contents:
        return BAD_REQUEST, "* GenerateContentRequest.contents: contents is not specified"
    declared = {
        str(d.get("name"))
        for tool in _list(body.get("tools"))
        for d in _list(tool.get("functionDeclarations") if isinstance(tool, dict) else None)
        if isinstance(d, dict)
    }
    config = (body.get("toolConfig") or {}).get("functionCallingConfig") or {}
    if config.get("mode") == "ANY" and not declared:
        return BAD_REQUEST, "Function calling config is set without function_declarations."
    for name in _list(config.get("allowedFunctionNames")):
        if name not in declared:
            return BAD_REQUEST, f"allowed_function_names: {name!r} is not among the function_declarations."
    previous_calls = False
    for content in contents:
        parts = [p for p in _list(content.get("parts") if isinstance(content, dict) else None) if isinstance(p, dict)]
        responds = any("functionResponse" in p for p in parts)
        if responds and not previous_calls:
            return BAD_REQUEST, (
                "Please ensure that function response turn comes immediately after a function call turn."
            )
        previous_calls = any("functionCall" in p for p in parts)
    return None


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


CHECKS: dict[StubDialect, Callable[[dict[str, Any]], Refusal | None]] = {
    "anthropic": _anthropic,
    "openai": _chat,
    "openai-responses": _responses,
    "gemini": _gemini,
}
# The media rules (web/devtools/stub_media.py), checked once the turn rules pass.
MEDIA_CHECKS: dict[StubDialect, Callable[[dict[str, Any]], Refusal | None]] = {
    "anthropic": anthropic_media,
    "openai": lambda body: openai_media(body, "messages"),
    "openai-responses": lambda body: openai_media(body, "input"),
    "gemini": gemini_media,
}
