"""The repository: the one object the CLI, the dashboard and replay use to reach the store.

``Store.open()`` resolves the URL (``--db``, ``$TRACELOUPE_DATABASE_URL``, else
``./traceloupe.db``), applies the connection settings and upgrades an empty
database. Every method runs in its own transaction and returns plain frozen
dataclasses (``core.store.views``); nothing returned holds a connection.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from sqlalchemy import Engine, Text, bindparam, cast, func, select

from core.errors import UnknownNameError
from core.jsonio import loads
from core.messages.union import MESSAGE_ADAPTER
from core.reader import DEFAULT_LIMITS, BadMessages, ReadLimits, Record, StoreLine, read_path
from core.store import (
    api_keys,
    app_secrets,
    export_lines,
    import_lines,
    import_prepare,
    importer,
    query,
    runs,
    snippets,
    step_runs,
)
from core.store.backend import Backend, BackendName, backend_of
from core.store.engine import (
    DEFAULT_SETTINGS,
    EngineSettings,
    claim_by_key,
    make_engine,
    one_statement_write,
    read_transaction,
    resolve_url,
)
from core.store.engine import write_transaction as _write
from core.store.query import ConversationQuery, conversation_pk
from core.store.request_contexts import context_for, contexts_of
from core.store.schema import ensure_schema
from core.store.snippets import MatchWindow
from core.store.tables import (
    CONVERSATION_KINDS,
    CONVERSATIONS,
    MESSAGE_OUTLINES,
    MESSAGE_TEXTS,
    MESSAGES,
    RUNS,
    STEP_RUNS,
)
from core.store.views import (
    ConversationDetail,
    ConversationJSON,
    ConversationOutline,
    ConversationPage,
    ConversationSummary,
    ImportSummary,
    NewRun,
    RunSummary,
    RunView,
    StoredMessage,
    from_row,
)

if TYPE_CHECKING:
    from core.request_context import StoredRequest

_M = MESSAGES.c
_C = CONVERSATIONS.c
_O = MESSAGE_OUTLINES.c
_STORED_COLUMNS = (
    _M.msg_id, _M.role, _M.msg_type, _M.kind, _M.create_ts, _M.records, _M.damaged, _M.source, _M.line, _M.body,
)  # fmt: skip
"""What a StoredMessage holds of its row."""


class Store:
    """Conversations, their messages and their runs, in SQLite or PostgreSQL."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.db: Backend = backend_of(engine)
        """What differs between SQLite and PostgreSQL (``core.store.backend``)."""

    @classmethod
    def open(
        cls, url: str | None = None, *, settings: EngineSettings = DEFAULT_SETTINGS, migrate: bool = True
    ) -> Store:
        """Open the store at ``url`` (see ``resolve_url``), upgrading an empty database unless ``migrate`` is off."""
        engine = make_engine(resolve_url(url), settings)
        if migrate:
            try:
                ensure_schema(engine)
            except BaseException:
                engine.dispose()
                raise
        return cls(engine)

    @property
    def backend(self) -> BackendName:
        """``sqlite`` or ``postgresql``."""
        return self.db.name

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- import and export -------------------------------------------------

    def import_records(
        self,
        records: Iterable[Record],
        *,
        source: str,
        replace: bool = False,
        store_lines: Sequence[StoreLine] = (),
        bad: BadMessages | None = None,
        digest_min_records: int | None = None,
    ) -> ImportSummary:
        """Store one file's records all-or-nothing, as they are read; InputError (nothing written) on bad input.

        A message is identified by (conversation_id, msg_id). The same message again is skipped;
        a different one under a stored identity refuses the file, or with ``replace`` takes its place.
        ``store_lines`` are the file's other records (runs, suites...: filled by the reader as ``records`` is
        read), stored after its messages in the same transaction with the same rules (``core.store.export_lines``).
        ``bad``, the reader's, gets the messages that cannot be stored too; what it holds once the file is read
        refuses the file (InputErrors for several). ``digest_min_records``: see ``ImportSummary.digest_due``.
        """
        postgres = self.db.refuses_nul
        return importer.write(
            self.engine,
            import_prepare.prepared_messages(records, postgres=postgres, bad=bad),
            source=source,
            replace=replace,
            store_lines=lambda: import_lines.prepare_lines(store_lines, postgres=postgres),
            bad=bad,
            digest_min_records=digest_min_records,
        )

    def import_path(
        self,
        path: str | Path,
        *,
        limits: ReadLimits = DEFAULT_LIMITS,
        replace: bool = False,
        digest_min_records: int | None = None,
    ) -> ImportSummary:
        """Import a .json or .jsonl file (``-`` for standard input) all-or-nothing, with its store lines."""
        source = "<stdin>" if str(path) == "-" else str(path)
        lines: list[StoreLine] = []
        bad = BadMessages()
        records = read_path(path, limits=limits, store_lines=lines, bad=bad, streamed=True)
        return self.import_records(
            records, source=source, replace=replace, store_lines=lines, bad=bad, digest_min_records=digest_min_records
        )

    def export_texts(self, conversation_id: str | None = None) -> Iterator[str]:
        """Every stored message's JSON text as the import wrote it, conversation by conversation, in order.

        On PostgreSQL this is the text kept beside the JSONB (``message_texts``), not JSONB's own
        rendering, which reorders keys. Writing these as JSONL, then ``export_records``, and importing
        that into an empty store gives the same state.
        """
        t = MESSAGE_TEXTS.c
        stmt = (
            select(cast(_M.body, Text), t.text)
            .select_from(MESSAGES.outerjoin(MESSAGE_TEXTS, t.message_pk == _M.id))
            .order_by(_M.conversation_pk, _M.create_ts, _M.id)
        )
        with read_transaction(self.engine) as conn:
            if conversation_id is not None:
                pk = conversation_pk(conn, conversation_id)
                stmt = stmt.where(_M.conversation_pk == pk)
            for body, exact in conn.execution_options(yield_per=1000).execute(stmt):
                yield body if exact is None else bytes(exact).decode()

    def export_bodies(self, conversation_id: str | None = None) -> Iterator[dict[str, Any]]:
        """Every stored message's JSON as a value (``export_texts``, parsed)."""
        for text in self.export_texts(conversation_id):
            yield loads(text)

    def export_records(
        self, conversation_id: str | None = None, *, trace_only: bool = False
    ) -> Iterator[dict[str, Any]]:
        """Every stored record but the messages as an export line (``core.store.export_lines``): request contexts,
        runs, step runs and their steps, then (unless one conversation is asked for) suites, suite runs and their
        items; with ``trace_only``, only the request contexts (part of the trace, beside its messages)."""
        with read_transaction(self.engine) as conn:
            pk = None if conversation_id is None else conversation_pk(conn, conversation_id)
            yield from export_lines.export_lines(conn, pk, trace_only=trace_only)

    def request_context(self, conversation_id: str, turn: str | None = None) -> StoredRequest | None:
        """The request context that applies to ``turn`` (a user msg_id): the turn's own, else the conversation's;
        None when neither is stored. UnknownNameError when there is no such conversation."""
        with read_transaction(self.engine) as conn:
            return context_for(conn, conversation_pk(conn, conversation_id), turn)

    def request_contexts(self, conversation_id: str) -> list[StoredRequest]:
        """Every request context the conversation stored: its own first, then its turns'."""
        with read_transaction(self.engine) as conn:
            return contexts_of(conn, conversation_pk(conn, conversation_id))

    # -- conversations ------------------------------------------------------

    def list_conversations(self, q: ConversationQuery | None = None) -> ConversationPage:
        """One page of the conversation list (keyset pagination, search, filters; see ConversationQuery)."""
        with read_transaction(self.engine) as conn:
            return query.list_conversations(conn, q or ConversationQuery())

    def count_conversations(self, q: ConversationQuery, cap: int) -> int:
        """How many conversations ``q``'s search and filters match, counted up to ``cap``."""
        with read_transaction(self.engine) as conn:
            return query.count_conversations(conn, q, cap)

    def get_summary(self, conversation_id: str) -> ConversationSummary:
        """One conversation's figures, without reading its messages; UnknownNameError when there is none."""
        c = CONVERSATIONS.c
        with read_transaction(self.engine) as conn:
            row = conn.execute(query.summary_select().where(c.conversation_id == conversation_id)).first()
        if row is None:
            raise UnknownNameError(f"No conversation with id {conversation_id!r}.")
        return query.to_summary(row)

    def get_summaries(self, conversation_ids: Iterable[str]) -> dict[str, ConversationSummary]:
        """The figures of these conversations (those stored), by id, read in pages of ids."""
        ids = list(dict.fromkeys(conversation_ids))
        column = CONVERSATIONS.c.conversation_id
        out: dict[str, ConversationSummary] = {}
        with read_transaction(self.engine) as conn:
            for start in range(0, len(ids), query.MAX_PAGE):
                chunk = ids[start : start + query.MAX_PAGE]
                for row in conn.execute(query.summary_select().where(column.in_(chunk))).all():
                    summary = query.to_summary(row)
                    out[summary.conversation_id] = summary
        return out

    def match_windows(self, conversation_ids: Sequence[str], needle: str, reach: int) -> dict[str, MatchWindow]:
        """Where ``needle`` first matches in each of these conversations, with ``reach`` characters around it."""
        return snippets.match_windows(self.engine, conversation_ids, needle, reach)

    def iter_conversations(self, q: ConversationQuery | None = None) -> Iterator[ConversationSummary]:
        """Every conversation matching ``q``, page after page."""
        q = q or ConversationQuery(limit=query.MAX_PAGE)
        while True:
            page = self.list_conversations(q)
            yield from page.items
            if page.next_cursor is None:
                return
            q = replace(q, cursor=page.next_cursor)

    def _read_conversation(
        self, conversation_id: str, *columns: Any, outlines: bool = False
    ) -> tuple[ConversationSummary, Sequence[Any]]:
        """The one read of a conversation: its figures and ``columns`` of each of its messages in order
        (``create_ts``, then import position), in one snapshot; ``outlines`` joins each message's outline
        (None where it has none). UnknownNameError if there is no such conversation."""
        stmt = select(*columns).where(_M.conversation_pk == bindparam("pk")).order_by(_M.create_ts, _M.id)
        if outlines:
            stmt = stmt.select_from(MESSAGES.outerjoin(MESSAGE_OUTLINES, _O.message_pk == _M.id))
        with read_transaction(self.engine) as conn:
            row = conn.execute(query.summary_select().where(_C.conversation_id == conversation_id)).first()
            if row is None:
                raise UnknownNameError(f"no conversation {conversation_id!r}")
            return query.to_summary(row), conn.execute(stmt, {"pk": row.id}).all()

    def get_conversation(self, conversation_id: str) -> ConversationDetail:
        """A conversation with all its messages, typed through the Message union; UnknownNameError if absent."""
        summary, rows = self._read_conversation(conversation_id, *_STORED_COLUMNS)
        messages = tuple(
            from_row(StoredMessage, r, conversation_id=conversation_id, message=MESSAGE_ADAPTER.validate_python(r.body))
            for r in rows
        )
        return ConversationDetail(summary=summary, messages=messages)

    def get_conversation_json(self, conversation_id: str) -> ConversationJSON:
        """A conversation's figures and its messages' JSON text, unparsed; UnknownNameError if absent.

        The body is cast to text in SQL, so neither the JSON column's deserialiser nor psycopg's
        JSONB loader runs: on PostgreSQL the text is JSONB's own rendering (keys in JSONB order).
        """
        summary, rows = self._read_conversation(conversation_id, cast(_M.body, Text))
        return ConversationJSON(summary=summary, bodies=tuple(body for (body,) in rows))

    def get_conversation_outline(self, conversation_id: str) -> ConversationOutline | None:
        """A conversation's figures and its messages' outlines, in the order of ``get_conversation_json``.

        None when any of its messages has no outline (imported before revision 0003 and not outlined
        by ``db upgrade``): the caller then reads the JSON whole. UnknownNameError if there is no such
        conversation.
        """
        summary, found = self._read_conversation(conversation_id, _M.id, _O.outline, outlines=True)
        if any(outline is None for _, outline in found):
            return None
        return ConversationOutline(summary=summary, outlines=tuple((pk, text) for pk, text in found))

    def get_bodies(self, rows: Sequence[int]) -> tuple[str, ...]:
        """The stored JSON text of the messages with these row ids (one conversation's), in the order given."""
        if not rows:
            return ()
        wanted = set(rows)
        with read_transaction(self.engine) as conn:
            conversation = select(_M.conversation_pk).where(_M.id == rows[0]).scalar_subquery()
            stmt = select(_M.id, cast(_M.body, Text)).where(_M.conversation_pk == conversation)
            found = {pk: body for pk, body in conn.execute(stmt) if pk in wanted}
        missing = wanted - found.keys()
        if missing:
            raise UnknownNameError(f"no stored message with row id {min(missing)}")
        return tuple(found[row] for row in rows)

    def read_spans(self, spans: Iterable[tuple[int, int, int]]) -> list[bytes]:
        """Byte ranges ``(row, start, end)`` of stored messages' JSON text (the text outlines point into), in order.

        One read transaction. SQLite reads ``body`` with incremental blob I/O, PostgreSQL takes
        substrings of ``message_texts`` (stored uncompressed): either way only the pages or chunks
        that hold a range are read, so a page of a 10,000-record trace costs the bytes it shows, not
        the 16 MB around them. A stored text never changes (imports only add), so ranges from an
        outline read earlier stay valid.
        """
        wanted = list(spans)
        with read_transaction(self.engine) as conn:
            return self.db.read_spans(conn, wanted)

    def counts(self) -> dict[str, int]:
        """Row counts of each table (for ``db`` status and tests)."""
        with read_transaction(self.engine) as conn:
            return {
                t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
                for t in (CONVERSATIONS, MESSAGES, CONVERSATION_KINDS, RUNS, STEP_RUNS)
            }

    # -- runs ---------------------------------------------------------------

    def start_run(self, new: NewRun) -> RunView:
        """Record a run as started; a repeated idempotency key returns the run already recorded."""
        return self.claim_run(new)[0]

    def claim_run(self, new: NewRun) -> tuple[RunView, bool]:
        """As ``start_run``, and whether this call recorded the run: True for exactly one caller per key.

        The unique key column is the guarantee, also across processes: a concurrent claim
        that loses the race on the constraint gets the winner's run and False.
        """
        return claim_by_key(
            self.engine,
            lambda conn: runs.claim_run(conn, new),
            new.idempotency_key,
            runs.run_by_key,
            writing=runs.claim_writing(self.db),
        )

    def finish_run(self, run_id: str, **ending: Unpack[runs.RunEnding]) -> RunView:
        """Record how a run ended (any RunStatus but ``running``), with the parsed reply when there is one.

        ``request_body``: the body the run started with, when the caller holds it (it is not read back then).
        """
        with one_statement_write(self.engine) as conn:
            return runs.finish_run(conn, run_id, **ending)

    def get_run(self, run_id: str) -> RunView:
        """One run by id; UnknownNameError if there is none."""
        with read_transaction(self.engine) as conn:
            return runs.get_run(conn, run_id)

    def list_runs(
        self, conversation_id: str | None = None, *, limit: int = 100, cursor: str | None = None
    ) -> tuple[tuple[RunView, ...], str | None]:
        """Runs newest first (optionally of one conversation) and the cursor of the next page."""
        with read_transaction(self.engine) as conn:
            return runs.list_runs(conn, conversation_id=conversation_id, limit=limit, cursor=cursor)

    def get_run_summary(self, run_id: str) -> RunSummary:
        """One run without its request and response bodies; UnknownNameError if there is none."""
        with read_transaction(self.engine) as conn:
            return runs.get_run_summary(conn, run_id)

    def list_run_summaries(self, conversation_id: str, *, limit: int = 100) -> tuple[RunSummary, ...]:
        """A conversation's newest runs without their bodies (an unknown conversation has none)."""
        with read_transaction(self.engine) as conn:
            return runs.list_run_summaries(conn, conversation_id, limit=limit)

    # -- shared secrets and keys --------------------------------------------

    @property
    def api_keys(self) -> api_keys.ApiKeys:
        """The API keys (``core.store.api_keys``): made once, stored as hashes, verified in constant time."""
        return api_keys.ApiKeys(self.engine)

    def shared_secret(self, name: str) -> str:
        """A secret every process on this database shares (made by the first to ask); never logged or shown."""
        with _write(self.engine) as conn:
            return app_secrets.shared_secret(conn, name)

    # -- step runs ----------------------------------------------------------

    def claim_step_run(self, new: step_runs.NewStepRun) -> tuple[step_runs.StepRunView, bool]:
        """Record a step run as started; True for exactly one caller per idempotency key."""
        return claim_by_key(
            self.engine,
            lambda conn: step_runs.claim_step_run(conn, new),
            new.idempotency_key,
            step_runs.step_run_by_key,
        )

    def add_step(self, run_id: str, step: step_runs.StepView) -> None:
        """Record one step of a running step run (kept whatever happens next)."""
        with _write(self.engine) as conn:
            step_runs.add_step(conn, run_id, step)

    def clear_steps(self, run_id: str) -> int:
        """Delete the steps of a running step run so it can start again (a worker died midway); how many."""
        with _write(self.engine) as conn:
            return step_runs.clear_steps(conn, run_id)

    def finish_step_run(
        self,
        run_id: str,
        *,
        status: step_runs.StepRunStatus,
        reason: str | None = None,
        diverged_at: str | None = None,
        error: str | None = None,
    ) -> step_runs.StepRunView:
        """Record how a step run ended."""
        with _write(self.engine) as conn:
            return step_runs.finish_step_run(
                conn, run_id, status=status, reason=reason, diverged_at=diverged_at, error=error
            )

    def get_step_run(self, run_id: str) -> step_runs.StepRunView:
        """One step run with its steps; UnknownNameError if there is none."""
        with read_transaction(self.engine) as conn:
            return step_runs.get_step_run(conn, run_id)

    def list_step_runs(
        self, conversation_id: str | None = None, *, limit: int = 100
    ) -> tuple[step_runs.StepRunView, ...]:
        """Step runs newest first, optionally of one conversation."""
        with read_transaction(self.engine) as conn:
            return step_runs.list_step_runs(conn, conversation_id=conversation_id, limit=limit)
