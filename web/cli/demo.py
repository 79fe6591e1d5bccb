"""``traceloupe demo``: a demo database, a stub provider, and the dashboard over both, in one command.

1. Writes the demo data set (``web.demo_data``: every message kind, a TFROB-299
   incident, a 2,000-record trace, hostile content) as JSONL plus its attachments,
   and imports it through the store, into a temporary folder (removed on exit) or
   into ``--db PATH`` (kept; an existing demo database is reused as it is).
2. Starts the stub provider (``web.stub_provider``) on a free loopback port and points
   this process's provider variables at it: every ``*_BASE_URL`` at the stub and every
   ``*_API_KEY`` at a placeholder, so a replay from the dashboard reaches the stub and
   never a real provider, whatever keys the shell holds.
3. Serves the dashboard (loopback unless ``--allow-remote``) and prints its URL.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

from web.cli.serve import add_server_arguments, refuse_public_bind, serve, settings_from

PLACEHOLDER_KEY = "traceloupe-demo-placeholder-key"


def register(parser: argparse.ArgumentParser) -> None:
    """``--port`` and the server options; ``--db`` keeps the demo database."""
    parser.add_argument(
        "--db", type=Path, metavar="PATH", default=None,
        help="keep the demo SQLite database here (e.g. ./traceloupe-demo.db); default: a temporary folder",
    )  # fmt: skip
    add_server_arguments(parser)


def point_providers_at(base_url: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> dict[str, str]:
    """Set every provider's base URL to the stub and its key to a placeholder; returns what was set."""
    from core.replay.endpoints import PROVIDER_ENV

    values: dict[str, str] = {}
    for spec in PROVIDER_ENV.values():
        openai_style = spec.family in ("openai-chat", "openai-responses")
        values[spec.base_url_var] = f"{base_url}/v1" if openai_style else base_url
        values[spec.key_var] = PLACEHOLDER_KEY
    environ.update(values)
    return values


def free_port(preferred: int) -> int:
    """``preferred`` when it is free on 127.0.0.1, else (or for 0) any free port."""
    with socket.socket() as sock:
        try:
            if preferred:
                sock.bind(("127.0.0.1", preferred))
                return preferred
        except OSError:
            pass
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(db: Path | None) -> tuple[Path, Path, Path | None]:
    """The demo database and attachments root (built when missing), and a temporary folder to remove, if any."""
    from web import demo_data

    if db is None:
        folder = Path(tempfile.mkdtemp(prefix="traceloupe-demo-"))
        demo = demo_data.build(folder)
        return demo.db, demo.attachments, folder
    db = db.expanduser().resolve()
    attachments = db.with_name(db.stem + "-attachments")
    if not db.exists():
        db.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix="traceloupe-demo-"))
        try:
            demo_data.build(staging, db=db, attachments=attachments)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    elif not attachments.is_dir():
        demo_data.write_attachments(attachments)
    return db, attachments, None


def run(ns: argparse.Namespace) -> int:
    """Build the demo, start the stub provider, serve the dashboard until interrupted."""
    from core.store import Store
    from web.stub_provider import StubServer

    if refuse_public_bind(ns, "demo"):
        return 2
    print("traceloupe demo: building the demo database…", file=sys.stderr, flush=True)
    db, attachments, temporary = prepare(ns.db)
    stub = StubServer(0).start()
    try:
        point_providers_at(stub.base_url)
        ns.attachments_root = attachments
        ns.port = free_port(ns.port)
        print(
            f"traceloupe demo: database {db}\n"
            f"traceloupe demo: stub provider on {stub.base_url} (every *_BASE_URL points there, every *_API_KEY "
            f"is a placeholder: replays reach the stub, never a real provider)",
            file=sys.stderr,
            flush=True,
        )
        with Store.open(str(db)) as store:
            return serve(store, settings_from(ns), ns, banner="Traceloupe demo")
    finally:
        stub.shutdown()
        stub.server_close()
        if temporary is not None:
            shutil.rmtree(temporary, ignore_errors=True)
