"""``traceloupe serve``: run the dashboard on this machine.

Binds 127.0.0.1 by default. The dashboard has no login and shows every trace it
holds, so a host that other machines can reach is refused unless the operator
says ``--allow-remote`` (security.md §2, item 8). Until the store lands, the
conversations come from the JSON/JSONL files given with ``--trace``.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path

from core import InputError

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def register(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` options."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default: 8000)")
    parser.add_argument(
        "--trace", dest="traces", action="append", default=[], type=Path, metavar="FILE",
        help="a .json/.jsonl file of stored messages to show (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--allowed-host", dest="allowed_hosts", action="append", default=[], metavar="NAME",
        help="a host name the browser uses to reach the dashboard, besides localhost (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-remote", action="store_true",
        help="bind a non-loopback address: anyone who can reach it can read every trace",
    )  # fmt: skip


def is_loopback(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def run(ns: argparse.Namespace) -> int:
    """Check the bind address, load the traces, and serve until interrupted."""
    if not is_loopback(ns.host) and not ns.allow_remote:
        print(
            f"traceloupe serve: refusing to bind {ns.host}: the dashboard has no login and other machines could "
            "read every trace. Use --host 127.0.0.1, or pass --allow-remote if you mean it.",
            file=sys.stderr,
        )
        return 2
    import uvicorn

    from web.app import create_app
    from web.settings import Settings

    settings = Settings(allowed_hosts=tuple(ns.allowed_hosts), trace_files=tuple(ns.traces))
    try:
        app = create_app(settings)
    except InputError as exc:
        print(f"traceloupe serve: {exc}", file=sys.stderr)
        return 2
    print(f"Traceloupe on http://{ns.host}:{ns.port}/", file=sys.stderr)
    uvicorn.run(app, host=ns.host, port=ns.port, log_level="info", server_header=False, proxy_headers=False)
    return 0
