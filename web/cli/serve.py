"""``traceloupe serve``: run the dashboard over the store on this machine.

Binds 127.0.0.1 by default. A host that other machines can reach is refused unless the operator
says ``--allow-remote`` (the README's Commands table), and then only once an admin account exists:
every request then needs a login, and the cookies are Secure (HTTPS) unless ``--no-secure-cookies``.
The database is chosen like every store command's: ``--db URL``, else ``$TRACELOUPE_DATABASE_URL``,
else ``./traceloupe.db``.
Forms are signed with the secret every process on that database shares (``web.processes``), so
``--workers N`` processes, or several ``serve`` commands, answer as one server.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import ipaddress
import shlex
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from web.cli import flags
from web.cli.db import add_db_argument
from web.settings import (
    DEFAULT_HEAVY_BUDGET_SECONDS,
    DEFAULT_HEAVY_CONCURRENCY,
    DEFAULT_IMPORT_MIB,
    DEFAULT_INGEST_MIB,
    DEFAULT_MAX_CONNECTIONS,
    LOOPBACK_HOSTS,
)

if TYPE_CHECKING:
    from litestar import Litestar

    from core.store import Store
    from web.settings import Settings


LIMIT_OPTIONS: tuple[tuple[str, Callable[[str], object], object, str, str], ...] = (
    ("--import-max-mib", flags.MIB, DEFAULT_IMPORT_MIB, "N",
     "largest upload the import page accepts, in MiB (default: %(default)s; every other request: 16 MiB)"),
    ("--ingest-max-mib", flags.MIB, DEFAULT_INGEST_MIB, "N",
     "largest OTLP export POST /v1/traces accepts, in MiB, decompressed too (default: %(default)s)"),
    ("--build-seconds", flags.SECONDS, DEFAULT_HEAVY_BUDGET_SECONDS, "S",
     "stop a payload, phases, diff or compare build after S seconds; the page then gives the CLI command "
     "(default: %(default)s)"),
    ("--build-concurrency", flags.CONCURRENCY, DEFAULT_HEAVY_CONCURRENCY, "N",
     "at most N builds and imports at once; more get 503 (default: %(default)s)"),
    ("--max-connections", flags.COUNT, DEFAULT_MAX_CONNECTIONS, "N",
     "at most N open connections; more get 503 (default: %(default)s)"),
)  # fmt: skip
"""The dashboard's limits (``settings_from`` reads each into ``Settings``): flag, parser, default, metavar, help."""


def add_server_arguments(parser: argparse.ArgumentParser, *, port: int = 8000) -> None:
    """The options ``serve`` and ``demo`` share: where to listen and how the dashboard behaves."""
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1, this machine only)")
    parser.add_argument("--port", type=flags.PORT, default=port, help=f"port to listen on (default: {port})")
    parser.add_argument(
        "--allowed-host", dest="allowed_hosts", action="append", default=[], metavar="NAME",
        help="a host name the browser uses to reach the dashboard, besides localhost (repeatable)",
    )  # fmt: skip
    parser.add_argument(
        "--allow-remote", action="store_true",
        help="bind a non-loopback address; needs an admin account (traceloupe users create), and every request a login",
    )  # fmt: skip
    parser.add_argument(
        "--secure-cookies", action=argparse.BooleanOptionalAction, default=None,
        help="mark the login and form cookies Secure, for a dashboard reached over HTTPS (default: on with "
        "--allow-remote, off otherwise)",
    )  # fmt: skip
    parser.add_argument(
        "--attachments-root", type=Path, metavar="DIR", default=None,
        help="the only directory Path attachments are read from (payloads) and served from (downloads)",
    )  # fmt: skip
    for flag, parse, default, metavar, text in LIMIT_OPTIONS:
        parser.add_argument(flag, type=parse, default=default, metavar=metavar, help=text)


def register(parser: argparse.ArgumentParser) -> None:
    """Add the ``serve`` options."""
    add_db_argument(parser)
    parser.add_argument(
        "--create", action="store_true", help="create the SQLite database when it does not exist (default: refuse)"
    )
    add_server_arguments(parser)
    parser.add_argument(
        "--workers", type=flags.WORKERS, default=1, metavar="N",
        help="serve from N processes sharing the port and the database (default: %(default)s)",
    )  # fmt: skip


def is_loopback(host: str) -> bool:
    """True for names and addresses that only this machine can reach."""
    if host.lower() in LOOPBACK_HOSTS:
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
        f"traceloupe {command}: refusing to bind {ns.host}: other machines could reach the dashboard. "
        "Use --host 127.0.0.1, or pass --allow-remote (which needs an admin account and a login on every request).",
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
        ingest_max_bytes=ns.ingest_max_mib * MiB,
        heavy_budget_seconds=ns.build_seconds,
        heavy_concurrency=ns.build_concurrency,
        max_connections=ns.max_connections,
        login_required=ns.allow_remote,
        secure_cookies=ns.allow_remote if ns.secure_cookies is None else ns.secure_cookies,
    )


class PortBusy(OSError):
    """The address is taken: another server (another Traceloupe?) listens there."""


def listen(host: str, port: int, *, reuse_port: bool = False) -> socket.socket:
    """A socket bound and listening on ``host:port``; PortBusy (or OSError) when that cannot be done."""
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    try:
        return socket.create_server((host.strip("[]"), port), family=family, reuse_port=reuse_port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise PortBusy(exc.errno, f"{host}:{port} is busy (another server listens there)") from None
        raise


def listen_group(host: str, port: int, count: int) -> list[socket.socket]:
    """``count`` sockets listening on one port (``SO_REUSEPORT``), one per worker process.

    The kernel spreads new connections over the group evenly. Processes accepting from one shared
    socket do not: the least busy wins each race, and kept-alive connections stay where they landed
    (41 of 50 on one of two workers). The port is first bound alone, so that a port another
    server holds is refused rather than shared with it.
    """
    if port:
        listen(host, port).close()
    first = listen(host, port, reuse_port=True)
    port = first.getsockname()[1]
    return [first, *(listen(host, port, reuse_port=True) for _ in range(count - 1))]


def refuse_without_admin(store: Store, settings: Settings, ns: argparse.Namespace, command: str) -> bool:
    """Print how to make one and return True when logins are required and no enabled admin account exists."""
    from core.accounts import Accounts

    if not settings.login_required or Accounts(store).any_admin():
        return False
    db = ["--db", ns.db] if getattr(ns, "db", None) else []
    create = shlex.join(["traceloupe", "users", "create", "NAME", "--role", "admin", *db])
    print(
        f"traceloupe {command}: --allow-remote needs an admin account first (nobody could log in): {create}",
        file=sys.stderr,
    )
    return True


def serve(
    store: Store, settings: Settings, ns: argparse.Namespace, *, banner: str = "Traceloupe", command: str = "serve"
) -> int:
    """Serve the dashboard over ``store`` until interrupted; the URL is printed once the port is listening.

    With ``ns.workers`` above 1, that many processes serve it (``web.cli.workers``), each opening the store itself.
    With ``--allow-remote`` an admin account must exist (``refuse_without_admin``).
    """
    if refuse_without_admin(store, settings, ns, command):
        return 2
    from web.allocator import tune_allocator
    from web.app import create_app
    from web.cli.terminal import echo
    from web.cli.workers import run_workers
    from web.serving import server_options

    tune_allocator()
    workers: int = getattr(ns, "workers", 1)
    app = create_app(settings, store) if workers == 1 else None
    try:
        sockets = [listen(ns.host, ns.port)] if workers == 1 else listen_group(ns.host, ns.port, workers)
    except PortBusy:
        echo(f"traceloupe: port {ns.port} on {ns.host} is busy; choose another with --port", file=sys.stderr)
        return 2
    except OSError as exc:
        echo(f"traceloupe: cannot listen on {ns.host}:{ns.port}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as held:
        for sock in sockets:
            held.enter_context(sock)
        port = ns.port or sockets[0].getsockname()[1]
        print(f"{banner} on http://{_url_host(ns.host)}:{port}/", file=sys.stderr, flush=True)
        if app is not None:
            run_server(app, sockets[0], host=ns.host, port=port, **server_options(settings))
        else:
            url = store.engine.url.render_as_string(hide_password=False)
            run_workers(url, settings, sockets, host=ns.host, port=port)
    return 0


def run_server(app: Litestar, sock: socket.socket, **options: Any) -> None:
    """Run uvicorn over ``app`` on the socket already listening, until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, **options)).run(sockets=[sock])


def _url_host(host: str) -> str:
    bare = host.strip("[]")
    return f"[{bare}]" if ":" in bare else bare


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
    if ns.workers < 1:
        print("traceloupe serve: --workers must be at least 1", file=sys.stderr)
        return 2
    try:
        settings = settings_from(ns)
    except ValueError as exc:
        print(f"traceloupe serve: {exc}", file=sys.stderr)
        return 2
    create_with = shlex.join(["traceloupe", "serve", *(["--db", ns.db] if ns.db else []), "--create"])
    serving = lambda store: _serve_shared(store, settings, ns)  # noqa: E731
    return run_with_store(ns, serving, create=ns.create, create_with=create_with)


def _serve_shared(store: Store, settings: Settings, ns: argparse.Namespace) -> int:
    """Serve with the CSRF secret every process on this database shares (forms outlive restarts and processes)."""
    from web.processes import with_shared_secret

    try:
        shared = with_shared_secret(settings, store)
    except ValueError as exc:
        print(f"traceloupe serve: {exc}", file=sys.stderr)
        return 2
    return serve(store, shared, ns)
