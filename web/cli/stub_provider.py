"""``traceloupe stub-provider --port N``: a loopback stand-in for OpenAI, Anthropic and Gemini."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from web.cli import flags


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=flags.PORT, default=8765, help="port on 127.0.0.1 (default 8765; 0 picks a free one)"
    )
    parser.add_argument(
        "--script",
        metavar="FILE",
        help='step scripts as JSON, {"MODEL": [step, ...]}: the k-th request for MODEL gets step k '
        '(e.g. {"tool_calls": [{"name": "search", "arguments": {}}]}, {"text": "done"} or {"status": 500})',
    )

    parser.add_argument(
        "--lenient",
        action="store_true",
        help="answer every request as scripted, even one the real APIs refuse (default: refuse it as they do)",
    )


def run(ns: argparse.Namespace) -> int:
    from web.devtools.stub_provider import StubServer

    try:
        server = StubServer(ns.port, strict=not ns.lenient)
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{ns.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    if ns.script is not None:
        try:
            scripts = json.loads(Path(ns.script).read_text(encoding="utf-8"))
            if not isinstance(scripts, dict) or not all(isinstance(v, list) for v in scripts.values()):
                raise ValueError("expected an object of model name -> list of steps")
            for model, steps in scripts.items():
                server.state.script_steps(model, steps)
        except (OSError, ValueError, TypeError) as exc:
            server.server_close()
            print(f"error: cannot read the step script {ns.script}: {exc}", file=sys.stderr)
            return 1
    base = server.base_url
    print(f"stub provider on {base}", file=sys.stderr)
    print(f"  OPENAI_BASE_URL={base}/v1  ANTHROPIC_BASE_URL={base}  GEMINI_BASE_URL={base}", file=sys.stderr)
    print("  models: stub-error-500, stub-error-429, stub-slow-<s>, stub-tool, stub-malformed", file=sys.stderr)
    print('  step scripts: --script FILE, or POST /__stub/script {"model": M, "steps": [...]}', file=sys.stderr)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
