"""``traceloupe worker``: run queued jobs (replays, step replays, suite jobs) from a PostgreSQL store.

Start as many as you like, on this machine or any machine that reaches the database: they share
the jobs through Procrastinate, and per-provider limits (``--provider-limit`` or
``$TRACELOUPE_PROVIDER_LIMITS``, the same on every worker) hold across all of them. Ctrl+C or
SIGTERM stops a worker once its jobs in flight finish; after a ``kill -9`` its jobs are taken back
by the other workers (its process is gone: ``core.jobs.pg_liveness``); ``--stalled-after`` is how long
this worker's host may stay silent before the database counts it gone, never a judge of others.

On SQLite there is no separate worker: the jobs run in the threads of the process that queued
them (``serve``, or the CLI command itself), and this command says so and exits 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from web.cli import flags
from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from core.store import Store

SQLITE_MESSAGE = (
    "traceloupe worker: this database is SQLite, whose jobs run inside the process that queues them "
    "(`traceloupe serve`, or the command itself); separate workers need a postgresql:// database"
)


def register(parser: argparse.ArgumentParser) -> None:
    """The worker's options."""
    add_db_argument(parser)
    parser.add_argument(
        "--concurrency", type=flags.CONCURRENCY, default=4, metavar="N", help="jobs run at once (default: 4)"
    )
    parser.add_argument(
        "--provider-limit", action="append", default=[], metavar="P=N", type=flags.provider_limit,
        help="at most N calls to provider P in flight across every worker (repeatable; "
        "default: $TRACELOUPE_PROVIDER_LIMITS, e.g. openai=4,anthropic=2)",
    )  # fmt: skip
    parser.add_argument(
        "--stalled-after", type=flags.SECONDS, default=30.0, metavar="S",
        help="this worker counts as gone once its host has not answered the database for S seconds; "
        "its jobs are then taken back (a killed process's at once) (default: 30)",
    )  # fmt: skip
    parser.add_argument(
        "--max-attempts", type=flags.ATTEMPTS, default=3, metavar="N",
        help="runs of a job before it is recorded as failed (default: 3)",
    )  # fmt: skip
    parser.add_argument(
        "--rate-limit-wait", type=flags.WAIT, default=60.0, metavar="S",
        help="seconds a job may spend waiting out 429s, each for the provider's retry-after (default: 60)",
    )  # fmt: skip


def run(ns: argparse.Namespace) -> int:
    """Run a Procrastinate worker until a signal stops it."""
    import asyncio
    import logging

    from core.errors import MisuseError
    from core.jobs import JobSettings, env_limits, parse_limits
    from core.jobs.pg import ProcrastinateQueue
    from web.cli.terminal import echo
    from web.tasks import use_web_tasks

    def body(store: Store) -> int:
        if not store.db.serves_job_queue:
            echo(SQLITE_MESSAGE, file=sys.stderr)
            return 1
        limits = parse_limits(",".join(ns.provider_limit)) if ns.provider_limit else env_limits()
        if ns.concurrency < 1:
            raise MisuseError("--concurrency must be at least 1")
        settings = JobSettings(
            concurrency=ns.concurrency, provider_limits=limits, lease_seconds=ns.stalled_after,
            max_attempts=ns.max_attempts, max_rate_limit_wait=ns.rate_limit_wait, embedded_worker=False,
        )  # fmt: skip
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        logging.getLogger("procrastinate").setLevel(logging.INFO)
        use_web_tasks()
        queue = ProcrastinateQueue(store, settings)
        where = store.engine.url.render_as_string(hide_password=True)
        shown = ", ".join(f"{p}={n}" for p, n in sorted(limits.items())) or "none"
        echo(f"worker on {where}: concurrency {ns.concurrency}, provider limits: {shown}", file=sys.stderr)
        try:
            asyncio.run(queue.run_worker(install_signal_handlers=True))
        finally:
            queue.stop(wait=False)
        return 0

    return run_with_store(ns, body)
