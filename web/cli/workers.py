"""``traceloupe serve --workers N``: N server processes, each accepting on its own socket of one port.

Each worker is a fresh interpreter (spawn: no connection pool or thread is inherited) that opens
the store itself and serves exactly as a single ``serve`` does, connection limits and header
timeout included. They share nothing in memory; what must agree between them (the CSRF secret,
idempotency keys, runs) lives in the database. The parent only watches: when a worker ends or the
parent is asked to stop, every worker is stopped (SIGTERM: uvicorn finishes the requests in flight).
"""

from __future__ import annotations

import multiprocessing
import signal
import socket
from collections.abc import Sequence
from multiprocessing.connection import wait
from types import FrameType
from typing import Any

from web.settings import Settings

STOP_SECONDS = 30.0
"""How long a stopped worker may take to finish its requests before it is killed."""


class _Stop(Exception):
    """The parent was asked to stop (SIGTERM)."""


def _stop(_signum: int, _frame: FrameType | None) -> None:
    raise _Stop


def serve_worker(url: str, settings: Settings, sock: socket.socket, options: dict[str, Any]) -> None:
    """One worker: the store opened here, the dashboard served on its own socket until stopped."""
    from core.store import Store
    from web.allocator import tune_allocator
    from web.app import create_app
    from web.cli.serve import run_server
    from web.serving import server_options

    tune_allocator()  # per process: a spawned worker starts with glibc's defaults
    with Store.open(url, migrate=False) as store:
        run_server(create_app(settings, store), sock, **options, **server_options(settings))


def run_workers(url: str, settings: Settings, sockets: Sequence[socket.socket], **options: Any) -> None:
    """Serve from one process per socket (``serve.listen_group``) until interrupted or until one of them ends."""
    context = multiprocessing.get_context("spawn")
    processes = [
        context.Process(target=serve_worker, args=(url, settings, sock, options), name=f"traceloupe-worker-{i + 1}")
        for i, sock in enumerate(sockets)
    ]
    previous = signal.signal(signal.SIGTERM, _stop)
    try:
        for process in processes:
            process.start()
        wait([p.sentinel for p in processes])
    except (KeyboardInterrupt, _Stop):
        pass  # Ctrl-C reached the workers too (one process group); SIGTERM is passed on below
    finally:
        signal.signal(signal.SIGTERM, previous)
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            process.join(STOP_SECONDS)
            if process.is_alive():
                process.kill()
                process.join()
