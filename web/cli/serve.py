"""``traceloupe serve``: run the dashboard over the store on this machine.

Binds 127.0.0.1 by default. The dashboard has no login and shows every trace it
holds, so a host that other machines can reach is refused unless the operator
says ``--allow-remote`` (security.md §2, item 8). The database is chosen like every
store command's: ``--db URL``, else ``$TRACELOUPE_DATABASE_URL``, else ``./traceloupe.db``.
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from web.cli.db import add_db_argument

if TYPE_CHECKING:
    from core.store import Store
    from web.settings import Settings

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
DEFAULT_IMPORT_MIB = 256
DEFAULT_BUILD_SECONDS = 20.0
DEFAULT_BUILD_CONCURRENCY = 4
DEFAULT_MAX_CONNECTIONS = 100


def add_server_arguments(parser: argparse.ArgumentParser, *, port: int = 8000) -> None:
    """The options ``serve`` and ``demo`` share: where to listen and how the dashboard behaves."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=int, default=port, help=f"port to listen on (default: {port})")
    parser.add_argument(
        "--allowed-host", dest="allowed_hosts", action="append", default=[], metavar="NAME",
        help="a host name the browser uses to reach the dashboard, besides localhost (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-remote", action="store_true",
        help="bind a non-loopback address: anyone who can reach it can read every trace",
    )  # fmt: skip
    parser.add_argument(
        "--attachments-root", type=Path, metavar="DIR", default=None,
        help="the only directory Path attachments are read from (payloads) and served from (downloads)",
    )  # fmt: skip
    parser.add_argument(
        "--import-max-mib", type=int, default=DEFAULT_IMPORT_MIB, metavar="N",
        help="largest upload the import page accepts, in MiB (default: %(default)s; every other request: 16 MiB)",
    )  # fmt: skip
    parser.add_argument(
        "--build-seconds", type=float, default=DEFAULT_BUILD_SECONDS, metavar="S",
        help="stop a payload, phases, diff or compare build after S seconds; the page then gives the CLI command "
        "(default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--build-concurrency", type=int, default=DEFAULT_BUILD_CONCURRENCY, metavar="N",
        help="at most N builds and imports at once; more get 503 (default: %(default)s)",
    )  # fmt: skip
    parser.add_argument(
        "--max-connections", type=int, default=DEFAULT_MAX_CONNECTIONS, metavar="N",
        help="at most N open connections; more get 503 (default: %(default)s)",
    )  # fmt: skip


def register(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` options."""
    add_db_argument(parser)
    add_server_arguments(parser)


def is_loopback(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def refuse_public_bind(ns: argparse.Namespace, command: str) -> bool:
    """Print why and return True when the bind address is public and ``--allow-remote`` was not given."""
    if is_loopback(ns.host) or ns.allow_remote:
        return False
    print(
        f"traceloupe {command}: refusing to bind {ns.host}: the dashboard has no login and other machines could "
        "read every trace. Use --host 127.0.0.1, or pass --allow-remote if you mean it.",
        file=sys.stderr,
    )
    return True


def settings_from(ns: argparse.Namespace) -> Settings:
    """The dashboard settings the command-line options describe."""
    from core.reader import MiB
    from web.settings import Settings

    root = ns.attachments_root.expanduser().resolve() if ns.attachments_root is not None else None
    return Settings(
        allowed_hosts=tuple(ns.allowed_hosts),
        attachments_root=root,
        import_max_bytes=ns.import_max_mib * MiB,
        heavy_budget_seconds=ns.build_seconds,
        heavy_concurrency=ns.build_concurrency,
        max_connections=ns.max_connections,
    )


def serve(store: Store, settings: Settings, ns: argparse.Namespace, *, banner: str = "Traceloupe") -> int:
    """Serve the dashboard over ``store`` until interrupted."""
    import uvicorn

    from web.app import create_app
    from web.serving import server_options

    app = create_app(settings, store)
    print(f"{banner} on http://{ns.host}:{ns.port}/", file=sys.stderr, flush=True)
    uvicorn.run(app, host=ns.host, port=ns.port, **server_options(settings))
    return 0


def run(ns: argparse.Namespace) -> int:
    """Check the bind address and the options, open the store, and serve until interrupted."""
    from web.cli.db import run_with_store

    if refuse_public_bind(ns, "serve"):
        return 2
    if ns.attachments_root is not None and not ns.attachments_root.expanduser().is_dir():
        print(f"traceloupe serve: --attachments-root {ns.attachments_root}: not a directory", file=sys.stderr)
        return 2
    if ns.import_max_mib < 16:
        print("traceloupe serve: --import-max-mib must be at least 16", file=sys.stderr)
        return 2
    try:
        settings = settings_from(ns)
    except ValueError as exc:
        print(f"traceloupe serve: {exc}", file=sys.stderr)
        return 2
    return run_with_store(ns, lambda store: serve(store, settings, ns))
