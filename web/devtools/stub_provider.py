"""A scriptable loopback stand-in for the LLM providers, so replays run with no key and no network.

It speaks the three wire formats the official SDKs send (OpenAI chat completions, which
Zhipu and Doubao share; Anthropic messages; Gemini generateContent), records every
request exactly as received, and answers like the provider would: a text reply, a tool
call, an HTTP error with the provider's error body, a 429 with ``retry-after``, a slow
answer, a malformed one, or a redirect (a scripted 3xx with its ``location`` header).

What it answers is chosen per request, first match wins:

1. the next scripted reply queued with ``POST /__stub/script`` (a JSON list of Reply objects);
2. the next step scripted for requests whose body contains a text, with ``POST /__stub/script``
   ``{"match": TEXT, "steps": [Reply, ...]}``: the k-th request whose JSON body holds TEXT gets the
   k-th step, so a suite replaying many conversations at once can script each one (TEXT is a
   marker in that conversation's messages); the first script whose TEXT matches answers;
3. the next step scripted for the request's model with ``POST /__stub/script``
   ``{"model": M, "steps": [Reply, ...]}``: the k-th request for M gets the k-th step (tool calls,
   a text, or an error status), so a step replay can be shown matching, diverging at step 2 or
   failing; each step's tool calls get ids of their own (``call_s<k>_<i>``) unless it names them;
   A step may be a judge's verdict, ``{"verdict": "same" | "different", "reasoning": TEXT}``: its reply is
   the text a judge answers in the documented format (``core.replay.answers.judge_reply_text``), so the
   stub can stand in for a ``--compare judge:PROVIDER/MODEL`` model (scripted by its model or a match);
4. the step of a turn scripted for the model with ``POST /__stub/script``
   ``{"model": M, "match": TEXT, "turn": [Reply, ...]}``: a request whose messages hold TEXT gets the reply
   of the step it stands at (``web.devtools.stub_turns``); never consumed, so a replay can be repeated;
5. the model name: ``stub-error-500``, ``stub-error-429``, ``stub-slow-<seconds>``,
   ``stub-tool``, ``stub-malformed``; any other model gets a text reply.

In its default, strict mode it first refuses what the real APIs refuse, with their status and message
(``web.devtools.stub_refusals``: tool blocks without tools, a tool choice naming no defined tool, tool results
without their calls, missing required fields), and answers a scripted call of a tool the request did not
define (or forbade with a "none" tool choice) as text, as a real model would. ``StubServer(strict=False)``
(``traceloupe stub-provider --lenient``) answers every request as scripted.

``GET /__stub/requests`` lists what was received (path, headers, body); ``DELETE`` clears it.
``GET /__stub/refusals`` lists the refused requests (path, status, message).
``GET /__stub/stats`` gives the requests answered and the most ever in flight at once (a concurrency limit's proof).
It binds to loopback only and never forwards anything.
"""

from __future__ import annotations

import itertools
import json
import select
import socket
import threading
import time
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from web.devtools.stub_refusals import refusal, tool_names
from web.devtools.stub_turns import step_of
from web.settings import LOOPBACK_HOSTS

Dialect = Literal["openai", "openai-responses", "anthropic", "gemini"]
MAX_BODY = 64 * 1024 * 1024
_ANSWERS = itertools.count(1)
"""Numbers each answer's ids, unique as the real APIs' (OpenLLMetry keys the Responses calls it records by id)."""


@dataclass
class Reply:
    """One scripted answer: a status, then either text and tool calls or a raw body, after a delay."""

    status: int = 200
    text: str = "This is the stub provider's reply."
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # {"name": str, "arguments": dict}
    reasoning: str | None = None
    delay: float = 0.0
    retry_after: int | None = None
    raw_body: str | None = None  # sent verbatim (a malformed answer)
    headers: dict[str, str] = field(default_factory=dict)  # extra response headers (a redirect's location)
    thought_signature: str | None = None  # Gemini: sent on the first functionCall part, as Gemini 3 does
    call_ids: list[str] | None = None  # the tool calls' ids (default: call_stub_<i>, toolu_stub_<i>)

    def call_id(self, i: int, default: str) -> str:
        """The id of tool call ``i``: the scripted one, else ``default``."""
        return self.call_ids[i] if self.call_ids is not None and i < len(self.call_ids) else default


@dataclass
class Recorded:
    """A request as received."""

    dialect: Dialect
    path: str
    headers: dict[str, str]  # names in lower case
    body: Any


class StubState:
    """The queue of scripted replies and the log of received requests; shared by handler threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.script: list[Reply] = []
        self.steps: dict[str, list[Reply]] = {}
        self.matched: dict[str, list[Reply]] = {}
        self.turns: dict[str, dict[str, list[Reply]]] = {}
        """Turn scripts by model, then by marker (``script_turn``)."""
        self.requests: list[Recorded] = []
        self.refusals: list[dict[str, Any]] = []
        """The requests refused in strict mode: path, status and the provider's message."""
        self.in_flight = 0
        self.peak_in_flight = 0

    def next_reply(self, model: str, body_text: str = "", dialect: Dialect | None = None, body: Any = None) -> Reply:
        with self.lock:
            if self.script:
                return self.script.pop(0)
            for text, replies in self.matched.items():
                if replies and text in body_text:
                    return replies.pop(0)
            if self.steps.get(model):
                return self.steps[model].pop(0)
            turns = dict(self.turns.get(model, {}))
        found = step_of(dialect, body, turns) if turns and dialect is not None else None
        if found is not None and found[1] < len(turns[found[0]]):
            return turns[found[0]][found[1]]
        return reply_for_model(model)

    def script_turn(self, model: str, match: str, steps: list[dict[str, Any]]) -> int:
        """Script the steps of the turn whose user message holds ``match``, for ``model``; how many steps."""
        replies = _step_replies(steps)
        with self.lock:
            self.turns.setdefault(model, {})[match] = replies
        return len(replies)

    def script_steps(self, model: str, steps: list[dict[str, Any]], *, match: str | None = None) -> int:
        """Queue the replies of a step script for ``model`` (or for bodies holding ``match``); how many are queued."""
        replies = _step_replies(steps)
        with self.lock:
            queue = self.matched.setdefault(match, []) if match is not None else self.steps.setdefault(model, [])
            queue.extend(replies)
            return len(queue)


def _judge_step(item: dict[str, Any]) -> dict[str, Any]:
    """A scripted judge's verdict as the reply text a judge sends (the rest of the step as given)."""
    from core.replay.answers import judge_reply_text

    rest = {k: v for k, v in item.items() if k not in ("verdict", "reasoning")}
    return {**rest, "text": judge_reply_text(str(item["verdict"]), str(item.get("reasoning") or ""))}


def _step_replies(steps: list[dict[str, Any]]) -> list[Reply]:
    """A step script's replies; each step's tool calls get ids of their own (``call_s<k>_<i>``) unless named."""
    replies = []
    for k, item in enumerate(steps, start=1):
        reply = Reply(**_judge_step(item)) if "verdict" in item else Reply(**item)
        if reply.call_ids is None:
            reply.call_ids = [f"call_s{k}_{i}" for i in range(len(reply.tool_calls))]
        replies.append(reply)
    return replies


def reply_for_model(model: str) -> Reply:
    """The built-in behaviour named by a model name (see the module docstring)."""
    if model.startswith("stub-error-"):
        code = int(model.rsplit("-", 1)[1])
        return Reply(status=code, retry_after=1 if code == 429 else None)
    if model.startswith("stub-slow-"):
        return Reply(delay=float(model.rsplit("-", 1)[1]))
    if model == "stub-tool":
        return Reply(text="", tool_calls=[{"name": "search", "arguments": {"query": "stub"}}])
    if model == "stub-malformed":
        return Reply(raw_body="{not json")
    return Reply()


def dialect_of(path: str) -> Dialect | None:
    """Which wire format a request path belongs to."""
    if path.endswith("/chat/completions"):
        return "openai"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if ":generateContent" in path:
        return "gemini"
    return None


def model_of(dialect: Dialect, path: str, body: Any) -> str:
    if dialect == "gemini":
        return path.rsplit("/", 1)[-1].split(":", 1)[0]
    return str(body.get("model", "")) if isinstance(body, dict) else ""


def success_body(dialect: Dialect, model: str, reply: Reply) -> dict[str, Any]:
    """A provider-shaped success response carrying the reply's text, reasoning and tool calls."""
    usage_in, usage_out = 12, max(1, len(reply.text) // 4)
    n = next(_ANSWERS)
    if dialect == "openai":
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {"id": reply.call_id(i, f"call_stub_{i}"), "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
                for i, c in enumerate(reply.tool_calls)
            ]  # fmt: skip
        return {
            "id": f"chatcmpl-stub{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
            ],
            "usage": {"prompt_tokens": usage_in, "completion_tokens": usage_out, "total_tokens": usage_in + usage_out},
        }
    if dialect == "openai-responses":
        return _responses_body(model, reply, usage_in, usage_out, n)
    if dialect == "anthropic":
        content: list[dict[str, Any]] = []
        if reply.reasoning:
            content.append({"type": "thinking", "thinking": reply.reasoning, "signature": "stub-signature"})
        if reply.text:
            content.append({"type": "text", "text": reply.text})
        content += [
            {
                "type": "tool_use",
                "id": reply.call_id(i, f"toolu_stub_{i}"),
                "name": c["name"],
                "input": c.get("arguments", {}),
            }
            for i, c in enumerate(reply.tool_calls)
        ]
        return {
            "id": f"msg_stub{n}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": usage_in, "output_tokens": usage_out},
        }
    parts: list[dict[str, Any]] = []
    if reply.reasoning:
        parts.append({"text": reply.reasoning, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    for i, c in enumerate(reply.tool_calls):
        call: dict[str, Any] = {"name": c["name"], "args": c.get("arguments", {})}
        if reply.call_ids is not None and i < len(reply.call_ids):
            call["id"] = reply.call_ids[i]  # Gemini 3 sends an id with each call
        part: dict[str, Any] = {"functionCall": call}
        if i == 0 and reply.thought_signature:
            part["thoughtSignature"] = reply.thought_signature
        parts.append(part)
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {
            "promptTokenCount": usage_in,
            "candidatesTokenCount": usage_out,
            "totalTokenCount": usage_in + usage_out,
        },
        "modelVersion": model,
    }


def _responses_body(model: str, reply: Reply, usage_in: int, usage_out: int, n: int) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if reply.reasoning:
        output.append(
            {"type": "reasoning", "id": f"rs_stub{n}", "summary": [{"type": "summary_text", "text": reply.reasoning}]}
        )
    if reply.text:
        output.append({
            "type": "message", "id": f"msg_stub{n}", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
        })  # fmt: skip
    output += [
        {"type": "function_call", "id": f"fc_stub{n}_{i}", "call_id": reply.call_id(i, f"call_stub_{i}"),
         "name": c["name"], "arguments": json.dumps(c.get("arguments", {})), "status": "completed"}
        for i, c in enumerate(reply.tool_calls)
    ]  # fmt: skip
    return {
        "id": f"resp_stub{n}", "object": "response", "created_at": int(time.time()), "status": "completed",
        "model": model, "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        "usage": {
            "input_tokens": usage_in, "output_tokens": usage_out, "total_tokens": usage_in + usage_out,
            "input_tokens_details": {"cached_tokens": 0}, "output_tokens_details": {"reasoning_tokens": 0},
        },
    }  # fmt: skip


def error_body(dialect: Dialect, status: int, message: str | None = None) -> dict[str, Any]:
    """The error JSON each provider sends with a failing status (a 400's ``message`` says what was refused)."""
    if message is None:
        message = "Rate limit reached (stub)" if status == 429 else f"The stub provider failed with HTTP {status}"
    invalid = status == 400
    if dialect == "anthropic":
        kind = "invalid_request_error" if invalid else "rate_limit_error" if status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    if dialect == "gemini":
        state = "INVALID_ARGUMENT" if invalid else "RESOURCE_EXHAUSTED" if status == 429 else "INTERNAL"
        return {"error": {"code": status, "message": message, "status": state}}
    kind = "invalid_request_error" if invalid else "rate_limit_exceeded" if status == 429 else "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None if invalid else kind}}


def as_text_unless_defined(reply: Reply, defined: set[str] | None) -> Reply:
    """``reply``, or when it calls a tool the request did not define, the text a model answers instead."""
    if not reply.tool_calls or all(defined is not None and c.get("name") in defined for c in reply.tool_calls):
        return reply
    missing = [str(c.get("name")) for c in reply.tool_calls if defined is None or c.get("name") not in defined]
    text = reply.text or f"I cannot call {', '.join(missing)}: no such tool was offered to me."
    return replace(reply, text=text, tool_calls=[], call_ids=None)


class StubHandler(BaseHTTPRequestHandler):
    """Routes one request; the server's ``state`` holds the script and the log."""

    server: StubServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """The headers and the body go out in two writes: with Nagle's algorithm the body waited for the client's
    delayed ACK of the headers (40 ms) on every request of a kept-alive connection, which no real provider adds."""

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: request lines would carry nothing useful and the tests read the log instead."""

    def do_GET(self) -> None:
        if self.path == "/__stub/requests":
            with self.server.state.lock:
                items = [r.__dict__ for r in self.server.state.requests]
            self._send(200, items)
        elif self.path == "/__stub/refusals":
            with self.server.state.lock:
                refused = list(self.server.state.refusals)
            self._send(200, refused)
        elif self.path == "/__stub/stats":
            state = self.server.state
            with state.lock:
                stats = {"requests": len(state.requests), "peak_in_flight": state.peak_in_flight}
            self._send(200, stats)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_DELETE(self) -> None:
        if self.path == "/__stub/requests":
            with self.server.state.lock:
                self.server.state.requests.clear()
                self.server.state.refusals.clear()
                self.server.state.script.clear()
                self.server.state.steps.clear()
                self.server.state.matched.clear()
                self.server.state.peak_in_flight = 0
            self._send(200, {"cleared": True})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        if length > MAX_BODY:
            self._send(413, {"error": {"message": "request body too large for the stub"}})
            return
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            self._send(400, {"error": {"message": "the request body is not JSON"}})
            return
        if self.path == "/__stub/script" and isinstance(body, dict) and "turn" in body:
            count = self.server.state.script_turn(str(body.get("model", "")), str(body["match"]), list(body["turn"]))
            self._send(200, {"steps": count})
            return
        if self.path == "/__stub/script" and isinstance(body, dict) and "steps" in body:
            match = body.get("match")
            queued = self.server.state.script_steps(
                str(body.get("model", "")), list(body["steps"]), match=None if match is None else str(match)
            )
            self._send(200, {"queued": queued})
            return
        if self.path == "/__stub/script":
            replies = [Reply(**item) for item in (body if isinstance(body, list) else [body])]
            with self.server.state.lock:
                self.server.state.script.extend(replies)
            self._send(200, {"queued": len(replies)})
            return
        path = self.path.split("?", 1)[0]
        dialect = dialect_of(path)
        if dialect is None:
            self._send(404, {"error": {"message": f"the stub does not serve {path}"}})
            return
        with self.server.state.lock:
            self.server.state.requests.append(
                Recorded(dialect, path, {k.lower(): v for k, v in self.headers.items()}, body)
            )
        state = self.server.state
        if self.server.strict:
            refused = refusal(dialect, body, model_of(dialect, path, body))
            if refused is not None:
                status, message = refused
                with state.lock:
                    state.refusals.append({"path": path, "status": status, "message": message})
                self._send(status, error_body(dialect, status, message))
                return
        model = model_of(dialect, path, body)
        reply = state.next_reply(model, raw.decode("utf-8", "replace"), dialect, body)
        if self.server.strict:
            reply = as_text_unless_defined(reply, tool_names(dialect, body))
        with state.lock:
            state.in_flight += 1
            state.peak_in_flight = max(state.peak_in_flight, state.in_flight)
        try:
            self._answer(dialect, model, reply)
        finally:
            with state.lock:
                state.in_flight -= 1

    def _answer(self, dialect: Dialect, model: str, reply: Reply) -> None:
        if reply.delay and not self._wait_for_client(reply.delay):
            return
        extra = {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else {}
        extra.update(reply.headers)
        if reply.raw_body is not None:
            self._send_raw(reply.status, reply.raw_body.encode(), extra)
        elif reply.status >= 400:
            self._send(reply.status, error_body(dialect, reply.status), extra)
        elif reply.status >= 300:
            self._send(reply.status, {}, extra)
        else:
            self._send(reply.status, success_body(dialect, model, reply))

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(payload).encode(), headers)

    def _wait_for_client(self, seconds: float) -> bool:
        """Wait ``seconds`` before answering; False as soon as the client hangs up (a killed worker's call then
        stops counting as in flight, as at a real provider)."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], left)
            if readable:
                if not self.connection.recv(1, socket.MSG_PEEK):
                    return False
                time.sleep(min(left, 0.01))  # bytes of a next request wait their turn
        return True

    def _send_raw(self, status: int, data: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)


class StubServer(ThreadingHTTPServer):
    """The stub's HTTP server: loopback only, daemon threads, one shared state."""

    daemon_threads = True
    request_queue_size = 128
    """socketserver's default backlog is 5: a suite's 32 jobs connecting at once overflowed it, and the
    dropped connections waited out a 1 s SYN retry (or were reset), which no real provider would cause."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", *, strict: bool = True) -> None:
        if host not in LOOPBACK_HOSTS:
            raise ValueError("the stub provider binds to loopback only")
        self.state = StubState()
        self.strict = strict
        """Refuse what the real APIs refuse, and answer calls of undefined tools as text (the module docstring)."""
        super().__init__((host, port), StubHandler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that gave up (a timeout test) is normal here, not worth a traceback."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``: add ``/v1`` for OpenAI-style clients."""
        return f"http://127.0.0.1:{self.server_address[1]}"

    def start(self) -> StubServer:
        """Serve in a daemon thread and return self."""
        threading.Thread(target=self.serve_forever, name="stub-provider", daemon=True).start()
        return self
