"""``traceloupe stub-provider --port N``: a loopback stand-in for OpenAI, Anthropic and Gemini."""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default 8765; 0 picks a free one)")


def run(ns: argparse.Namespace) -> int:
    from web.stub_provider import StubServer

    try:
        server = StubServer(ns.port)
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{ns.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    base = server.base_url
    print(f"stub provider on {base}", file=sys.stderr)
    print(f"  OPENAI_BASE_URL={base}/v1  ANTHROPIC_BASE_URL={base}  GEMINI_BASE_URL={base}", file=sys.stderr)
    print("  models: stub-error-500, stub-error-429, stub-slow-<s>, stub-tool, stub-malformed", file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
