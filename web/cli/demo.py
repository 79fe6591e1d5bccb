"""``traceloupe demo``: a demo database, a stub provider, and the dashboard over both, in one command.

1. Writes the demo data set (``web.devtools.demo_data``: every message kind, a TFROB-299
   incident, a 2,000-record trace, hostile content) as JSONL plus its attachments,
   and imports it through the store, into a temporary folder (removed on exit) or
   into ``--db PATH`` (kept; an existing demo database is reused as it is).
2. Starts the stub provider (``web.devtools.stub_provider``) on a free loopback port and points
   this process's provider variables at it: every ``*_BASE_URL`` at the stub and every
   ``*_API_KEY`` at a placeholder, so a replay from the dashboard reaches the stub and
   never a real provider, whatever keys the shell holds.
3. Records the demo's two step runs of its agent turn (``web.devtools.demo_steps``: one matched,
   one diverged), made by the step replay engine against the stub scripted per step.
4. Serves the dashboard (loopback unless ``--allow-remote``) and prints its URL once it listens.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from web.cli.serve import PortBusy, add_server_arguments, listen, refuse_public_bind, serve, settings_from

PLACEHOLDER_KEY = "traceloupe-demo-placeholder-key"
DEFAULT_PORT = 8000
"""Tried first when ``--port`` is not given; a busy one gives way to any free port (the URL says which)."""


def register(parser: argparse.ArgumentParser) -> None:
    """``--port`` and the server options; ``--db`` keeps the demo database."""
    parser.add_argument(
        "--db", type=Path, metavar="PATH", default=None,
        help="keep the demo SQLite database here (e.g. ./traceloupe-demo.db); default: a temporary folder",
    )  # fmt: skip
    add_server_arguments(parser)
    parser.set_defaults(port=None)  # an explicit --port is used or refused as busy; without it, any free port


def point_providers_at(base_url: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict[str, str]:
    """Set every provider's base URL to the stub and its key to a placeholder; returns what was set."""
    from core.providers import all_providers

    values: dict[str, str] = {}
    for provider in all_providers():
        values[provider.base_url_var] = base_url + provider.wire.base_url_suffix
        values[provider.key_var] = PLACEHOLDER_KEY
    environ.update(values)
    return values


def free_port(preferred: int) -> int:
    """``preferred`` when it is free on 127.0.0.1, else (or for 0) any free port (used when --port is not given)."""
    with socket.socket() as sock:
        try:
            if preferred:
                sock.bind(("127.0.0.1", preferred))
                return preferred
        except OSError:
            pass
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_busy(host: str, port: int) -> bool:
    """True when another server already listens on ``host:port``."""
    try:
        listen(host, port).close()
    except PortBusy:
        return True
    except OSError:
        return False  # serve reports it in its own words
    return False


def prepare(db: Path | None, temporary: Path) -> tuple[Path, Path]:
    """The demo database and its attachments root: built in ``temporary`` without ``--db``, else kept at ``db``."""
    from web.devtools import demo_data

    if db is None:
        demo = demo_data.build(temporary)
        return demo.db, demo.attachments
    db = db.expanduser().resolve()
    attachments = db.with_name(db.stem + "-attachments")
    if not db.exists():
        print(f"traceloupe demo: creating the demo database at {db}", file=sys.stderr, flush=True)
        db.parent.mkdir(parents=True, exist_ok=True)
        demo_data.build(temporary, db=db, attachments=attachments)
    elif not attachments.is_dir():
        demo_data.write_attachments(attachments)
    return db, attachments


@contextmanager
def sigterm_as_exit() -> Iterator[None]:
    """Make SIGTERM (``kill``) unwind like Ctrl+C does, so the temporary folder is removed either way.

    uvicorn shuts down on SIGTERM and then raises it again for the handler it found; the default
    handler would end the process on the spot, before any ``finally`` runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(ns: argparse.Namespace) -> int:
    """Build the demo, start the stub provider, serve the dashboard until interrupted (Ctrl+C or SIGTERM)."""
    from core.store import Store
    from web.devtools.demo_steps import script_turns, seed_step_runs
    from web.devtools.stub_provider import StubServer

    if refuse_public_bind(ns, "demo"):
        return 2
    if ns.allow_remote:  # said now: the demo's temporary database can hold no admin account to log in with
        print(
            "traceloupe demo: --allow-remote needs an admin account, and the demo's database is temporary: "
            "serve a store of your own instead (traceloupe users create NAME --role admin --db FILE, then "
            "traceloupe serve --db FILE --allow-remote)",
            file=sys.stderr,
        )
        return 2
    if ns.port is not None and port_is_busy(ns.host, ns.port):  # say so now, not after building the demo
        print(f"traceloupe: port {ns.port} on {ns.host} is busy; choose another with --port", file=sys.stderr)
        return 2
    with sigterm_as_exit():
        temporary = Path(tempfile.mkdtemp(prefix="traceloupe-demo-"))
        try:
            print("traceloupe demo: building the demo database…", file=sys.stderr, flush=True)
            db, attachments = prepare(ns.db, temporary)
            if ns.port is None:
                ns.port = free_port(DEFAULT_PORT)
            stub = StubServer(0).start()
            try:
                point_providers_at(stub.base_url)
                ns.attachments_root = attachments
                print(
                    f"traceloupe demo: database {db}\n"
                    f"traceloupe demo: stub provider on {stub.base_url} (every *_BASE_URL points there, every "
                    f"*_API_KEY is a placeholder: replays reach the stub, never a real provider)",
                    file=sys.stderr,
                    flush=True,
                )
                with Store.open(str(db)) as store:
                    seed_step_runs(store, stub, os.environ)
                    script_turns(store, stub)
                    return serve(store, settings_from(ns), ns, banner="Traceloupe demo", command="demo")
            finally:
                stub.shutdown()
                stub.server_close()
        finally:
            shutil.rmtree(temporary, ignore_errors=True)
