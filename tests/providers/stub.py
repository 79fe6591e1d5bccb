"""A loopback stub of the providers' HTTP APIs that records the exact body each SDK client sends.

stdlib only: ``ThreadingHTTPServer`` on ``127.0.0.1:0``; each POST is recorded (path, headers,
JSON body) and answered with a minimal canned reply for its route so the SDK call completes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_REPLY = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 0,
    "model": "stub",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
}
RESPONSES_REPLY = {
    "id": "resp_1",
    "object": "response",
    "created_at": 0,
    "model": "stub",
    "status": "completed",
    "output": [
        {
            "type": "message",
            "id": "msg_1",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "ok", "annotations": []}],
        }
    ],
    "parallel_tool_calls": True,
    "tool_choice": "auto",
    "tools": [],
}
ANTHROPIC_REPLY = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "model": "stub",
    "content": [{"type": "text", "text": "ok"}],
    "stop_reason": "end_turn",
    "stop_sequence": None,
    "usage": {"input_tokens": 1, "output_tokens": 1},
}
GEMINI_REPLY = {"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}


def canned(path: str) -> dict[str, Any]:
    """The reply for a route."""
    if path.endswith("/chat/completions"):
        return CHAT_REPLY
    if path.endswith("/responses"):
        return RESPONSES_REPLY
    if path.endswith("/messages"):
        return ANTHROPIC_REPLY
    if ":generateContent" in path:
        return GEMINI_REPLY
    return {"error": f"no stub route for {path}"}


@dataclass
class Captured:
    """What the stub received: one entry per request."""

    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)

    @property
    def last_body(self) -> Any:
        assert self.requests, "the SDK sent nothing"
        return self.requests[-1][2]

    @property
    def last_path(self) -> str:
        return self.requests[-1][0]


@contextmanager
def stub_server() -> Iterator[tuple[str, Captured]]:
    """Run the stub; yields its base URL (``http://127.0.0.1:PORT``) and what it captures."""
    captured = Captured()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("content-length", "0"))
            raw = self.rfile.read(length)
            captured.requests.append((self.path, dict(self.headers), json.loads(raw) if raw else None))
            reply = json.dumps(canned(self.path)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", captured
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
