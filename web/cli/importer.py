"""``traceloupe import PATH...``: store .json/.jsonl files (``-`` for stdin), each all-or-nothing; ``--from``
reads another format (OpenTelemetry, OpenInference...) through ``core.formats`` into the same import."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from web.cli import flags
from web.cli.db import add_db_argument, run_with_store

if TYPE_CHECKING:
    from collections.abc import Iterator

    from core.formats.registry import TraceFormat
    from core.reader import ReadLimits, Record
    from core.store import ImportSummary, Store

PROGRESS_MIN_BYTES = 8 * 1024 * 1024
"""Files smaller than this import in well under a second: no progress bar."""


def register(parser: argparse.ArgumentParser) -> None:
    """Paths, ``--db`` and the reader's limits."""
    from core.formats.registry import OWN_FORMAT, format_names
    from core.reader import DEFAULT_LIMITS, MiB

    parser.add_argument("paths", nargs="+", metavar="PATH", help=".json or .jsonl file; - reads standard input")
    add_db_argument(parser)
    parser.add_argument(
        "--max-file-mib",
        type=flags.MIB,
        default=DEFAULT_LIMITS.max_file_bytes // MiB,
        help="largest .json file accepted, in MiB (default: %(default)s)",
    )
    parser.add_argument(
        "--max-line-mib",
        type=flags.MIB,
        default=DEFAULT_LIMITS.max_record_bytes // MiB,
        help="largest .jsonl line accepted, in MiB (default: %(default)s)",
    )
    parser.add_argument(
        "--replace",
        action="store_true",
        help="a message whose (conversation_id, msg_id) is stored with other content takes the stored one's place "
        "(without it, such a file is refused)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    parser.add_argument(
        "--from",
        dest="from_format",
        choices=format_names(),
        default=OWN_FORMAT,
        help="the format of the files (default: %(default)s, our own); auto tells it from the content and says "
        "which it chose",
    )
    parser.add_argument(
        "--verify",
        action="store_true",
        help="for a provider log: rebuild every recorded request with our own builder for that provider and model, "
        "and print each difference from the recorded body, documented normalisations marked (exit 1 when a "
        "difference is not one)",
    )


class _Bar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, label: str, stream: IO[str]) -> None:
        from web.cli.terminal import printable

        self.label = printable(label)
        self.stream = stream
        self.last = -1

    def show(self, phase: str, done: int, total: int) -> None:
        percent = min(100, done * 100 // total) if total else 100
        if percent == self.last:
            return
        self.last = percent
        filled = percent * 30 // 100
        self.stream.write(f"\r{self.label} {phase:<7} [{'#' * filled}{'.' * (30 - filled)}] {percent:3d}%")
        self.stream.flush()

    def done(self) -> None:
        self.stream.write("\r\033[K")
        self.stream.flush()


def _chosen_format(path: str, name: str, quiet: bool) -> TraceFormat:
    """The format ``--from`` names, or for ``auto`` the one the file's first bytes show (said on stderr)."""
    from core.errors import InputError
    from core.formats.registry import SNIFF_BYTES, format_named, sniff
    from web.cli.terminal import echo

    if name != "auto":
        return format_named(name)
    if path == "-":
        stdin: Any = sys.stdin.buffer  # a BufferedReader: its head is peeked, not consumed
        head = stdin.peek(SNIFF_BYTES)[:SNIFF_BYTES]
    else:
        try:
            with Path(path).open("rb") as handle:
                head = handle.read(SNIFF_BYTES)
        except OSError as exc:
            raise InputError(f"cannot open: {exc.strerror or exc}", source=path) from None
    chosen = sniff(head, path)
    if not quiet:
        echo(f"{path}: read as {chosen.name} ({chosen.description})", file=sys.stderr)
    return chosen


def _import_foreign(store: Store, path: str, trace_format: TraceFormat, replace: bool) -> ImportSummary:
    """A file of another format: read into events, assembled, and stored through the same import path."""
    from core.errors import InputError
    from core.formats.importing import stream_foreign
    from web.bodies.digest_task import DIGEST_MIN_RECORDS
    from web.cli.terminal import echo

    try:
        handle = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", source=path) from None
    foreign = stream_foreign(trace_format, handle, path)
    try:
        # The file is read, assembled and stored as the store takes its records: one transaction, as ours.
        return store.import_records(
            foreign.records,
            source=path,
            replace=replace,
            store_lines=foreign.store_lines,
            digest_min_records=DIGEST_MIN_RECORDS,
        )
    finally:
        if path != "-":
            handle.close()
        for note in foreign.notes:
            echo(f"traceloupe: note: {note.line()}", file=sys.stderr)


def _verify(path: str, trace_format: TraceFormat) -> int:
    """Print the round trip of every recorded request of a provider log; the differences no normalisation
    explains."""
    from core.formats.events import ModelCall
    from core.formats.roundtrip import print_differences

    assert trace_format.read is not None  # _import_one checked the format before importing
    with Path(path).open("rb") as handle:
        calls = (event for event in trace_format.read(handle, path) if isinstance(event, ModelCall))
        return print_differences(calls, sys.stdout, every=True)


def _import_one(
    store: Store,
    path: str,
    limits: ReadLimits,
    quiet: bool,
    replace: bool,
    from_format: str = "traceloupe",
    verify: bool = False,
) -> tuple[ImportSummary, int]:
    """The file imported, and with ``verify`` the count of recorded-request differences that are not
    normalisations."""
    from core.errors import InputError
    from core.reader import BadMessages, StoreLine, read_stream
    from web.bodies.digest_task import DIGEST_MIN_RECORDS

    trace_format = _chosen_format(path, from_format, quiet)
    # Refused before anything is stored: the round trip reads the file a second time, after the import.
    if verify and not trace_format.verifiable:
        raise InputError(f"--verify takes a provider log; {trace_format.name} files keep no provider body", source=path)
    if verify and path == "-":
        raise InputError("--verify reads the file twice: name the file, not standard input", source=path)
    if trace_format.read is not None:
        summary = _import_foreign(store, path, trace_format, replace)
        return summary, _verify(path, trace_format) if verify else 0
    if path == "-":
        return store.import_path("-", limits=limits, replace=replace, digest_min_records=DIGEST_MIN_RECORDS), 0
    size = 0
    try:
        size = Path(path).stat().st_size
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", source=path) from None
    bar = (
        _Bar(Path(path).name, sys.stderr) if not quiet and sys.stderr.isatty() and size >= PROGRESS_MIN_BYTES else None
    )
    try:
        handle = Path(path).open("rb")  # noqa: SIM115 - closed in the finally below
    except OSError as exc:
        raise InputError(f"cannot open: {exc.strerror or exc}", source=path) from None
    try:
        lines: list[StoreLine] = []
        bad = BadMessages()

        def records() -> Iterator[Record]:
            # Messages are stored as they are read: the bytes read are the import's progress.
            for record in read_stream(handle, source=path, limits=limits, store_lines=lines, bad=bad, streamed=True):
                if bar is not None and record.index % 256 == 0:
                    bar.show("importing", handle.tell(), size)
                handed = [record]  # no reference kept here while the store writes it (``core.reader``)
                del record
                yield handed.pop()
            if bar is not None:
                bar.show("importing", size, size)

        summary = store.import_records(
            records(),
            source=path,
            replace=replace,
            store_lines=lines,
            bad=bad,
            digest_min_records=DIGEST_MIN_RECORDS,
        )
        return summary, 0
    finally:
        handle.close()
        if bar is not None:
            bar.done()


def _queue_digests(store: Store, conversation_ids: list[str]) -> int:
    """Queue the digest job of each large conversation imported, for ``serve`` (SQLite) or ``traceloupe worker``
    (PostgreSQL) to run: the first opening of its payload and diff pages then finds them made."""
    from core.jobs import queue_for
    from web.bodies.digest_task import queue_digests
    from web.source import StoreSource
    from web.tasks import use_web_tasks

    if not conversation_ids:
        return 0
    use_web_tasks()
    queue = queue_for(store)  # not started: this command only queues
    try:
        return len(queue_digests(queue, StoreSource(store), conversation_ids, None))
    finally:
        queue.stop()


IMPORT_REPLACED = "import.replace"
"""The audit log's action for an import that replaced stored messages (deleted the versions it replaced)."""


def _audit(store: Store, path: str, summary: ImportSummary) -> None:
    """The file's import in the audit log, as the dashboard's are: ``import.replace`` when it replaced messages."""
    from core.accounts import Accounts
    from web.cli.users import CLIENT

    action = IMPORT_REPLACED if summary.replaced else "import"
    detail = {"imported": summary.imported, "conversations": summary.conversations, "replaced": summary.replaced}
    Accounts(store).record(None, action, path, detail, CLIENT)


def run(ns: argparse.Namespace) -> int:
    """Import every path; a bad file is reported (one line per bad line) and skipped, the others still import."""
    from core.errors import InputError
    from core.reader import MiB, ReadLimits
    from core.store import ImportSummary
    from web.cli.terminal import echo

    limits = ReadLimits(max_file_bytes=ns.max_file_mib * MiB, max_record_bytes=ns.max_line_mib * MiB)

    def body(store: Store) -> int:
        failed = 0
        unexplained = 0
        totals = [0, 0, 0]
        digest_due: dict[str, None] = {}
        for path in ns.paths:
            try:
                summary, undocumented = _import_one(
                    store, path, limits, ns.quiet, ns.replace, ns.from_format, ns.verify
                )
            except InputError as exc:
                for line in ImportSummary.failure_line(exc).splitlines():
                    echo(f"traceloupe: {line}", file=sys.stderr)
                failed += 1
                continue
            if undocumented:
                echo(
                    f"traceloupe: {path}: {undocumented} difference{'s' * (undocumented != 1)} from the recorded "
                    "requests that no normalisation explains (stored all the same)",
                    file=sys.stderr,
                )
                unexplained += undocumented
            _audit(store, path, summary)
            totals[0] += summary.imported
            totals[1] += summary.conversations
            totals[2] += summary.damaged
            digest_due.update(dict.fromkeys(summary.digest_due))
            if not ns.quiet:
                echo(summary.line())
        if len(ns.paths) > 1 and not ns.quiet:
            print(
                f"total: {totals[0]} messages imported from {len(ns.paths) - failed} of {len(ns.paths)} files, "
                f"{totals[2]} damaged records"
            )
        queued = _queue_digests(store, list(digest_due))
        if queued and not ns.quiet:
            worker = "`traceloupe worker` (or `serve`)" if store.db.serves_job_queue else "`traceloupe serve`"
            echo(
                f"queued the payload and diff pages of {queued} large conversation{'s' * (queued != 1)}, "
                f"made ahead by {worker}"
            )
        return 1 if failed or unexplained else 0

    return run_with_store(ns, body, create=True)
